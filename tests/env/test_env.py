"""MLEEnv in both sandboxes: the Gymnasium contract, episodes, budgets, rewards, bad actions, recording."""

from __future__ import annotations

import json
import time
from pathlib import Path

import gymnasium
import pandas as pd
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import mle_env
from mle_env.errors import NotPrepared
from mle_env.recording import read_trajectory

TRAIN_AND_SUBMIT = """
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
test = pd.read_csv("data/test.csv")
vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), min_df=2, sublinear_tf=True)
model = LogisticRegression(C=4, max_iter=2000).fit(vectorizer.fit_transform(train["Comment"]), train["Insult"])
test.insert(0, "Insult", model.predict_proba(vectorizer.transform(test["Comment"]))[:, 1])
test.to_csv("submission/submission.csv", index=False)
print("rows", len(test))
"""


def perfect_submission_code(tiny_home: Path) -> str:
    answers = pd.read_csv(tiny_home / "tiny-comp" / "prepared" / "private" / "test.csv")
    rows = "\\n".join(f"{i},{float(t)}" for i, t in zip(answers["id"], answers["target"], strict=True))
    return f"printf 'id,target\\n{rows}\\n' > submission/submission.csv"


def test_check_env_passes(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, time_limit=600)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


def test_full_episode_on_detecting_insults(insults_home: Path, backend: str) -> None:
    env = mle_env.make("detecting-insults-in-social-commentary", sandbox=backend, time_limit=900)
    obs, info = env.reset(seed=1)
    assert info["sandbox"] == backend
    assert "data/train.csv" in obs["files"] and "./submission/submission.csv" in obs["task"]
    assert "Insult,Date,Comment" in obs["task"] and "auc (higher is better)" in obs["task"]
    obs, *_ = env.step("head -c 300 data/train.csv && wc -l data/test.csv")
    assert obs["action"] == "shell" and int(obs["exit_code"]) == 0 and "Insult,Date,Comment" in obs["stdout"]
    obs, *_ = env.step({"type": "python", "code": "import pandas as pd\ntrain = pd.read_csv('data/train.csv')\n"
                                                  "train.shape"})
    assert obs["stdout"].strip() == "(3947, 3)"
    obs, *_ = env.step({"type": "validate"})
    assert int(obs["exit_code"]) == 1 and "no ./submission/submission.csv" in obs["stdout"]
    obs, *_ = env.step({"type": "python", "code": TRAIN_AND_SUBMIT, "timeout": 600})
    assert obs["stdout"].strip() == "rows 2647", obs["stderr"]
    obs, reward, terminated, truncated, info = env.step({"type": "validate"})
    assert obs["stdout"] == "valid" and reward == 0 and not terminated
    obs, reward, terminated, truncated, info = env.step({"type": "submit"})
    assert terminated and not truncated and info["status"] == "submitted"
    grade = info["grade"]
    assert grade["valid_submission"] and grade["score"] > 0.85 and grade["medal"] == "gold"
    assert reward == 3.0 and grade["submission_path"] == "./submission/submission.csv"
    with pytest.raises(ResetNeeded):
        env.step("ls")
    env.close()


def test_python_state_persists_and_crashes_restart(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend)
    env.reset()
    env.step({"type": "python", "code": "import math\nvalue = 41"})
    obs, *_ = env.step({"type": "python", "code": "value + 1"})
    assert obs["stdout"].strip() == "42"
    obs, *_ = env.step({"type": "python", "code": "1 / 0"})
    assert int(obs["exit_code"]) == 1 and "ZeroDivisionError" in obs["stderr"]
    obs, *_ = env.step({"type": "python", "code": "value"})
    assert obs["stdout"].strip() == "41"  # an exception keeps the state
    obs, *_ = env.step({"type": "python", "code": "import os\nos._exit(3)"})
    assert "exited (code 3)" in obs["message"] and "state is lost" in obs["message"]
    obs, *_ = env.step({"type": "python", "code": "'value' in globals()"})
    assert obs["stdout"].strip() == "False"
    env.close()


