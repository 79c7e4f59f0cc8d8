"""mle-env episodes as TRL environments: ``GRPOTrainer(..., environment_factory=...)`` (``pip install
'mle-env[trl]'``).

TRL (>= 1.16) builds one environment per rollout by calling the factory with no arguments, turns every
public method of the environment's class except ``reset`` into a tool (its schema is read from the type
hints and the ``Args:`` section of the docstring), calls ``reset(**row)`` with the dataset row before each
rollout (a string it returns is appended to the row's last prompt message), runs the tools the model calls
and finally passes the instances to the reward functions as ``environments=``.

    >>> from trl import GRPOConfig, GRPOTrainer
    >>> from mle_env.integrations.trl import environment_factory, make_dataset, mle_reward
    >>> trainer = GRPOTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=mle_reward,
    ...                       train_dataset=make_dataset(["insults"], seeds=range(8)),
    ...                       environment_factory=environment_factory(sandbox="local", time_limit=600),
    ...                       args=GRPOConfig(max_completion_length=4096))  # doctest: +SKIP

- :class:`MLEToolEnv`: one episode at a time over :class:`~mle_env.env.MLEEnv`; tools ``shell``, ``python``,
  ``validate`` and ``submit`` answer :func:`~mle_env.text_interface.render_result` text, the same text the
  bundled agents read. After the episode has ended a tool says so and runs nothing. ``reward``, ``grade`` and
  ``status`` stay readable until the next ``reset``.
- :func:`environment_factory`: the zero-argument factory TRL wants, with the competition and
  ``mle_env.make`` options fixed.
- :func:`mle_reward`: the reward function: each rollout's episode return; an episode still running when its
  rollout ends (the model stopped calling tools) is submitted then, so the submission present is graded, as
  when the budget runs out.
- :func:`make_dataset`: a prompt dataset with one row per competition and seed.

A dataset row may carry ``competition`` (an id or alias; else the factory's) and ``seed``. Sandboxes are
removed when an episode ends, at the next ``reset``, when the instance is garbage-collected, or at exit.
"""

from __future__ import annotations

import functools
import numbers
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import mle_env
from mle_env.competition.registry import get_spec, select_competitions
from mle_env.config import EnvConfig
from mle_env.errors import ConfigError
from mle_env.text_interface import SYSTEM_PROMPT, render_result, render_task

DEFAULT_USER_PROMPT = "Solve this competition with your tools, then submit."
#: the bundled agents' system prompt without its plain-text fallback, which TRL does not parse
TOOLS_SYSTEM_PROMPT = SYSTEM_PROMPT.split(" If you cannot call tools")[0]
_NOT_STARTED = "no episode is running: reset() must be called before the tools"


