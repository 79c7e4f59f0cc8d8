"""MLEEnv in both sandboxes: the Gymnasium contract, episodes, budgets, rewards, bad actions, recording."""

from __future__ import annotations

import json
import time
import typing
from collections.abc import Callable
from pathlib import Path

import gymnasium
import pandas as pd
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import mle_env
import mle_env.sandbox
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


@pytest.mark.slow
def test_check_env_passes(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, time_limit=600)
    try:
        check_env(env.unwrapped)
    finally:
        env.close()


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    # junk in the interpreter's own status pipe is not its status: the cell ends normally, state kept
    obs, *_ = env.step({"type": "python", "code": "import os, sys\nkept = 1\nos.write(int(sys.argv[3]), b'junk\\n')"})
    assert int(obs["exit_code"]) == 0 and "restarted" not in obs["message"], obs["message"]
    obs, *_ = env.step({"type": "python", "code": "kept + 41"})
    assert obs["stdout"].strip() == "42"
    obs, reward, terminated, truncated, info = env.step("echo alive")
    assert obs["stdout"] == "alive\n" and info["status"] == "running"
    env.close()


@pytest.mark.slow
def test_background_processes_keep_running(tiny_prepared: str, backend: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend)
    env.reset()
    obs, *_ = env.step("(sleep 1; echo progress; echo more; touch logs/done) &")
    assert int(obs["exit_code"]) == 0
    obs, *_ = env.step("sleep 2; ls logs")
    assert obs["stdout"].strip() == "done"  # writing to the closed action's output did not kill it
    env.close()


# --- issue 10: whatever the agent sends, step answers with an observation -----------------------------
class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("repr refused")

    __str__ = __repr__


class _RaisingDict(dict):
    def get(self, *args: object, **kwargs: object) -> object:
        raise RuntimeError("get refused")


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


BAD_STEP_INPUTS = {
    "lone surrogate in shell code": ({"type": "shell", "code": "echo \ud800"}, "not valid Unicode text"),
    "lone surrogate in python code": ({"type": "python", "code": "x = '\udcff'"}, "not valid Unicode text"),
    "lone surrogate in a validate path": ({"type": "validate", "path": "code/\ud800.csv"}, "not valid Unicode"),
    "lone surrogate as a plain string": ("ls \udc80", "not valid Unicode text"),
    "NaN timeout": ({"type": "shell", "code": "ls", "timeout": float("nan")}, "'timeout' must be a finite number"),
    "infinite timeout": ({"type": "shell", "code": "ls", "timeout": float("inf")}, "must be a finite number"),
    "minus infinite timeout": ({"type": "python", "code": "1", "timeout": float("-inf")}, "finite number"),
    "400-digit timeout": ({"type": "shell", "code": "ls", "timeout": 10**400}, "greater than the maximum"),
    "1e300 timeout": ({"type": "shell", "code": "ls", "timeout": 1e300}, "greater than the maximum"),
    "an object whose repr raises": (_Unprintable(), "not _Unprintable"),
    "code whose repr raises": ({"type": "shell", "code": _Unprintable()}, "could not be read"),
    "type whose repr raises": ({"type": _Unprintable(), "code": "ls"}, "cannot be printed"),
    "code an int too long to print": ({"type": "shell", "code": 10**5000}, "could not be read"),
    "code nested too deep to print": ({"type": "shell", "code": _deep(100_000)}, "could not be read"),
    "a dict whose get raises": (_RaisingDict(type="shell", code="ls"), "could not be read"),
    "a 10 MB type": ({"type": "x" * 10_000_000}, "'type' must be one of"),
    "a 1 MB non-string code": ({"type": "shell", "code": ["x" * 1_000_000]}, "is not of type 'string'"),
}