def test_timeout_kills_the_action_and_everything_it_started(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend)
    env.reset()
    began = time.monotonic()
    obs, *_ = env.step({"type": "shell", "code": "sleep 1000 & sleep 1000", "timeout": 2})
    elapsed = time.monotonic() - began
    assert obs["timed_out"] == 1 and int(obs["exit_code"]) == -1 and "timed out after 2s" in obs["message"]
    assert elapsed < 20  # returned after about 2 s (the timeout), not after the 1000 s sleep
    obs, *_ = env.step("ps -eo args | grep -c '^sleep 1000' || true")
    assert obs["stdout"].strip() == "0"
    obs, *_ = env.step({"type": "python", "code": "import time\nx = 5\ntime.sleep(1000)", "timeout": 2})
    assert obs["timed_out"] == 1 and "restarted" in obs["message"]
    obs, *_ = env.step({"type": "python", "code": "'x' in globals()"})
    assert obs["stdout"].strip() == "False"
    env.close()


def test_bad_actions_are_observations_and_cost_a_step(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, step_limit=50)
    env.reset()
    bad = {
        "wrong type": ({"type": "explode"}, "'type' must be one of"),
        "missing code": ({"type": "python"}, "'code' is a required property"),
        "huge code": ({"type": "shell", "code": "#" * 2_000_000}, "over the 1,000,000 limit"),
        "binary junk": (bytes(range(256)), "binary data"),
        "unknown keys": ({"type": "shell", "code": "ls", "sudo": True}, "takes only: type, code, timeout"),
        "not a dict": (12345, "not int"),
    }
    for n, (action, phrase) in enumerate(bad.values(), start=1):
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs["action"] == "invalid" and int(obs["exit_code"]) == 1
        assert phrase in obs["message"] and obs["message"].startswith("malformed action:")
        assert (reward, terminated, truncated, info["step"]) == (0.0, False, False, n)
        assert int(obs["steps_left"]) == 50 - n
    env.close()


def test_output_is_cut_with_a_marker(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, max_output=2000)
    env.reset()
    obs, *_ = env.step("head -c 10000000 /dev/zero | tr '\\0' 'x'; echo END")
    assert len(obs["stdout"]) < 2200 and "[... 9998004 bytes of output cut ...]" in obs["stdout"]
    assert obs["stdout"].startswith("xxx") and obs["stdout"].rstrip().endswith("END")
    env.close()


def test_budgets_truncate_and_still_grade(tiny_prepared: str, backend: str, home: Path) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, step_limit=2)
    env.reset()
    obs, reward, terminated, truncated, info = env.step(perfect_submission_code(home))
    assert not truncated and int(obs["steps_left"]) == 1
    obs, reward, terminated, truncated, info = env.step("echo still here")
    assert truncated and not terminated and info["status"] == "truncated"
    assert info["grade"]["score"] == 1.0 and reward == 3.0
    env.close()
    env = mle_env.make(tiny_prepared, sandbox=backend, time_limit=3)
    env.reset()
    obs, reward, terminated, truncated, info = env.step({"type": "shell", "code": "sleep 30"})
    assert truncated and obs["timed_out"] == 1 and info["status"] == "truncated"
    assert info["grade"]["status"] == "missing" and reward == 0.0 and float(obs["time_left"]) == 0.0
    env.close()


@pytest.mark.parametrize(("reward", "expected"), [("any_medal", 1.0), ("above_median", 1.0), ("percentile", 1.0),
                                                  (lambda report: report.score * 10, 10.0)])
def test_rewards(tiny_prepared: str, home: Path, reward: object, expected: float) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local", reward=reward)
    env.reset()
    env.step(perfect_submission_code(home))
    _, value, terminated, _, info = env.step({"type": "submit"})
    assert terminated and value == expected and info["grade"]["medal"] == "gold"
    env.close()


def test_invalid_submission_is_graded_invalid_with_zero_reward(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend)
    env.reset()
    env.step("printf 'id,target\\nnope,0.5\\n' > submission/submission.csv")
    obs, *_ = env.step({"type": "validate"})
    assert "rows but the test set has" in obs["stdout"] and "score" not in obs["stdout"]
    env.step("ln -sf /etc/hostname submission/submission.csv")
    obs, *_ = env.step({"type": "validate"})
    assert "symbolic link" in obs["stdout"]
    _, reward, terminated, _, info = env.step({"type": "submit"})
    assert terminated and reward == 0.0 and info["grade"]["status"] == "invalid"
    env.close()


