"""Building blocks for policies written as scripts: a generator that yields actions and is sent back the
observation each one produced, plus the actions that put mlkit into the sandbox and use it.

    class MyPolicy(ScriptedPolicy):
        def script(self, obs, info):
            obs = yield "ls data"                      # a shell action; obs is what it returned
            obs = yield {"type": "validate"}
            yield {"type": "submit"}

When the script returns without submitting, the policy submits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

from mle_env.agents.policy import BasePolicy

Script = Generator[Any, dict[str, Any], None]

MLKIT_SOURCE = (Path(__file__).with_name("mlkit.py")).read_text()
_SCORE = re.compile(r"VALIDATION_SCORE:\s*([-+0-9.eEinfa]+)")


class ScriptedPolicy(BasePolicy):
    """A policy driven by the generator :meth:`script` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._script: Script | None = None
        self._primed = False
        self._finished = False

    def script(self, obs: dict[str, Any], info: dict[str, Any]) -> Script:
        raise NotImplementedError

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        super().reset(obs, info)
        self._script = self.script(obs, info)
        self._primed = self._finished = False

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | str:
        if self._script is None:
            raise RuntimeError("reset() must be called before act()")
        if self._finished:
            return {"type": "submit"}
        try:
            if not self._primed:
                self._primed = True
                return next(self._script)
            return self._script.send(obs)
        except StopIteration:
            self._finished = True
            return {"type": "submit"}


def install_mlkit() -> dict[str, Any]:
    """A python action that writes mlkit to ./code/mlkit.py and imports it."""
    code = (
        "import os, sys, importlib\n"
        "os.makedirs('code', exist_ok=True)\n"
        f"open('code/mlkit.py', 'w').write({MLKIT_SOURCE!r})\n"
        "sys.path.insert(0, 'code')\n"
        "import mlkit\nimportlib.reload(mlkit)\n"
        "print('mlkit ready')"
    )
    return {"type": "python", "code": code, "timeout": 120}


def task_info(info: dict[str, Any]) -> dict[str, Any]:
    """What mlkit.profile needs, from reset's info."""
    sub = info["submission"]
    return {"id_column": sub["id_column"], "targets": sub["targets"], "kind": sub["kind"], "sample": sub["sample"],
            "header": sub["header"], "metric": info["metric"]["name"],
            "lower_is_better": info["metric"]["lower_is_better"]}


def profile_action(info: dict[str, Any]) -> dict[str, Any]:
    """A python action that profiles the data; its stdout's last line is the profile as JSON."""
    code = (
        "import json, mlkit\n"
        f"PROFILE = mlkit.profile(json.loads({json.dumps(task_info(info))!r}))\n"
        "print(json.dumps(PROFILE))"
    )
    return {"type": "python", "code": code, "timeout": 300}


def program(profile: dict[str, Any], config: dict[str, Any], submission_path: str, code_dir: str = "code") -> str:
    """A standalone program that trains ``config`` with mlkit (found in ``code_dir``) and writes
    ``submission_path``; paths are relative to where it runs."""
    return (
        "import json, sys\n"
        f"sys.path.insert(0, {code_dir!r})\n"
        "import mlkit\n"
        f"PROFILE = json.loads({json.dumps(profile)!r})\n"
        f"CONFIG = json.loads({json.dumps(config)!r})\n"
        f"mlkit.run(PROFILE, CONFIG, {submission_path!r})\n"
    )


def last_json(text: str) -> dict[str, Any] | None:
    """The last line of ``text`` that parses as a JSON object, or None."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def validation_score(text: str) -> float | None:
    """The last ``VALIDATION_SCORE: x`` a program printed, or None."""
    found = _SCORE.findall(text)
    if not found:
        return None
    try:
        value = float(found[-1])
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def fold_scores(text: str) -> list[float]:
    """The per-fold scores of the last ``VALIDATION_FOLDS: [...]`` line a program printed (or [])."""
    for line in reversed(text.splitlines()):
        if line.startswith("VALIDATION_FOLDS:"):
            try:
                values = json.loads(line.split(":", 1)[1])
            except ValueError:
                return []
            return [float(v) for v in values] if isinstance(values, list) else []
    return []


def budget_timeout(obs: dict[str, Any], wanted: float, reserve: float = 30.0) -> float:
    """``wanted`` seconds, but never past the time left minus a reserve for validating and submitting."""
    return max(5.0, min(wanted, float(obs["time_left"]) - reserve))
