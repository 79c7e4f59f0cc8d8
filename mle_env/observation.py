"""Observations: what the agent sees after ``reset`` and after every ``step``.

Every observation carries every key (a ``gymnasium.spaces.Dict``):

==============  =============================================================================================
key             meaning
==============  =============================================================================================
``task``        The task: description.md, the sandbox's paths, the submission format, the metric and its
                direction, the budget and the Python packages available. The same text at every step.
``files``       The public data files with their sizes (folders of many files are summarised).
``action``      What the last step did: ``reset``, ``shell``, ``python``, ``validate``, ``score_dev``,
                ``submit`` or ``invalid`` (a malformed action); ``fork`` in a fork's first observation.
``stdout``      Standard output of the last shell/python action (``validate``: the verdict; ``score_dev``:
                the dev score).
``stderr``      Standard error of the last shell/python action.
``exit_code``   Its exit status (python: 0 ok, 1 exception). 0 after reset, submit and a valid submission;
                1 after an invalid submission or a malformed action; -1 when the action timed out.
``timed_out``   1 if the action was killed at its timeout, else 0.
``message``     What the environment has to say: why an action was malformed, the validation verdict,
                "the python interpreter was restarted", the budget running out. Empty when all is well.
``time_left``   Seconds of the episode's wall-clock budget left (counted from ``reset``).
``steps_left``  Steps left, or -1 when there is no step limit.
==============  =============================================================================================

``stdout`` and ``stderr`` keep ``max_output`` bytes of what the program wrote: its start and its end, with
a ``[... N bytes of output cut ...]`` marker saying how much of the middle was dropped.

``exit_code``, ``time_left`` and ``steps_left`` are 0-d numpy arrays (as their ``Box`` spaces require), which
``json.dumps`` refuses; :func:`to_jsonable` (also ``mle_env.to_jsonable``) turns an observation into plain
``str``/``int``/``float`` values for logging, HTTP or an LLM prompt::

    >>> import json, mle_env
    >>> json.dumps(mle_env.to_jsonable(obs))   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from mle_env.competition.spec import CompetitionSpec
from mle_env.spaces import UnicodeText
from mle_env.units import format_bytes, human_bytes

TEXT_LIMIT = 1_000_000
_MARKER_ROOM = 100
_LISTED_FILES = 40
_KEY_PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "lightgbm", "xgboost", "catboost", "torch",
                 "torchvision", "tensorflow", "pillow", "opencv-python", "transformers", "statsmodels")


def observation_space(max_output: int) -> spaces.Dict:
    """The observation space (see the module docstring)."""
    output = UnicodeText(max_output + 2 * _MARKER_ROOM)  # room for the cut marker
    return spaces.Dict({
        "task": UnicodeText(TEXT_LIMIT),
        "files": UnicodeText(TEXT_LIMIT),
        "action": UnicodeText(16),
        "stdout": output,
        "stderr": output,
        "exit_code": spaces.Box(low=-(2**31), high=2**31 - 1, shape=(), dtype=np.int64),
        "timed_out": spaces.Discrete(2),
        "message": UnicodeText(TEXT_LIMIT),
        "time_left": spaces.Box(low=0.0, high=1e9, shape=(), dtype=np.float64),
        "steps_left": spaces.Box(low=-1, high=2**62, shape=(), dtype=np.int64),
    })


def make_observation(
    *, task: str, files: str, action: str, time_left: float, steps_left: int, stdout: str = "", stderr: str = "",
    exit_code: int = 0, timed_out: bool = False, message: str = "", max_output: int,
) -> dict[str, Any]:
    """One observation with fresh arrays (Gymnasium requires that observations share no mutable data)."""
    return {
        "task": task,
        "files": files,
        "action": action,
        # the sandbox already cut its output to max_output bytes with an exact marker; this only bounds
        # anything else (the margin leaves the sandbox's cut untouched)
        "stdout": clip(stdout, max_output + _MARKER_ROOM),
        "stderr": clip(stderr, max_output + _MARKER_ROOM),
        "exit_code": np.array(exit_code, dtype=np.int64),
        "timed_out": int(timed_out),
        "message": message[:TEXT_LIMIT],
        "time_left": np.array(max(0.0, time_left), dtype=np.float64),
        "steps_left": np.array(steps_left, dtype=np.int64),
    }


def to_jsonable(obs: Any) -> Any:
    """A copy of ``obs`` (an observation, or any nesting of dicts, lists and numpy values) that ``json.dumps``
    accepts: numpy arrays and scalars become Python numbers or lists (a 0-d array a plain number), tuples
    lists, dict keys strings, paths strings; bools, numbers, strings and None are kept as they are.

        >>> import numpy as np
        >>> to_jsonable({"exit_code": np.array(0), "time_left": np.array(12.5), "stdout": "ok", "timed_out": 0})
        {'exit_code': 0, 'time_left': 12.5, 'stdout': 'ok', 'timed_out': 0}

    Raises:
        TypeError: a value of another type (nothing an observation holds).
    """
    if obs is None or isinstance(obs, (str, bool, int, float)):
        return obs
    if isinstance(obs, np.ndarray):
        return obs.tolist()
    if isinstance(obs, np.generic):
        return obs.item()
    if isinstance(obs, Mapping):
        return {str(k): to_jsonable(v) for k, v in obs.items()}
    if isinstance(obs, (list, tuple)):
        return [to_jsonable(v) for v in obs]
    if isinstance(obs, Path):
        return str(obs)
    raise TypeError(f"to_jsonable: cannot turn a {type(obs).__name__} into JSON")


def clip(text: str, limit: int) -> str:
    """Keep the first and last ``limit / 2`` characters of ``text``, marking the cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text[half:-half].encode("utf-8", "replace"))
    return f"{text[:half]}\n[... {cut} bytes of output cut ...]\n{text[-half:]}"