def test_trajectory_is_written_step_by_step(tiny_prepared: str, backend: str, tmp_path: Path) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, record_dir=tmp_path / "runs")
    _, info = env.reset(seed=7)
    path = Path(info["trajectory"])
    env.unwrapped.annotate(llm={"prompt_tokens": 12, "completion_tokens": 3})
    env.step("echo one")
    mid = read_trajectory(path)  # flushed already, before the episode ends
    assert [r["type"] for r in mid] == ["header", "step"]
    assert mid[0]["seed"] == 7 and mid[0]["competition_id"] == "tiny-comp" and mid[0]["sandbox"] == backend
    assert mid[0]["packages"]["gymnasium"] and mid[0]["limits"]["network"] is False
    assert mid[1]["action"] == {"type": "shell", "code": "echo one"} and mid[1]["stdout"] == "one\n"
    assert mid[1]["policy"] == {"llm": {"prompt_tokens": 12, "completion_tokens": 3}}
    env.step({"type": "submit"})
    records = read_trajectory(path)
    assert records[-1]["type"] == "footer" and records[-1]["status"] == "submitted"
    assert records[-1]["grade"]["status"] == "missing" and records[-1]["steps"] == 2
    env.close()
    assert json.loads(path.read_text().splitlines()[0])["format"] == 1


def test_standard_wrappers(tiny_prepared: str, backend: str) -> None:
    env = gymnasium.wrappers.RecordEpisodeStatistics(
        gymnasium.wrappers.TimeLimit(mle_env.make(tiny_prepared, sandbox=backend), max_episode_steps=3))
    env.reset(seed=0)
    truncated = False
    steps = 0
    while not truncated:
        _, _, terminated, truncated, info = env.step("echo hi")
        steps += 1
        assert not terminated
    assert steps == 3 and info["episode"]["l"] == 3
    env.reset()  # the wrapper's truncation leaves the env resettable
    _, _, terminated, _, info = env.step({"type": "submit"})
    assert terminated and info["episode"]["l"] == 1
    env.close()


def test_close_twice_and_step_before_reset(tiny_prepared: str) -> None:
    env = mle_env.MLEEnv(tiny_prepared, sandbox="local")
    with pytest.raises(ResetNeeded):
        env.step("ls")
    env.reset()
    env.close()
    env.close()
    with pytest.raises(ResetNeeded):
        env.step("ls")


def test_make_on_unprepared_competition_names_the_command(home: Path) -> None:
    with pytest.raises(NotPrepared, match="run `mle-env prepare practice-house-prices` first"):
        mle_env.make("house-prices", sandbox="local")


def test_gymnasium_make_by_id(tiny_prepared: str) -> None:
    env = gymnasium.make("mle_env/tiny-comp-v0", sandbox="local", time_limit=60)
    obs, info = env.reset()
    assert info["competition_id"] == "tiny-comp" and float(obs["time_left"]) == 60.0
    env.close()


def test_auto_sandbox_says_which(tiny_prepared: str) -> None:
    from conftest import docker_ready

    env = mle_env.make(tiny_prepared, sandbox="auto")
    _, info = env.reset()
    ready, _ = docker_ready()
    assert info["sandbox"] == ("docker" if ready else "local") and info["sandbox_reason"]
    env.close()


def test_what_the_agent_leaves_cannot_hang_or_break_step(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend)
    env.reset()
    env.step("mkfifo submission/submission.csv")  # opening a named pipe would wait for a writer
    obs, *_ = env.step({"type": "validate"})
    assert "not a regular file" in obs["stdout"]
    env.step("rm submission/submission.csv && mkdir -p code && ln -s / code/root")
    obs, *_ = env.step({"type": "validate", "path": "code/root/etc/hostname"})
    assert obs["stdout"] != "valid" and int(obs["exit_code"]) == 1
    obs, *_ = env.step({"type": "validate", "path": "submission/submission.csv/inside"})
    assert obs["action"] == "validate" and int(obs["exit_code"]) == 1
    obs, *_ = env.step({"type": "python", "code": "import os, sys\nos.write(int(sys.argv[3]), b'junk\\n')"})
    assert "restarted" in obs["message"]
    obs, reward, terminated, truncated, info = env.step("echo alive")
    assert obs["stdout"] == "alive\n" and info["status"] == "running"
    env.close()


def test_background_processes_keep_running(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend)
    env.reset()
    obs, *_ = env.step("(sleep 1; echo progress; echo more; touch logs/done) &")
    assert int(obs["exit_code"]) == 0
    obs, *_ = env.step("sleep 2; ls logs")
    assert obs["stdout"].strip() == "done"  # writing to the closed action's output did not kill it
    env.close()