def test_bad_step_inputs_are_observations_and_recorded(tiny_prepared: str, tmp_path: Path) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local", record_dir=tmp_path)
    _, info = env.reset()
    for n, (action, phrase) in enumerate(BAD_STEP_INPUTS.values(), start=1):
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs["action"] == "invalid" and int(obs["exit_code"]) == 1, action
        assert obs["message"].startswith("malformed action:") and phrase in obs["message"], obs["message"]
        assert len(obs["message"]) <= 520 and "\n" not in obs["message"]
        assert (reward, terminated, truncated, info["step"], info["status"]) == (0.0, False, False, n, "running")
    env.unwrapped.annotate(weird={"text": "\ud800", "object": _Unprintable(), (1, 2): 10**5000})
    obs, *_ = env.step("echo still fine")
    assert obs["stdout"] == "still fine\n"
    obs, _, terminated, _, info = env.step({"type": "submit"})
    assert terminated and info["status"] == "submitted"
    records = read_trajectory(Path(info["trajectory"]))
    steps = [r for r in records if r["type"] == "step"]
    assert len(steps) == len(BAD_STEP_INPUTS) + 2 and records[-1]["type"] == "footer"
    assert all(len(str(r["action"])) <= 2000 for r in steps)
    assert steps[0]["kind"] == "invalid" and "not valid Unicode" in steps[0]["message"]
    assert "cannot be printed" in steps[9]["action"]  # the object whose repr raises, described
    assert steps[len(BAD_STEP_INPUTS)]["policy"]["weird"]["text"] == "\ud800"  # kept as a JSON escape
    env.close()


# --- max_episode_steps is the graded step budget --------------------------------------------------------
def test_gymnasium_max_episode_steps_is_the_graded_step_budget(tiny_prepared: str, home: Path) -> None:
    env = gymnasium.make("mle_env/tiny-comp-v0", sandbox="local", max_episode_steps=2)
    assert env.unwrapped.step_limit == 2 and env.spec.max_episode_steps == 2
    obs, _ = env.reset()
    assert "2 steps" in obs["task"] and int(obs["steps_left"]) == 2
    env.step(perfect_submission_code(home))
    obs, reward, terminated, truncated, info = env.step("echo last")
    assert truncated and not terminated and info["status"] == "truncated"  # the env's own, graded truncation
    assert info["grade"]["score"] == 1.0 and reward == 3.0
    again = gymnasium.make(env.spec)  # the spec rebuilds the same graded budget
    assert again.unwrapped.step_limit == 2
    env.close()
    again.close()


