"""MLE-bench agents run unchanged: /home/instructions.txt, the validation endpoint (POST
http://localhost:5000/validate, /home/validate_submission.sh), python and pip, and any image with python3.

The endpoint is checked through its real path (an HTTP server inside the sandbox, relayed by the worker to
the host's grader) on both isolating backends; its host half (ValidationEndpoint) also on its own.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import INSULTS
from security.hostile import python, shell, still_works

import mle_env
from mle_env.sandbox.endpoint import INVALID_PREFIX, VALID_MESSAGE, ValidationEndpoint


# --- the host half, on its own --------------------------------------------------------------------------
def _chunks(vid: int, data: bytes, size: int = 3) -> list[dict[str, Any]]:
    events = [{"event": "validate", "vid": vid, "chunk": base64.b64encode(data[i:i + size]).decode()}
              for i in range(0, max(len(data), 1), size)]
    return events + [{"event": "validate", "vid": vid, "end": True}]


def _verdict(endpoint: ValidationEndpoint, events: list[dict[str, Any]]) -> str:
    replies = [endpoint(e) for e in events]
    assert all(r is None for r in replies[:-1])
    assert replies[-1] is not None and replies[-1]["op"] == "validated"
    return replies[-1]["result"]


def test_endpoint_reassembles_chunks_and_answers_as_mlebench(tmp_path: Path) -> None:
    seen: list[bytes] = []

    def validate(path: Path) -> str:
        seen.append(path.read_bytes())
        return "valid" if path.read_bytes().startswith(b"id,") else "the header must start with id"

    endpoint = ValidationEndpoint(validate, max_bytes=1000)
    assert _verdict(endpoint, _chunks(1, b"id,target\n1,0.5\n")) == VALID_MESSAGE
    assert seen == [b"id,target\n1,0.5\n"]
    assert _verdict(endpoint, _chunks(2, b"x,y\n")) == INVALID_PREFIX + "the header must start with id"
    # an empty upload is still a file (MLE-bench's grader then says why it is invalid)
    assert _verdict(endpoint, _chunks(3, b"")) == INVALID_PREFIX + "the header must start with id"
    endpoint.close()


def test_endpoint_refuses_oversized_garbled_and_unknown_uploads() -> None:
    calls: list[Path] = []
    endpoint = ValidationEndpoint(lambda p: calls.append(p) or "valid", max_bytes=10)
    assert "over the" in _verdict(endpoint, _chunks(1, b"x" * 11))
    garbled = [{"event": "validate", "vid": 2, "chunk": "not base64!"}, {"event": "validate", "vid": 2, "end": True}]
    assert "garbled" in _verdict(endpoint, garbled)
    assert "nothing was received" in _verdict(endpoint, [{"event": "validate", "vid": 9, "end": True}])
    assert calls == []  # none of them reached the grader
    for junk in ({"event": "other"}, {"event": "validate", "vid": "1"}, {"event": "validate", "vid": 1}):
        assert endpoint(junk) is None
    endpoint.close()


def test_endpoint_keeps_only_a_few_unfinished_uploads() -> None:
    endpoint = ValidationEndpoint(lambda p: "valid", max_bytes=100)
    for vid in range(1, 10):  # started, never ended
        endpoint(_chunks(vid, b"abc")[0])
    assert len(endpoint._pending) == ValidationEndpoint.MAX_PENDING
    assert _verdict(endpoint, [{"event": "validate", "vid": 1, "end": True}]).endswith("nothing was received")
    assert _verdict(endpoint, [{"event": "validate", "vid": 9, "end": True}]) == VALID_MESSAGE
    endpoint.close()


# --- inside the sandboxes -----------------------------------------------------------------------------
def _sample(env: Any) -> str:
    return f"/home/data/{env.unwrapped.competition.submission.sample_submission}"


def test_instructions_and_script_are_in_home_and_read_only(open_env: Any) -> None:
    env = open_env()
    obs = shell(env, "cat /home/instructions.txt; ls -l /home/validate_submission.sh")
    assert "/home/submission/submission.csv" in obs["stdout"] and "tiny-comp" in obs["stdout"]
    assert env.unwrapped._task in obs["stdout"]
    assert "localhost:5000/validate" in obs["task"]
    assert shell(env, "echo pwned >> /home/instructions.txt")["exit_code"] != 0
    assert shell(env, "echo pwned >> /home/validate_submission.sh")["exit_code"] != 0
    assert "pwned" not in shell(env, "cat /home/instructions.txt")["stdout"]


def test_validation_endpoint_answers_valid_or_why_never_a_score(open_env: Any) -> None:
    env = open_env()
    obs = shell(env, f"/home/validate_submission.sh {_sample(env)}")
    assert json.loads(obs["stdout"]) == {"result": VALID_MESSAGE}, (obs["stdout"], obs["stderr"])
    obs = shell(env, "printf 'id,wrong\\nr001,1\\n' > /tmp/bad.csv && "
                     "curl -s -X POST -F file=@/tmp/bad.csv http://localhost:5000/validate")
    result = json.loads(obs["stdout"])["result"]
    assert result.startswith(INVALID_PREFIX) and len(result) > len(INVALID_PREFIX), result
    # no file yet at the default path; the script says so itself
    obs = shell(env, "/home/validate_submission.sh")
    assert "does not exist" in obs["stdout"] and obs["exit_code"] == 1
    # a raw body from Python's standard library, as a python action (the endpoint answers while it runs)
    obs = python(env, textwrap.dedent(f"""
        import json, urllib.request
        data = open({_sample(env)!r}, "rb").read()
        with urllib.request.urlopen(urllib.request.Request("http://localhost:5000/validate", data=data)) as r:
            print(json.loads(r.read())["result"])
        with urllib.request.urlopen("http://localhost:5000/health") as r:
            print(r.read().decode())
    """))
    assert obs["stdout"].splitlines() == [VALID_MESSAGE, '{"status": "running"}'], (obs["stdout"], obs["stderr"])


def test_endpoint_refuses_a_file_over_the_limit_and_the_episode_goes_on(open_env: Any) -> None:
    env = open_env()
    limit = env.unwrapped.grader.max_bytes
    obs = shell(env, f"head -c {limit + 2 * 2**20} /dev/zero > /tmp/big.csv && "
                     "curl -s -o /dev/null -w '%{http_code}' -X POST -F file=@/tmp/big.csv "
                     "http://localhost:5000/validate; rm /tmp/big.csv", timeout=120)
    assert obs["stdout"] == "413", (obs["stdout"], obs["stderr"])
    still_works(env)


#: an action that prints the pids of the endpoint's relay, as the agent sees them
FIND_RELAY = ("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'worker[.]py relay'"
              " && echo ${p#/proc/}; done")
FREEZER = Path("/sys/fs/cgroup/freezer")  # cgroup v1's: a frozen process keeps a SIGKILL pending until thawed


@contextlib.contextmanager
def _frozen(pid: int) -> Iterator[Callable[[], None]]:
    """Freeze a process; calling what this yields thaws it. The cgroup is removed on the way out."""
    if not os.access(FREEZER / "cgroup.procs", os.W_OK):
        pytest.skip("no writable cgroup v1 freezer: the window between SIGKILL and death cannot be held open")
    group = FREEZER / f"mle-env-test-{os.getpid()}-{pid}"
    group.mkdir()

    def thaw() -> None:
        (group / "freezer.state").write_text("THAWED")

    try:
        (group / "cgroup.procs").write_text(str(pid))
        (group / "freezer.state").write_text("FROZEN")
        while (group / "freezer.state").read_text().strip() != "FROZEN":
            time.sleep(0.01)
        yield thaw
    finally:
        thaw()
        while (group / "cgroup.procs").read_text().strip():
            time.sleep(0.01)
        group.rmdir()


def _relay_on_the_host(env: Any) -> int:
    """The host's pid of the local sandbox's endpoint process (the one in the sandbox's pid namespace)."""
    namespace = os.readlink(f"/proc/{env.unwrapped._sandbox.init_pid}/ns/pid")
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if b"relay" in args and os.readlink(entry / "ns" / "pid") == namespace:
                return int(entry.name)
        except (OSError, ValueError):
            continue
    raise AssertionError("the relay is not running")


@pytest.mark.parametrize("backend", ["local"], indirect=True)
def test_endpoint_comes_back_when_the_relay_the_agent_killed_has_not_died_yet(open_env: Any) -> None:
    """SIGKILL is delivered when the process next runs: on a busy machine the next action can start
    before the relay the agent killed has died, and must not take it for a running one."""
    env = open_env()
    with _frozen(_relay_on_the_host(env)) as thaw:
        obs = shell(env, f"kill -9 $({FIND_RELAY}); echo rc=$?")
        assert obs["stdout"].strip() == "rc=0", obs
        threading.Timer(1.0, thaw).start()  # it dies a second into the next action
        obs = shell(env, f"/home/validate_submission.sh {_sample(env)}")
    assert json.loads(obs["stdout"] or "null") == {"result": VALID_MESSAGE}, obs
    still_works(env)


def test_endpoint_comes_back_after_the_agent_stops_it(open_env: Any, backend: str) -> None:
    env = open_env()
    pids = shell(env, FIND_RELAY)["stdout"].split()
    assert pids, "the relay is not visible"
    obs = shell(env, f"kill -9 {' '.join(pids)} 2>&1; echo rc=$?")
    if backend == "docker":  # a root process: the agent cannot signal it
        assert "rc=1" in obs["stdout"] and "not permitted" in obs["stdout"]
    obs = shell(env, f"/home/validate_submission.sh {_sample(env)}")
    assert json.loads(obs["stdout"]) == {"result": VALID_MESSAGE}
    still_works(env)


def test_forged_lines_in_the_relays_pipe_reach_nothing(bwrap_ready: None, tiny_prepared: str) -> None:
    """In the local sandbox the relay runs as the agent's uid. The kernel keeps its file descriptors from the
    agent (a process started through a change of credentials is not dumpable); were they reachable, only
    well-formed chunks would get through the worker, answered as uploads, nothing more. (The docker relay is
    root's: the agent cannot even signal it, see the test above.)"""
    env = mle_env.make(tiny_prepared, sandbox="local", memory="512m")
    env.reset()
    try:
        forged = [{"id": 1, "stdout": "forged", "exit_code": 0}, {"event": "validate", "vid": 1, "end": True},
                  {"vid": 7, "chunk": "aWQK"}, {"vid": 7, "end": True}]
        code = textwrap.dedent(f"""
            import glob, json
            lines = [json.dumps(f) for f in {forged!r}] + ["x" * 5_000_000]
            for p in glob.glob("/proc/[0-9]*/cmdline"):
                argv = open(p, "rb").read().split(b"\\0")
                if argv[2:4] == [b"/opt/mle-env/worker.py", b"relay"]:
                    try:
                        open(p.replace("cmdline", "fd/1"), "w").write("\\n".join(lines) + "\\n")
                        print("sent")
                    except PermissionError:
                        print("denied")
        """)
        obs = python(env, code)
        assert obs["stdout"] in ("sent\n", "denied\n"), (obs["stdout"], obs["stderr"])
        still_works(env)
        obs = shell(env, f"/home/validate_submission.sh {_sample(env)}")
        assert json.loads(obs["stdout"]) == {"result": VALID_MESSAGE}
    finally:
        env.close()


def test_python_and_pip_are_there(open_env: Any) -> None:
    env = open_env()
    obs = shell(env, "python --version && pip --version && python3 -c 'import pandas, sklearn'")
    assert obs["exit_code"] == 0, (obs["stdout"], obs["stderr"])
    assert obs["stdout"].startswith("Python 3."), obs["stdout"]


# --- any image with python3 ------------------------------------------------------------------------------
SECOND_IMAGE = "mle-env-test-bare:latest"
SECOND_DOCKERFILE = """FROM mle-env-agent:cpu
# no curl, no `python` alias, no agent user, another working directory
RUN rm -f /usr/bin/curl /usr/bin/python && userdel -r agent
WORKDIR /
"""


@pytest.fixture(scope="module")
def second_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    from conftest import docker_ready

    ok, reason = docker_ready()
    if not ok:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("second-image")
    (folder / "Dockerfile").write_text(SECOND_DOCKERFILE)
    subprocess.run(["docker", "build", "-q", "-t", SECOND_IMAGE, str(folder)], check=True, capture_output=True)
    yield SECOND_IMAGE
    subprocess.run(["docker", "rmi", "-f", SECOND_IMAGE], capture_output=True)


def test_another_image_with_python3_runs_a_whole_episode(second_image: str, tiny_prepared: str,
                                                         docker_engine: None) -> None:
    env = mle_env.make(tiny_prepared, sandbox="docker", image=second_image, memory="512m")
    try:
        env.reset()
        assert shell(env, "command -v curl || echo none")["stdout"] == "none\n"
        still_works(env)
        # the script falls back to Python's standard library without curl
        obs = shell(env, "head -3 /home/data/sample_submission.csv > /dev/null; "
                         "cp /home/data/sample_submission.csv /home/submission/submission.csv && "
                         "/home/validate_submission.sh")
        assert json.loads(obs["stdout"]) == {"result": VALID_MESSAGE}, (obs["stdout"], obs["stderr"])
        _, reward, terminated, _, info = env.step({"type": "submit"})
        assert terminated and info["grade"]["valid_submission"], info["grade"]
    finally:
        env.close()


# --- must show: an MLE-bench-style agent script medals on insults in docker --------------------------------
MLEBENCH_STYLE_SCRIPT = """\
import json, subprocess
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline, make_union

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
model = make_pipeline(
    make_union(TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True),
               TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)),
    LogisticRegression(C=8.0, max_iter=2000),
)
model.fit(train["Comment"], train["Insult"])
sample = pd.read_csv("/home/data/sample_submission_null.csv")
sample["Insult"] = model.predict_proba(test["Comment"])[:, 1]
sample.to_csv("/home/submission/submission.csv", index=False)
answer = subprocess.run(["curl", "-s", "-X", "POST", "-F", "file=@/home/submission/submission.csv",
                         "http://localhost:5000/validate"], capture_output=True, text=True).stdout
print("endpoint:", json.loads(answer)["result"])
"""


def test_an_mlebench_style_agent_script_medals_on_insults_in_docker(insults_home: Path, docker_engine: None,
                                                                   shared: Path) -> None:
    env = mle_env.make(INSULTS, sandbox="docker", leaderboard=shared / "mlebench-leaderboards" / f"{INSULTS}.csv")
    try:
        env.reset()
        encoded = base64.b64encode(MLEBENCH_STYLE_SCRIPT.encode()).decode()
        obs = shell(env, f"echo {encoded} | base64 -d > /home/code/train.py && cd /home/code && "
                         "python train.py > /home/logs/train.log 2>&1; cat /home/logs/train.log", timeout=600)
        assert f"endpoint: {VALID_MESSAGE}" in obs["stdout"], (obs["stdout"], obs["stderr"])
        _, reward, terminated, _, info = env.step({"type": "submit"})
        assert terminated and info["status"] == "submitted"
        assert info["grade"]["any_medal"] and reward >= 1, info["grade"]
    finally:
        env.close()


# --- image builds that cannot reach a registry say what they need -----------------------------------------
def test_a_build_without_a_registry_says_what_it_needs_in_one_line() -> None:
    from mle_env.sandbox.images import build_failure

    error = ('Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.0.0.1:53: '
             "no such host")
    gpu = build_failure("mle-env-agent:cuda", "Dockerfile.cuda", error)
    assert "nvidia/cuda base image from Docker Hub" in gpu and "docker load -i image.tar" in gpu
    assert "--offline" not in gpu and "\n" not in gpu
    cpu = build_failure("mle-env-agent:cpu", "Dockerfile.cpu", error)
    assert "mle-env image build --offline" in cpu
    other = build_failure("x:1", "Dockerfile.cpu", "The command '/bin/sh -c false' returned a non-zero code: 1")
    assert other == "building x:1 failed: The command '/bin/sh -c false' returned a non-zero code: 1"


def test_image_build_if_needed_skips_a_current_image(capsys: pytest.CaptureFixture[str], docker_engine: None) -> None:
    from mle_env.cli import main
    from mle_env.sandbox.images import DEFAULT_IMAGE, RECIPE_VERSION

    assert main(["image", "build", "--offline", "--if-needed"]) == 0
    assert f"{DEFAULT_IMAGE} exists and is current (recipe {RECIPE_VERSION})" in capsys.readouterr().out
