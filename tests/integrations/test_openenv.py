"""mle-env's OpenEnv server, driven by OpenEnv's own WebSocket client on loopback: a whole insults episode to a
medal through a real ``mle-env serve`` process, and the session rules (one sandbox per session, sandboxes
removed on disconnect and after idling, the session cap, malformed actions as observations) against the same
app run by uvicorn in a thread of the test (which lets a test drop a connection without a goodbye). Every
client sends the server's token (TOKEN); tests/security/test_attack_serve.py checks the refusals."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import openenv.core  # noqa: F401
except ImportError as e:  # pragma: no cover - the openenv extra is part of the test environment
    if os.environ.get("MLE_ENV_REQUIRE_RL") == "1":
        raise
    pytest.skip(f"cannot import openenv ({e}); pip install 'mle-env[openenv]'", allow_module_level=True)

import uvicorn
from insults_script import ACTIONS
from openenv.core import GenericEnvClient
from websockets.sync.client import connect as ws_connect

from mle_env.cli import main as cli_main
from mle_env.integrations.openenv import MLEAction, MLEEnvClient, TokenAuth, create_app
from mle_env.integrations.openenv.auth import TOKEN_ENV, bearer_header
from mle_env.integrations.openenv.server import STATEFUL_ONLY

REPO = Path(__file__).resolve().parents[2]
TOKEN = "test-token-of-mle-env-serve"  # every server of these tests has it; every client sends it


class TokenGenericClient(TokenAuth, GenericEnvClient):
    """OpenEnv's GenericEnvClient, sending the server's token."""


# --- helpers -------------------------------------------------------------------------------------------
def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.1)


def sandbox_base(result: Any) -> Path:
    """The host folder of the local sandbox a reset started (removed when the sandbox is)."""
    return Path(result.observation.info["sandbox_info"]["extra"]["base"])


def connect(url: str, token: str | None = TOKEN) -> Any:
    return MLEEnvClient(base_url=url, token=token).sync()


def http(url: str, path: str, body: Any = None, token: str | None = TOKEN) -> tuple[int, Any]:
    """``(status, JSON reply)`` of a GET (or a POST of ``body`` as JSON) to the server, sending ``token``."""
    headers = {"Content-Type": "application/json", **(bearer_header(token) if token else {})}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}{path}", data=data, headers=headers,
                                     method="GET" if data is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def ws_session(url: str, token: str | None = TOKEN) -> Any:
    """A raw WebSocket session (websockets' sync client) on the server's /ws, sending ``token``."""
    return ws_connect(url.replace("http", "ws", 1) + "/ws", additional_headers=bearer_header(token) if token else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def thread_server(insults_home: Path, bwrap_ready: None) -> Iterator[Callable[..., str]]:
    """``start(**create_app options)``: the app served by uvicorn in a thread; returns its http:// URL."""
    running: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(**options: Any) -> str:
        app = create_app("insults", env_options={"sandbox": "local"}, **{"token": TOKEN, **options})
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        wait_until(lambda: server.started, 30, "the server's start")
        running.append((server, thread))
        return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"

    yield start
    for server, thread in running:
        server.should_exit = True
        thread.join(30)


# --- the whole episode, through the real command -------------------------------------------------------
@pytest.mark.slow
def test_insults_episode_medals_through_mle_env_serve(insults_home: Path, bwrap_ready: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MLE_ENV_HOME": str(insults_home), "PYTHONPATH": str(REPO), TOKEN_ENV: TOKEN}
    # an idle timeout shorter than the training step: a running action keeps its session open
    proc = subprocess.Popen([sys.executable, "-m", "mle_env", "serve", "--port", str(port), "--competition",
                             "insults", "--sandbox", "local", "--idle-timeout", "3", "--log-level", "warning"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def healthy() -> bool:
            assert proc.poll() is None, f"the server exited: {proc.stdout.read() if proc.stdout else ''}"
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    return json.load(r)["status"] == "healthy"
            except OSError:
                return False

        wait_until(healthy, 60, "the server's start")
        status, schema = http(url, "/schema")
        assert status == 200
        assert set(schema["action"]["properties"]["type"]["enum"]) == {"shell", "python", "validate", "submit",
                                                                       "score_dev"}
        # OpenEnv's stateless routes cannot hold an episode
        assert http(url, "/step", {}) == (409, {"detail": STATEFUL_ONLY})

        with connect(url) as client:
            result = client.reset(seed=0)
            obs = result.observation
            assert (result.done, result.reward, obs.action, obs.status) == (False, None, "reset", "running")
            assert obs.prompt.startswith(obs.task.rstrip()) and "# Files" in obs.prompt and "train.csv" in obs.files
            assert obs.info["competition_id"] == "detecting-insults-in-social-commentary"
            assert obs.info["sandbox"] == "local"
            base = sandbox_base(result)
            assert base.is_dir()
            steps = []
            for action in ACTIONS:
                steps.append(client.step(MLEAction(**action)))
                assert steps[-1].observation.exit_code == 0, steps[-1].observation.prompt
            assert "Insult" in steps[0].observation.stdout
            assert steps[2].observation.stdout == "valid"
            assert all(not s.done and s.reward == 0 and s.observation.grade is None for s in steps[:-1])
            last = steps[-1]
            assert last.done and last.observation.terminated and not last.observation.truncated
            assert last.observation.status == "submitted"
            grade = last.observation.grade
            assert grade is not None and grade["valid_submission"] and grade["score"] > 0.85
            assert last.reward == grade["medal_tier"] >= 1
            state = client.state()
            assert (state.step_count, state.status, state.competition) == (
                4, "submitted", "detecting-insults-in-social-commentary")
            assert Path(state.episode_dir, "grade.json").is_file()
            with pytest.raises(RuntimeError, match="the episode has ended: send reset"):
                client.step(MLEAction(type="shell", code="true"))
        wait_until(lambda: not base.exists(), 15, "removing the closed session's sandbox")

        # any OpenEnv client that sends the token will do (dicts in, dicts out; here the token comes from the
        # environment variable); stopping the server removes the sandboxes still open
        monkeypatch.setenv(TOKEN_ENV, TOKEN)
        other = TokenGenericClient(base_url=url).sync()
        monkeypatch.delenv(TOKEN_ENV)
        other.connect()
        opened = other.reset(seed=3)
        assert other.step({"type": "python", "code": "print(6 * 7)"}).observation["stdout"] == "42\n"
        proc.terminate()
        proc.wait(30)
        assert not Path(opened.observation["info"]["sandbox_info"]["extra"]["base"]).exists()
        other.close()
    finally:
        proc.terminate()
        proc.wait(30)


# --- session rules -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_two_sessions_at_once_each_have_their_own_sandbox(thread_server: Callable[..., str]) -> None:
    url = thread_server(max_sessions=2)
    a, b = connect(url), connect(url)
    try:
        base_a, base_b = sandbox_base(a.reset(seed=1)), sandbox_base(b.reset(seed=2))
        assert base_a != base_b and base_a.is_dir() and base_b.is_dir()
        assert a.step("echo from-a > code/mark.txt").observation.exit_code == 0
        assert b.step("cat code/mark.txt").observation.exit_code != 0  # not in b's workspace
        assert a.step("cat code/mark.txt").observation.stdout == "from-a\n"

        # the sessions' actions run at the same time, not one after the other
        results: dict[str, Any] = {}
        threads = [threading.Thread(target=lambda n=n, c=c: results.__setitem__(n, c.step("sleep 2; echo $$")))
                   for n, c in (("a", a), ("b", b))]
        began = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert time.monotonic() - began < 3.5
        assert all(r.observation.exit_code == 0 for r in results.values())
        assert a.state().episode_id != b.state().episode_id

        a.close()
        wait_until(lambda: not base_a.exists(), 15, "removing the closed session's sandbox")
        assert base_b.is_dir() and b.step("true").observation.exit_code == 0
    finally:
        a.close()
        b.close()
    wait_until(lambda: not base_b.exists(), 15, "removing the second session's sandbox")


def test_a_vanished_client_has_its_session_closed_and_sandbox_removed(thread_server: Callable[..., str]) -> None:
    url = thread_server(max_sessions=1)
    client = connect(url)
    base = sandbox_base(client.reset())
    assert base.is_dir()
    # the connection drops without OpenEnv's close message (as when the trainer is killed)
    ws = client.async_client._ws
    client._loop.call_soon_threadsafe(ws.transport.abort)
    wait_until(lambda: not base.exists(), 15, "removing the vanished client's sandbox")
    client._stop_loop()
    with connect(url) as again:  # its slot is free again
        assert again.reset().observation.action == "reset"


@pytest.mark.slow
def test_idle_sessions_are_closed_but_never_while_an_action_runs(thread_server: Callable[..., str]) -> None:
    url = thread_server(idle_timeout=1)
    with connect(url) as client:
        base = sandbox_base(client.reset())
        assert client.step("sleep 2.5; echo done").observation.stdout == "done\n"  # longer than the timeout
        assert client.step("echo still open").observation.stdout == "still open\n"
        wait_until(lambda: not base.exists(), 10, "closing the idle session")
        with pytest.raises(RuntimeError, match=r"closed after 1 s without a reset or step .*--idle-timeout"):
            client.step("true")
        with pytest.raises(RuntimeError, match="--idle-timeout"):
            client.reset()
    with connect(url) as again:
        assert again.reset().observation.action == "reset"


def test_one_session_more_than_max_sessions_is_refused_in_one_line(thread_server: Callable[..., str]) -> None:
    url = thread_server(max_sessions=1)
    first = connect(url)
    first.reset()
    with connect(url) as second, pytest.raises(RuntimeError) as refused:
        second.reset()
    message = str(refused.value)
    assert "all 1 sessions of this server are in use" in message and "--max-sessions" in message
    assert "\n" not in message
    first.close()
    wait_until(lambda: _resets(url), 15, "a new session once the first closed")


def _resets(url: str) -> bool:
    try:
        with connect(url) as client:
            return client.reset().observation.action == "reset"
    except RuntimeError:
        return False


def test_malformed_actions_are_observations_and_bad_messages_errors(thread_server: Callable[..., str]) -> None:
    url = thread_server()
    with connect(url) as client:
        with pytest.raises(RuntimeError, match="no episode in this session: send reset first"):
            client.step("true")
        with pytest.raises(RuntimeError, match="Unknown competition .no-such-competition.. Run `mle-env list`"):
            client.reset(competition="no-such-competition")
        with pytest.raises(RuntimeError, match=r"unknown option\(s\) colour"):
            client.reset(colour="blue")
        client.reset()
        malformed = [{"type": "rm"}, {"type": "shell"}, {"type": "shell", "code": "ls", "timeout": "soon"},
                     {"code": "ls"}, {"type": "submit", "extra": 1}, {"type": "shell", "code": "ls", "timeout": -1},
                     {"type": "score_dev"}]
        for payload in malformed:
            result = client.step(payload)
            obs = result.observation
            assert (obs.action, obs.exit_code, result.done, result.reward) == ("invalid", 1, False, 0.0), payload
            assert obs.message.startswith("malformed action") and "\n" not in obs.message
            assert obs.prompt.startswith("invalid: exit code 1")
        assert client.state().step_count == len(malformed)
        assert client.step("echo still here").observation.stdout == "still here\n"

    # messages that are not OpenEnv messages at all get error replies; the server and the session go on
    with ws_session(url) as ws:
        for raw in ("not json", json.dumps({"type": "step", "data": "ls"}), json.dumps({"type": "dance"})):
            ws.send(raw)
            assert json.loads(ws.recv(10))["type"] == "error"
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(30))["data"]["observation"]["action"] == "reset"


@pytest.mark.parametrize(("argv", "expected"), [
    (["--max-sessions", "0"], "--max-sessions"),
    (["--idle-timeout", "-1"], "--idle-timeout"),
    (["--competition", "no-such-competition"], "no-such-competition"),
    (["--memory", "lots"], "memory"),
])
def test_serve_rejects_bad_options_in_one_line(insults_home: Path, capsys: pytest.CaptureFixture[str],
                                              argv: list[str], expected: str) -> None:
    assert cli_main(["serve", "--port", str(free_port()), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and expected in err and "\n" not in err


def test_a_server_for_a_set_resets_into_the_member_at_the_seed(practice_home: Path, bwrap_ready: None) -> None:
    from mle_env.competition.registry import task_set
    from mle_env.integrations.openenv.server import MLEEnvironment

    held_out = task_set("practice-eval")
    create_app("practice-eval", env_options={"sandbox": "local"}, token=TOKEN)  # every member is checked
    env = MLEEnvironment("practice-eval", {"sandbox": "local"})
    try:
        env.reset(seed=len(held_out) + 1)
        assert env.state.competition == held_out[1]
    finally:
        env.close()