def test_make_max_episode_steps_takes_the_smaller_budget(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local", step_limit=5, max_episode_steps=3)
    assert env.unwrapped.step_limit == 3 and env.unwrapped.config.step_limit == 3
    env.close()
    env = mle_env.make(tiny_prepared, sandbox="local", step_limit=2, max_episode_steps=3)
    assert env.unwrapped.step_limit == 2
    env.reset()
    env.step("true")
    _, _, _, truncated, info = env.step("true")
    assert truncated and info["status"] == "truncated" and info["grade"] is not None
    env.close()
    with pytest.raises(mle_env.errors.ConfigError, match="max_episode_steps must be a whole number"):
        mle_env.make(tiny_prepared, sandbox="local", max_episode_steps=0)


def test_disk_limit_is_derived_and_stated_in_the_task(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="local")
    assert env.unwrapped.limits.disk == 10 * 2**30  # tiny data: the 10 GiB floor
    obs, _ = env.reset()
    assert "You may write up to 10 GiB in all" in obs["task"]
    env.close()
    env = mle_env.make(tiny_prepared, sandbox="local", disk="512m", memory="1g")
    assert env.unwrapped.limits.disk == 512 * 2**20 and env.unwrapped.limits.memory == 2**30
    obs, _ = env.reset()
    assert "You may write up to 512 MiB in all" in obs["task"]
    env.close()


# --- issue 10: an episode the agent's actions broke is the agent's result -------------------------------
# The fake below is the only fake sandbox in these tests: it raises SandboxBroken / SandboxUnavailable on cue
# so that MLEEnv's accounting can be checked on its own. That real sandboxes raise SandboxBroken when the
# agent kills its worker, exhausts the process table or memory, etc. is tested with the real backends by the
# sandbox and security tests (tests/security/ and the sandbox backends' own tests).
class _BreakableSandbox(mle_env.sandbox.Sandbox):
    kind = "local"

    def __init__(self, copy_error: Exception | None = None, tree_error: Exception | None = None) -> None:
        self.files: dict[str, bytes] = {}
        self.copy_error = copy_error
        self.tree_error = tree_error
        self.broken = False

    def _start(self) -> mle_env.sandbox.SandboxInfo:
        return mle_env.sandbox.SandboxInfo(kind=self.kind, workdir="/fake")

    def exec(self, kind: str, code: str, timeout: float) -> mle_env.sandbox.ExecResult:
        from mle_env.errors import SandboxBroken, SandboxUnavailable

        if code == "break":
            self.broken = True
            raise SandboxBroken("the worker was killed from inside the sandbox")
        if code == "vanish":
            raise SandboxUnavailable("the container was removed")
        if code.startswith("write "):
            self.files["submission/submission.csv"] = code[len("write "):].encode()
        if code.startswith("put "):  # put PATH TEXT
            _, name, text = code.split(" ", 2)
            self.files[name] = text.encode()
        return mle_env.sandbox.ExecResult(stdout="ok\n", stderr="", exit_code=0, timed_out=False)

    def copy_out(self, path: str = "submission/submission.csv", max_bytes: int = 2**30) -> bytes | str | None:
        if self.broken and self.copy_error is not None:
            raise self.copy_error
        return self.files.get(path)

    def copy_tree(self, path: str, max_bytes: int, max_files: int = 10_000) -> typing.IO[bytes]:
        if self.broken and self.copy_error is not None:
            raise self.copy_error
        if self.tree_error is not None:
            raise self.tree_error
        import tempfile

        from mle_env.sandbox.files import archive_workspace_tree

        with tempfile.TemporaryDirectory() as folder:
            for name, data in self.files.items():
                if name.startswith(path + "/"):
                    target = Path(folder, name)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
            return archive_workspace_tree(Path(folder), path, max_bytes, max_files)

    def python_packages(self) -> dict[str, str]:
        return {}

    def close(self) -> None:
        pass


@pytest.fixture
def breakable(monkeypatch: pytest.MonkeyPatch) -> Callable[..., _BreakableSandbox]:
    """Makes the next env's sandbox a _BreakableSandbox; returns a function that configures it."""
    import mle_env.env as env_module

    made: dict[str, _BreakableSandbox] = {}

    def configure(copy_error: Exception | None = None, tree_error: Exception | None = None) -> _BreakableSandbox:
        made["sandbox"] = _BreakableSandbox(copy_error, tree_error)
        return made["sandbox"]

    monkeypatch.setattr(env_module, "choose_backend", lambda kind, image: ("local", "a test sandbox"))
    monkeypatch.setattr(env_module, "create_sandbox", lambda *args: made["sandbox"])
    return configure


def _perfect_csv(home: Path) -> str:
    answers = pd.read_csv(home / "tiny-comp" / "prepared" / "private" / "test.csv")
    return "id,target\n" + "".join(f"{i},{float(t)}\n" for i, t in zip(answers["id"], answers["target"], strict=True))


def test_sandbox_broken_by_the_agent_ends_truncated_and_grades_the_submission(
    tiny_prepared: str, home: Path, breakable: Callable[..., _BreakableSandbox]
) -> None:
    breakable()
    env = mle_env.make(tiny_prepared)
    env.reset()
    env.step("write " + _perfect_csv(home))
    obs, reward, terminated, truncated, info = env.step("break")
    assert truncated and not terminated and info["status"] == "sandbox_broken"
    assert "the sandbox broke: the worker was killed from inside" in obs["message"]
    assert "submission present is graded" in obs["message"] and obs["action"] == "shell"
    assert info["grade"]["status"] == "scored" and info["grade"]["score"] == 1.0 and reward == 3.0
    footer = read_trajectory(Path(info["trajectory"]))[-1]
    assert footer["type"] == "footer" and footer["status"] == "sandbox_broken" and footer["grade"]["score"] == 1.0
    with pytest.raises(ResetNeeded):
        env.step("ls")
    env.close()


def test_sandbox_broken_without_a_submission_is_graded_missing(
    tiny_prepared: str, breakable: Callable[..., _BreakableSandbox]
) -> None:
    breakable()
    env = mle_env.make(tiny_prepared)
    env.reset()
    _, reward, _, truncated, info = env.step({"type": "python", "code": "break"})
    assert truncated and info["status"] == "sandbox_broken" and info["grade"]["status"] == "missing"
    assert reward == 0.0
    env.close()


def test_sandbox_broken_and_then_unreachable_is_an_infra_error(
    tiny_prepared: str, home: Path, breakable: Callable[..., _BreakableSandbox]
) -> None:
    from mle_env.errors import SandboxUnavailable

    breakable(copy_error=SandboxUnavailable("the engine stopped answering"))
    env = mle_env.make(tiny_prepared)
    env.reset()
    env.step("write " + _perfect_csv(home))
    obs, reward, terminated, truncated, info = env.step("break")
    assert truncated and not terminated and info["status"] == "infra_error"
    assert info["grade"] is None and reward == 0.0 and "the engine stopped answering" in obs["message"]
    env.close()


def test_sandbox_broken_so_that_nothing_copies_out_is_an_unreadable_submission(
    tiny_prepared: str, home: Path, breakable: Callable[..., _BreakableSandbox]
) -> None:
    from mle_env.errors import SandboxBroken

    breakable(copy_error=SandboxBroken("its file system is gone"))
    env = mle_env.make(tiny_prepared)
    env.reset()
    env.step("write " + _perfect_csv(home))
    _, reward, _, truncated, info = env.step("break")
    assert truncated and info["status"] == "sandbox_broken" and reward == 0.0
    assert info["grade"]["status"] == "invalid" and "broken sandbox" in info["grade"]["invalid_reason"]
    env.close()


def test_sandbox_broken_during_validate_ends_the_episode_the_same_way(
    tiny_prepared: str, breakable: Callable[..., _BreakableSandbox]
) -> None:
    from mle_env.errors import SandboxBroken

    sandbox = breakable(copy_error=SandboxBroken("the worker is gone"))
    env = mle_env.make(tiny_prepared)
    env.reset()
    sandbox.broken = True
    obs, _, _, truncated, info = env.step({"type": "validate"})
    assert truncated and info["status"] == "sandbox_broken" and obs["action"] == "validate"
    assert info["grade"]["status"] == "invalid"
    env.close()


def test_sandbox_gone_is_an_infra_error(tiny_prepared: str, breakable: Callable[..., _BreakableSandbox]) -> None:
    breakable()
    env = mle_env.make(tiny_prepared)
    env.reset()
    obs, reward, terminated, truncated, info = env.step("vanish")
    assert truncated and info["status"] == "infra_error" and info["grade"] is None and reward == 0.0
    assert "infrastructure error: the container was removed" in obs["message"]
    env.close()


# --- issue 11: each episode leaves a folder with its trajectory, graded submission, code, logs and grade --------
def test_episode_leaves_its_artifacts(tiny_prepared: str, home: Path, backend: str, tmp_path: Path) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, record_dir=tmp_path / "runs")
    _, info = env.reset(seed=3)
    folder = Path(info["episode_dir"])
    assert folder.parent == tmp_path / "runs" and Path(info["trajectory"]) == folder / "trajectory.jsonl"
    env.step("mkdir -p code/lib logs && echo 'print(1)' > code/train.py && echo x > code/lib/util.py"
             " && echo 'epoch 1 loss 0.5' > logs/train.log && ln -s /etc/passwd code/passwd"
             " && ln -s ../data code/data && mkfifo logs/pipe && mkfifo code/pipe")
    env.step(perfect_submission_code(home))
    sent = env.unwrapped._sandbox.copy_out()  # the bytes in the sandbox when it submits
    _, reward, terminated, _, info = env.step({"type": "submit"})
    assert terminated and reward == 3.0 and info["episode_dir"] == str(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["code", "grade.json", "logs", "submission.csv",
                                                        "trajectory.jsonl"]
    assert (folder / "submission.csv").read_bytes() == sent
    kept = json.loads((folder / "grade.json").read_text())
    assert kept.pop("disclosure") == json.loads(json.dumps(info["disclosure"]))  # the report, with its disclosure
    assert kept == info["grade"]
    assert (folder / "code" / "train.py").read_text() == "print(1)\n"
    assert (folder / "code" / "lib" / "util.py").read_text() == "x\n"
    assert (folder / "logs" / "train.log").read_text() == "epoch 1 loss 0.5\n"
    kept = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not p.is_dir())
    assert [k for k in kept if "passwd" in k or "pipe" in k or k.startswith("code/data")] == []
    assert all(not p.is_symlink() for p in folder.rglob("*"))
    footer = read_trajectory(folder / "trajectory.jsonl")[-1]
    assert footer["artifacts"] == {"submission": "submission.csv", "grade": "grade.json",
                                   "code": {"files": 2, "bytes": 11, "truncated": False},
                                   "logs": {"files": 1, "bytes": 17, "truncated": False}}
    env.close()


