"""The offline baseline: a scripted agent that needs no LLM.

It looks at the data, copies mlkit into the sandbox, profiles the task and trains the usual strong
default for its data type, checks the submission with ``validate`` and submits:

- tabular: histogram gradient boosting (numbers imputed, categories ordinal-encoded; log target for RMSLE);
- text: word and character TF-IDF with a linear model;
- image: pixels, PCA to 50 dimensions, an RBF support-vector machine.

If a pipeline fails or its submission is invalid, the next one for that data type is tried; as a last
resort the sample submission is submitted, so the episode always ends with a gradable file.
"""

from __future__ import annotations

from typing import Any

from mle_env.agents.scripted import (
    Script,
    ScriptedPolicy,
    budget_timeout,
    install_mlkit,
    last_json,
    profile_action,
    program,
)

INSPECT = 'ls -la data | head -40; for f in data/*.csv; do echo "== $f"; head -n 3 "$f" | cut -c1-300; done'


def default_configs(profile: dict[str, Any], seed: int | None = None) -> list[dict[str, Any]]:
    """Pipelines to try in order for the profiled task (the first is the one that usually wins); ``seed``
    (when given) sets each one's validation split and model random_state (mlkit's default: 0)."""
    if profile["data_type"] == "text":
        configs = [{"family": "linear", "params": {"C": 4.0}},
                   {"family": "linear", "params": {"C": 1.0, "chars": False}}]
    elif profile["data_type"] == "image":
        configs = [{"family": "svm", "params": {"C": 5.0, "pca": 50}},
                   {"family": "linear", "params": {"C": 0.1, "pca": 50}}]
    else:
        configs = [{"family": "hgb", "params": {}}, {"family": "forest", "params": {}},
                   {"family": "linear", "params": {}}]
    if seed is not None:
        for config in configs:
            config["params"]["seed"] = seed
    return configs


def run_program(source: str, path: str, timeout: float) -> dict[str, Any]:
    """A shell action that saves ``source`` to ``path`` and runs it."""
    return {"type": "shell", "timeout": timeout,
            "code": f"cat > {path} <<'MLE_ENV_EOF'\n{source}MLE_ENV_EOF\npython3 {path}"}


class BaselinePolicy(ScriptedPolicy):
    """See the module docstring. ``pipeline_timeout`` caps each training run (seconds).

    ``seed`` picks the validation split and the models' random_state (mlkit's ``seed``). It defaults to the
    episode's seed (reset's ``info["seed"]``; the CLI and evaluations also pass the episode's seed as this
    option), else 0: two seeds give two different episodes, the same seed the same one.
    """

    def __init__(self, pipeline_timeout: float = 900.0, seed: int | None = None) -> None:
        super().__init__()
        self.pipeline_timeout = pipeline_timeout
        self.seed = seed

    def episode_seed(self, info: dict[str, Any]) -> int:
        """The seed of this episode's pipelines: the option, else reset's info, else 0."""
        seed = self.seed if self.seed is not None else info.get("seed")
        return int(seed) if seed is not None else 0

    def script(self, obs: dict[str, Any], info: dict[str, Any]) -> Script:
        obs = yield {"type": "shell", "code": INSPECT, "timeout": 60}
        obs = yield install_mlkit()
        profile = None
        if int(obs["exit_code"]) == 0:
            obs = yield profile_action(info)
            profile = last_json(obs["stdout"]) if int(obs["exit_code"]) == 0 else None
        seed = self.episode_seed(info)
        self.annotate(profile=profile, seed=seed)
        for n, config in enumerate(default_configs(profile, seed) if profile else []):
            source = program(profile, config, "submission/submission.csv")
            obs = yield run_program(source, f"code/baseline_{n}.py", budget_timeout(obs, self.pipeline_timeout))
            if int(obs["exit_code"]) != 0:
                continue
            obs = yield {"type": "validate"}
            if obs["stdout"] == "valid":
                return
        sample = info["submission"]["sample"]
        obs = yield {"type": "shell", "code": f"cp data/{sample} submission/submission.csv"}
        yield {"type": "validate"}
