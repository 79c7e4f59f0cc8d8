"""Which description an episode's task starts with (``task_text``, an option of ``mle_env.make``):

- ``"original"`` (default): the competition's ``description.md``;
- ``"obfuscated"``: its ``description_obfuscated.md``, the same data, submission format and metric with
  nothing that names the competition (for contamination studies, like MLE-bench's familiarity experiment);
- ``"mlebench:PATH"`` / ``"mlebench-obfuscated:PATH"``: MLE-bench's own ``description.md`` /
  ``description_obfuscated.md``, read at run time from the user's checkout of MLE-bench at PATH (its root,
  or its ``mlebench/competitions`` folder; nothing of it ships with mle-env), so that results are comparable
  with MLE-bench's task text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import ConfigError

TASK_TEXTS = ("original", "obfuscated")
MLEBENCH_TEXTS = {"mlebench": "description.md", "mlebench-obfuscated": "description_obfuscated.md"}
OBFUSCATED_FILE = "description_obfuscated.md"
_FORMS = "'original', 'obfuscated', 'mlebench:PATH' or 'mlebench-obfuscated:PATH' (PATH: a checkout of MLE-bench)"


def check_task_text(value: Any) -> str:
    """``value`` if it is a task text option (the checkout of an ``mlebench`` one must exist).

    Raises:
        ConfigError: it is none of the forms, or names a folder that does not exist.
    """
    if not isinstance(value, str):
        raise ConfigError(f"task_text must be {_FORMS}; got {type(value).__name__}")
    if value in TASK_TEXTS:
        return value
    kind, sep, path = value.partition(":")
    if not sep or kind not in MLEBENCH_TEXTS or not path:
        raise ConfigError(f"task_text must be {_FORMS}; got {value[:80]!r}")
    if not Path(path).expanduser().is_dir():
        raise ConfigError(f"task_text {value[:200]!r}: {path[:200]} is not a folder; give the root of a checkout "
                          "of MLE-bench (git clone https://github.com/openai/mle-bench)")
    return value


def task_description(spec: CompetitionSpec, task_text: str = "original") -> str:
    """The description an episode of ``spec`` starts with, for a checked ``task_text``.

    Raises:
        ConfigError: the competition has no such description (no obfuscated one, or none in the checkout).
    """
    if task_text == "original":
        return spec.description()
    if task_text == "obfuscated":
        path = spec.folder / OBFUSCATED_FILE
        if not path.is_file():
            raise ConfigError(f"{spec.id} has no obfuscated description ({OBFUSCATED_FILE} in {spec.folder})")
        return path.read_text(encoding="utf-8")
    kind, _, root = task_text.partition(":")
    base = Path(root).expanduser()
    folders = [base / "mlebench" / "competitions" / spec.id, base / spec.id]
    for folder in folders:
        if (folder / MLEBENCH_TEXTS[kind]).is_file():
            return (folder / MLEBENCH_TEXTS[kind]).read_text(encoding="utf-8")
    raise ConfigError(f"task_text {task_text[:200]!r}: no {MLEBENCH_TEXTS[kind]} for {spec.id} in "
                      f"{folders[0]} (is {root[:200]} a checkout of MLE-bench?)")