def test_artifacts_are_capped_and_huge_files_do_not_slow_the_end(
    tiny_prepared: str, backend: str, tmp_path: Path
) -> None:
    env = mle_env.make(tiny_prepared, sandbox=backend, record_dir=tmp_path / "runs", artifacts_max_bytes="4k")
    _, info = env.reset()
    folder = Path(info["episode_dir"])
    env.step("mkdir -p logs && head -c 3000 /dev/zero > code/a.bin && head -c 3000 /dev/zero > logs/b.log"
             " && truncate -s 2G code/huge.bin && echo hi > logs/small.txt")
    began = time.monotonic()
    _, _, terminated, _, info = env.step({"type": "submit"})
    assert time.monotonic() - began < 30
    assert (folder / "code" / "a.bin").stat().st_size == 3000 and not (folder / "code" / "huge.bin").exists()
    assert "left out" in (folder / "code" / "TRUNCATED.txt").read_text()
    assert not (folder / "logs" / "b.log").exists() and (folder / "logs" / "small.txt").read_text() == "hi\n"
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.parent.name in ("code", "logs"))
    assert total <= 4096 + 200  # the cap, plus the notes saying what was left out
    footer = read_trajectory(folder / "trajectory.jsonl")[-1]
    assert footer["artifacts"]["code"]["truncated"] and "submission" not in footer["artifacts"]
    assert terminated and info["grade"]["status"] == "missing"
    env.close()