class MLEToolEnv:
    """One mle-env episode per rollout, with the four actions as tool methods (see the module docstring).

    Args:
        competition: competition id or alias used when the dataset row names none.
        output_chars: characters of stdout and of stderr shown to the model per tool result.
        **make_options: options of ``mle_env.make`` (``sandbox``, ``reward``, ``time_limit``, ``step_limit``, ...),
            validated here, before any sandbox starts.
    """

    def __init__(self, competition: str | None = None, *, output_chars: int = 2_000, **make_options: Any) -> None:
        EnvConfig.from_options({k: v for k, v in make_options.items() if k != "render_mode"})
        if competition is not None:
            get_spec(competition)  # an unknown id fails now, not at the first rollout
        if not isinstance(output_chars, int) or isinstance(output_chars, bool) or output_chars < 1:
            raise ConfigError(f"output_chars must be a positive int; got {output_chars!r}")
        self.competition = competition
        self.output_chars = output_chars
        self.make_options = dict(make_options)
        self._env: Any = None
        self._env_competition: str | None = None
        self._finalizer: weakref.finalize | None = None
        self._running = False
        self._status: str | None = None
        self._return = 0.0
        self._info: dict[str, Any] = {}

    # -- read by reward functions and users (properties, so TRL does not make them tools) ---------------------
    @property
    def env(self) -> Any:
        """The underlying ``mle_env.make`` environment (None before the first ``reset``)."""
        return self._env

    @property
    def status(self) -> str | None:
        """``info["status"]`` of the episode: ``running``, how it ended (``submitted``, ``truncated``, ...), or
        None before the first ``reset``."""
        return self._status

    @property
    def reward(self) -> float | None:
        """The episode's return (the sum of its step rewards: the medal tier by default) once it has ended;
        None while it runs or before it started."""
        return None if self._running or self._status is None else self._return

    @property
    def grade(self) -> dict[str, Any] | None:
        """The GradeReport (as a dict, ``info["grade"]``) of the ended episode; None while it runs or after an
        infrastructure error."""
        return None if self._running else self._info.get("grade")

    @property
    def info(self) -> dict[str, Any]:
        """The ``info`` dict of the last reset or step."""
        return self._info

    # -- TRL's protocol -------------------------------------------------------------------------------------------
    def reset(self, **kwargs: Any) -> str:
        """Start a new episode and return the task text for the prompt.

        ``kwargs`` is the dataset row: ``competition`` (id or alias) and ``seed`` are used when present, the
        rest is ignored. The previous episode, if still running, is abandoned (its sandbox removed).
        """
        competition = kwargs.get("competition") or self.competition
        if competition is None:
            raise ConfigError("no competition: pass competition= to environment_factory or give the dataset "
                              "a 'competition' column")
        if not isinstance(competition, str):
            raise ConfigError(f"the row's competition must be an id or alias string; got {competition!r}")
        seed = _seed(kwargs.get("seed"))
        self._running, self._status, self._return, self._info = False, None, 0.0, {}  # until this reset succeeds
        cid = get_spec(competition).id
        if self._env is None or cid != self._env_competition:
            self._close()
            self._env, self._env_competition = mle_env.make(cid, **self.make_options), cid
            self._finalizer = weakref.finalize(self, self._env.close)
        obs, info = self._env.reset(seed=seed)
        self._running, self._status, self._return, self._info = True, "running", 0.0, info
        return _after_prompt(kwargs.get("prompt")) + render_task(obs)

    # -- tools: the docstrings are the schemas the model reads (transformers' get_json_schema) ------------------
    def shell(self, code: str, timeout: float | None = None) -> str:
        """Run a bash command in the working directory; returns stdout, stderr, the exit code and the budget left.

        Args:
            code: the bash command or script to run
            timeout: seconds before it is stopped (optional)
        """
        return self._step(_code_action("shell", code, timeout))

    def python(self, code: str, timeout: float | None = None) -> str:
        """Run Python code in the persistent interpreter (variables carry over); a last expression is printed.

        Args:
            code: the Python code to run
            timeout: seconds before it is stopped (optional)
        """
        return self._step(_code_action("python", code, timeout))

    def validate(self) -> str:
        """Check ./submission/submission.csv against the required format; answers 'valid' or what is wrong."""
        return self._step({"type": "validate"})

    def submit(self) -> str:
        """End the episode and have ./submission/submission.csv scored on the hidden test set."""
        return self._step({"type": "submit"})

    # -- internals --------------------------------------------------------------------------------------------------
    def _step(self, action: dict[str, Any]) -> str:
        if self._env is None or self._status is None:
            return _NOT_STARTED
        if not self._running:
            return f"the episode has ended ({self._status}); no more actions run"
        obs, reward, terminated, truncated, info = self._env.step(action)
        self._return += float(reward)
        self._info = info
        self._status = info.get("status", "running")
        text = render_result(obs, self.output_chars)
        if terminated or truncated:
            self._running = False
            text += f"\nthe episode has ended ({self._status}); no more actions run"
        return text

    def _finish(self) -> float:
        """End a running episode by submitting (the submission present is graded); returns the return."""
        if self._running:
            self._step({"type": "submit"})
        return self._return if self._status is not None else 0.0

    def _close(self) -> None:
        """Remove the sandbox of a running episode (the episode is abandoned) and drop the environment."""
        if self._finalizer is not None:
            self._finalizer()  # calls env.close() once
            self._finalizer = None
        self._env, self._env_competition, self._running = None, None, False

    def __enter__(self) -> MLEToolEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()