def list_files(public: Path) -> str:
    """``data/`` as the agent sees it: files with sizes; folders of many files summarised."""
    lines = []
    for entry in sorted(public.iterdir()):
        if entry.is_dir():
            files = [p for p in entry.rglob("*") if p.is_file()]
            total = sum(p.stat().st_size for p in files)
            examples = ", ".join(p.name for p in sorted(files)[:3])
            lines.append(f"data/{entry.name}/  {len(files)} files, {format_bytes(total)} (e.g. {examples})")
        else:
            lines.append(f"data/{entry.name}  {format_bytes(entry.stat().st_size)}")
        if len(lines) >= _LISTED_FILES:
            lines.append("...")
            break
    return "\n".join(lines)


def submission_format(spec: CompetitionSpec, header: list[str]) -> str:
    sub = spec.submission
    kinds = {
        "probability": "a probability in [0, 1]",
        "number": "a number",
        "integer": "a whole number",
        "label": "one of the allowed labels",
        "text": "text",
    }
    lines = [
        f"- A CSV with the header `{','.join(header)}` and one row per test `{sub.id_column}` "
        f"(see data/{sub.sample_submission}).",
        f"- Each target cell holds {kinds[sub.kind]}"
        + (f" from {list(sub.allowed_values)[:12]}" if sub.allowed_values is not None else "")
        + (f" in [{sub.value_range[0]:g}, {sub.value_range[1]:g}]" if sub.value_range is not None else "")
        + ("; the class probabilities of each row must sum to 1" if sub.rows_sum_to_one else "") + ".",
    ]
    return "\n".join(lines)


def task_text(
    spec: CompetitionSpec, *, workdir: str, header: list[str], time_limit: float, step_limit: int | None,
    action_timeout: float, packages: Mapping[str, str], disk: int | None = None, endpoint: bool = False,
    description: str | None = None,
) -> str:
    """The task statement given at reset (and repeated in every observation). ``endpoint``: the sandbox
    serves MLE-bench's validation endpoint and files (``instructions.txt``, ``validate_submission.sh``).
    ``description``: the text it starts with (default: the competition's description.md)."""
    direction = "lower is better" if spec.metric.lower_is_better else "higher is better"
    steps = f"{step_limit} steps" if step_limit is not None else "no step limit"
    space = (f"You may write up to {human_bytes(disk)} in all (the working directory and temporary folders); "
             "an action that writes more is stopped." if disk is not None else "There is no disk limit.")
    lower = {k.lower(): (k, v) for k, v in packages.items()}
    key_packages = ", ".join(f"{lower[p][0]} {lower[p][1]}" for p in _KEY_PACKAGES if p in lower)
    endpoint_note = (f"\n  From a program, the same check: `{workdir}/validate_submission.sh FILE` or\n"
                     f"  `curl -X POST -F file=@FILE http://localhost:5000/validate` (MLE-bench's endpoint; "
                     f"`{workdir}/instructions.txt` repeats this task)." if endpoint else "")
    description = spec.description() if description is None else description
    return f"""{description.rstrip()}

# Your environment
- Working directory: {workdir}. Paths below are relative to it.
- `./data/` (read-only) holds the competition files listed under `files`.
- Write your predictions to `./submission/submission.csv`. That file is graded when you submit or when the
  budget runs out.
- `./code/` and `./logs/` are yours to use.

# Submission format
{submission_format(spec, header)}

# Metric
{spec.metric.name} ({direction}). You will not see test-set scores: hold out part of the training data
to measure your own progress.

# Actions
- `{{"type": "shell", "code": "...", "timeout": seconds}}`: run a bash command.
- `{{"type": "python", "code": "...", "timeout": seconds}}`: run code in one persistent Python
  interpreter (variables and imports carry over between actions, like notebook cells).
- `{{"type": "validate"}}`: check `./submission/submission.csv`; the answer is "valid" or what is wrong.{endpoint_note}
- `{{"type": "submit"}}`: end the episode and have the submission graded.

# Budget
{time_limit:.0f} seconds of wall-clock time from the start, {steps}; each action is stopped after
{action_timeout:.0f} seconds unless it asks for another timeout. {space}

# Python packages
{key_packages or "(none of the usual ML packages)"}; {len(packages)} distributions in all.
"""