def test_no_code_or_logs_kept_with_a_zero_cap_and_bad_caps_are_refused(tiny_prepared: str, tmp_path: Path,
                                                                        breakable: Callable[..., _BreakableSandbox]
                                                                        ) -> None:
    from mle_env.errors import ConfigError

    for bad in (-1, "lots", None, True):
        with pytest.raises(ConfigError, match="artifacts_max_bytes must be a size in bytes"):
            mle_env.make(tiny_prepared, artifacts_max_bytes=bad)
    breakable()
    env = mle_env.make(tiny_prepared, record_dir=tmp_path, artifacts_max_bytes=0)
    _, info = env.reset()
    env.step("put code/x.py print(1)")
    env.step({"type": "submit"})
    assert sorted(p.name for p in Path(info["episode_dir"]).iterdir()) == ["grade.json", "trajectory.jsonl"]
    env.close()


def test_an_infra_failure_while_keeping_code_loses_neither_grade_nor_status(
    tiny_prepared: str, home: Path, tmp_path: Path, breakable: Callable[..., _BreakableSandbox]
) -> None:
    from mle_env.errors import SandboxUnavailable

    breakable(tree_error=SandboxUnavailable("the engine stopped answering"))
    env = mle_env.make(tiny_prepared, record_dir=tmp_path)
    _, info = env.reset()
    env.step("write " + _perfect_csv(home))
    _, reward, terminated, _, info = env.step({"type": "submit"})
    assert terminated and info["status"] == "submitted" and reward == 3.0 and info["grade"]["score"] == 1.0
    folder = Path(info["episode_dir"])
    assert (folder / "submission.csv").read_text() == _perfect_csv(home)
    footer = read_trajectory(folder / "trajectory.jsonl")[-1]
    assert footer["status"] == "submitted" and footer["grade"]["score"] == 1.0
    assert footer["artifacts"]["errors"] == ["code/: SandboxUnavailable: the engine stopped answering",
                                             "logs/: SandboxUnavailable: the engine stopped answering"]
    env.close()


def test_an_abandoned_episode_keeps_its_code(tiny_prepared: str, tmp_path: Path,
                                            breakable: Callable[..., _BreakableSandbox]) -> None:
    breakable()
    env = mle_env.make(tiny_prepared, record_dir=tmp_path)
    _, info = env.reset()
    env.step("put code/model.py weights=1")
    env.close()
    folder = Path(info["episode_dir"])
    assert (folder / "code" / "model.py").read_text() == "weights=1"
    footer = read_trajectory(folder / "trajectory.jsonl")[-1]
    assert footer["status"] == "closed" and footer["grade"] is None and not (folder / "grade.json").exists()
