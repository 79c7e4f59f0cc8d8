"""`mle-env show`: a real recorded episode (scripted actions in the local sandbox) printed as a timeline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import mle_env
from mle_env.cli import main
from mle_env.cli.show import clip_lines

ACTIONS = [
    "echo hello-from-shell && echo '[red]not markup[/red]'",
    {"type": "python", "code": "import sys\nprint('to stderr', file=sys.stderr)\nraise ValueError('boom')"},
    {"type": "shell", "code": "seq 1 500", "timeout": 30},
    {"type": "shell", "code": "sleep 5", "timeout": 0.5},
    {"type": "valid"},  # malformed
    {"type": "validate"},
]


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv, "--width", "160"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def episode(tiny_prepared: str, home: Path, bwrap_ready: None, tmp_path: Path) -> tuple[Path, dict]:
    """A finished episode on the local sandbox: the scripted actions, a perfect submission, submit."""
    answers = pd.read_csv(home / "tiny-comp" / "prepared" / "private" / "test.csv")
    rows = "\\n".join(f"{i},{float(t)}" for i, t in zip(answers["id"], answers["target"], strict=True))
    env = mle_env.make(tiny_prepared, sandbox="local", record_dir=tmp_path / "runs", step_limit=20)
    try:
        _, info = env.reset(seed=5)
        env.unwrapped.annotate(llm={"prompt_tokens": 321})
        for action in ACTIONS:
            env.step(action)
        env.step(f"mkdir -p logs && echo trained > logs/train.log && printf 'id,target\\n{rows}\\n' "
                 "> submission/submission.csv")
        *_, info = env.step({"type": "submit"})
    finally:
        env.close()
    assert info["status"] == "submitted" and info["grade"]["medal"] == "gold"
    return Path(info["episode_dir"]), info


def test_show_prints_the_timeline_of_an_episode_folder(episode: tuple[Path, dict],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder, info = episode
    code, out, _ = _show(capsys, str(folder))
    assert code == 0
    assert "tiny-comp" in out and "seed 5" in out and "sandbox local" in out and "step limit 20" in out
    lines = out.splitlines()
    first = next(line for line in lines if line.startswith("#1 "))
    assert "shell" in first and "exit 0" in first and "left:" in first
    assert "$ echo hello-from-shell" in out and "hello-from-shell" in out
    assert "[red]not markup[/red]" in out  # the agent's text is printed as text
    assert "policy: " in out and '"prompt_tokens": 321' in out
    step2 = next(line for line in lines if line.startswith("#2 "))
    assert "python" in step2 and "exit 1" in step2 and "stderr:" in out and "ValueError: boom" in out
    step3 = next(line for line in lines if line.startswith("#3 "))
    assert "timeout 30 s" in step3
    assert "[... 488 lines ...]" in out and "    1" in out and "500" in out  # seq 1 500 clipped to 12 lines
    assert "TIMED OUT" in next(line for line in lines if line.startswith("#4 "))
    assert "invalid" in next(line for line in lines if line.startswith("#5 ")) and "malformed action" in out
    assert "there is no ./submission/submission.csv yet" in out
    assert "submitted: 8 steps in" in out and "reward 3" in out
    assert "GOLD" in out and "1.00000 (higher is better)" in out
    assert "submission.csv" in out and "grade.json" in out and "logs/  1 files, 8 bytes" in out
    assert out.index("#1 ") < out.index("#8 ") < out.index("GOLD")
    assert "# Your environment" not in out  # the task only with --task
    _, with_task, _ = _show(capsys, str(folder), "--task")
    assert "# Your environment" in with_task


def test_show_on_the_jsonl_and_whole_outputs(episode: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    folder, info = episode
    code, out, _ = _show(capsys, info["trajectory"], "--full")
    assert code == 0 and "GOLD" in out and "[... 488 lines ...]" not in out and "\n    250\n" in out
    code, short, _ = _show(capsys, info["trajectory"], "--lines", "2")
    assert code == 0 and "[... 498 lines ...]" in short


def test_show_of_an_unfinished_trajectory_and_bad_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ep" / "trajectory.jsonl"
    path.parent.mkdir()
    header = {"type": "header", "competition_id": "x", "seed": 1, "sandbox": "local", "time_limit": 60}
    step = {"type": "step", "step": 1, "action": {"type": "shell", "code": "ls"}, "stdout": "a\n",
            "exit_code": 0, "timed_out": False, "started_at": 0.1, "duration_s": 0.01}
    path.write_text(json.dumps(header) + "\n" + json.dumps(step) + "\n" + '{"type": "fo')  # torn last line
    code, out, _ = _show(capsys, str(path.parent))
    assert code == 0 and "#1 " in out and "no end yet: 1 steps" in out
    code, _, err = _show(capsys, str(tmp_path / "nope"))
    assert code == 2 and "no such file or folder" in err
    code, _, err = _show(capsys, str(tmp_path))
    assert code == 2 and "holds no trajectory.jsonl" in err


def test_entry_point_runs_show(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"type": "header", "competition_id": "tiny"}) + "\n")
    out = subprocess.run(["mle-env", "show", str(path)], capture_output=True, text=True, check=True).stdout
    assert "tiny" in out


def test_clip_lines() -> None:
    assert clip_lines("a\nb\nc", 3) == "a\nb\nc"
    assert clip_lines("\n".join(map(str, range(10))), 4) == "0\n1\n[... 6 lines ...]\n8\n9"
    assert clip_lines("x" * 300, 5).endswith("[... 100 characters]")
    assert clip_lines("1\n2\n3", None) == "1\n2\n3"


# --- the live display of `mle-env run` (issue 11): it ticks during long actions and shows what AIDE does ---------
class _SleepyProposer:
    """Writes programs that take a moment, print a CV score that grows node by node, and a valid submission."""

    needs_profile = False

    def __init__(self) -> None:
        self.n = 0

    def propose(self, operator: str, parent, ctx):  # noqa: ANN001, ANN201 - the Proposer protocol
        from mle_env.scaffolds.aide.proposer import Proposal

        self.n += 1
        code = ("import time, pandas as pd\ntime.sleep(1.2)\ntest = pd.read_csv('data/test.csv')\n"
                "pd.DataFrame({'id': test['id'], 'target': 0.5}).to_csv('submission/submission.csv', index=False)\n"
                f"print('VALIDATION_SCORE: {0.5 + self.n / 10}')\n")
        return Proposal(plan=f"plan {self.n}", code=code)


@pytest.mark.slow
def test_live_display_ticks_during_a_long_step_and_shows_aide_status(
    tiny_prepared: str, bwrap_ready: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from rich.console import Console

    import mle_env.cli.episodes as episodes
    from mle_env.scaffolds.aide.policy import AidePolicy

    buffer = io.StringIO()
    monkeypatch.setattr(episodes, "console", lambda: Console(file=buffer, force_terminal=True, width=150))
    policy = AidePolicy(custom_proposer=_SleepyProposer(), max_nodes=2, num_drafts=2,
                        journal=str(tmp_path / "journal.jsonl"))
    env = mle_env.make(tiny_prepared, sandbox="local", record_dir=tmp_path / "runs")
    seen: list[dict] = []
    try:
        with episodes.LiveDisplay("aide on tiny-comp", policy) as live:
            def on_step(*args) -> None:  # noqa: ANN002
                live.update(*args)
                seen.append(policy.status())

            result = mle_env.run_episode(env, policy, seed=0, on_step=on_step)
    finally:
        env.close()
    assert result.grade is not None and result.grade.valid_submission
    out = buffer.getvalue()
    # rich's refresh thread re-rendered the panel while a 1.2 s node ran: the step's clock went past 1 s
    assert "running for 1 s" in out, out[-3000:]
    assert "phase running" in out and "operator draft" in out and "nodes 0/2" in out
    assert "best cv 0.6" in out and "best node 0" in out
    assert {"phase": "validating (CV 0.7)", "node": 1, "operator": "draft", "nodes": "1/2", "best_cv": 0.6,
            "best_node": 0} in seen
    assert seen[-1] == {"phase": "final validation", "node": None, "operator": None, "nodes": "2/2", "best_cv": 0.7,
                        "best_node": 1}


def test_policy_status_line_never_raises() -> None:
    from mle_env.cli.episodes import policy_status

    class Broken:
        def status(self) -> dict:
            raise RuntimeError("no")

    class Plain:
        def status(self) -> dict:
            return {"best_cv": 0.123456789, "node": 3, "skip": None}

    assert policy_status(Broken()) == "" and policy_status(object()) == "" and policy_status(None) == ""
    assert policy_status(Plain()) == "best cv 0.12346   node 3"


def test_show_prints_the_harness_repairs_of_a_step_with_their_diff(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A reader sees what the model wrote and what the harness changed; the diff is the model's text, inert."""
    path = tmp_path / "ep" / "trajectory.jsonl"
    path.parent.mkdir()
    repairs = {"fired": [{"name": "harness_work", "what": "..."}, {"name": "tolerant_test_drop", "what": "..."}],
               "diff": "--- model\n+++ ran\n@@ -1,2 +1 @@\n-model.fit(X, y)  # [red]fit[/red] \x1b[2J\n X = 1\n"}
    step = {"type": "step", "step": 1, "action": {"type": "python", "code": "X = 1"}, "stdout": "",
            "exit_code": 0, "timed_out": False, "started_at": 0.1, "duration_s": 0.01,
            "policy": {"repairs": repairs, "react": {"source": "text"}}}
    path.write_text(json.dumps({"type": "header", "competition_id": "x"}) + "\n" + json.dumps(step) + "\n")
    code, out, _ = _show(capsys, str(path.parent))
    assert code == 0 and "harness repairs: harness_work, tolerant_test_drop" in out
    assert "-model.fit(X, y)  # [red]fit[/red]" in out and "\x1b[2J" not in out
    assert "policy: " in out and '"source": "text"' in out and '"diff"' not in out