def environment_factory(competition: str | None = None, *, sandbox: str = "auto", reward: str | Callable = "medal",
                        output_chars: int = 2_000, **make_options: Any) -> Callable[[], MLEToolEnv]:
    """A zero-argument callable that builds an :class:`MLEToolEnv`, for ``GRPOTrainer(environment_factory=...)``.

    Args:
        competition: competition id or alias for rows without a ``competition`` column.
        sandbox: ``"docker"``, ``"local"``, ``"unisolated"`` or ``"auto"`` (see ``mle_env.make``).
        reward: ``mle_env.make``'s reward (``"medal"`` by default: the medal tier 0..3).
        output_chars: characters of stdout and of stderr shown per tool result.
        **make_options: any other ``mle_env.make`` option (``time_limit``, ``step_limit``, ``memory``, ...).

    Raises:
        ConfigError: a bad option; UnknownCompetition: an unknown competition (both before any sandbox starts).
    """
    options = {"sandbox": sandbox, "reward": reward, **make_options}
    MLEToolEnv(competition, output_chars=output_chars, **options)  # validate now, in the caller's frame
    return functools.partial(MLEToolEnv, competition, output_chars=output_chars, **options)


def mle_reward(completions: Sequence[Any], environments: Sequence[Any] | None = None, **kwargs: Any) -> list[float]:
    """TRL reward function: each rollout's episode return (the medal tier 0..3 with ``reward="medal"``).

    An episode still running is ended first by submitting, so the submission present is graded (as when the
    budget runs out); an episode lost to an infrastructure error scores 0.

    Raises:
        ValueError: no environments were passed (the trainer has no ``environment_factory``), or not one per
            completion.
    """
    if environments is None:
        raise ValueError("mle_reward needs the rollouts' environments: give GRPOTrainer "
                         "environment_factory=mle_env.integrations.trl.environment_factory(...)")
    if len(environments) != len(completions):
        raise ValueError(f"mle_reward got {len(environments)} environments for {len(completions)} completions")
    rewards = []
    for environment in environments:
        if not isinstance(environment, MLEToolEnv):
            raise ValueError(f"mle_reward works with MLEToolEnv environments; got {type(environment).__name__}")
        rewards.append(environment._finish())
    return rewards


def make_dataset(competitions: str | Iterable[str], seeds: Iterable[int] = (0,), *,
                 system_prompt: str = TOOLS_SYSTEM_PROMPT, user_prompt: str = DEFAULT_USER_PROMPT) -> Any:
    """A ``datasets.Dataset`` of conversational prompts, one row per (competition, seed), with the columns
    ``prompt``, ``competition`` and ``seed`` that :meth:`MLEToolEnv.reset` reads; the task text is appended
    to the user message at reset. ``competitions``: ids, aliases or sets (``practice-train``,
    ``practice-eval``, ``practice-tabular``...; see :func:`mle_env.competition.registry.task_set`)."""
    from datasets import Dataset

    seeds = list(seeds)
    ids = select_competitions([competitions] if isinstance(competitions, str) else list(competitions))
    rows = [{"prompt": [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_prompt}],
             "competition": cid, "seed": int(seed)} for cid in ids for seed in seeds]
    if not rows:
        raise ValueError("make_dataset needs at least one competition and one seed")
    return Dataset.from_list(rows)


def _code_action(kind: str, code: Any, timeout: Any) -> dict[str, Any]:
    action: dict[str, Any] = {"type": kind, "code": code}
    if timeout is not None:
        action["timeout"] = timeout  # a bad one is the env's malformed-action observation, as a bad code is
    return action


def _seed(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise ConfigError(f"the row's seed must be an integer or None; got {value!r}")


def _after_prompt(prompt: Any) -> str:
    """What goes between the row's last message and the task: TRL appends the task to the message as is."""
    content = prompt[-1].get("content") if isinstance(prompt, list) and prompt and isinstance(prompt[-1], Mapping) \
        else prompt
    if isinstance(content, str) and content and not content.endswith("\n\n"):
        return "\n" if content.endswith("\n") else "\n\n"
    return ""
