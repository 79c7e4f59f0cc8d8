"""A competition's declared requirement (``requires`` in competition.toml) that is missing here stops
``mle-env eval`` before the first episode with the exact install command, printed intact (issue 11: without
Pillow, practice-mnist-digits used to end in infra_error with a blank reason and vanish from the headline)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mle_env.competition.registry import get_spec


def test_practice_mnist_digits_declares_pillow() -> None:
    (req,) = get_spec("practice-mnist-digits").requires
    assert (req.module, req.package, req.install) == ("PIL", "pillow", "pip install 'mle-env[images]'")


def test_eval_without_pillow_stops_before_the_first_episode(practice_session_home: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "no-pillow" / "PIL"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('No module named PIL (hidden by the test)')\n")
    out = tmp_path / "run"
    env = {**os.environ, "MLE_ENV_HOME": str(practice_session_home), "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(blocker.parent), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run(
        [sys.executable, "-m", "mle_env.cli", "eval", "--agent", "baseline", "--competitions", "practice",
         "--seeds", "2", "--sandbox", "local", "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "practice-mnist-digits needs pillow" in result.stderr
    assert "pip install 'mle-env[images]'" in result.stderr  # the extra's brackets intact
    assert not (out / "results.jsonl").exists()  # no episode ran
