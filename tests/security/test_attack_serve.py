"""Attacks on ``mle-env serve`` (the OpenEnv server): a client without the server's token, or with a wrong one,
gets 401 on every route (HTTP, the WebSocket upgrade, MCP) and opens no session, whichever OS user it runs as;
a server that would be reachable from other hosts does not start without a token its owner chose; sessions
made through MCP take slots like WebSocket ones and are closed after idling; a frame that is not one JSON
object is answered in one line and the session goes on. Real servers on 127.0.0.1 only: the app under
uvicorn in a thread of the test, and a real ``mle-env serve`` process; every sandbox is the local one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integrations"))
import test_openenv  # noqa: E402  (the OpenEnv tests' servers and clients; skips this module without openenv)
from test_openenv import REPO, TOKEN, connect, free_port, http, wait_until, ws_session  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

from mle_env.integrations.openenv import MLEEnvClient  # noqa: E402
from mle_env.integrations.openenv.auth import TOKEN_ENV, check_host, is_loopback  # noqa: E402

WRONG_TOKENS = ["x" * len(TOKEN), TOKEN[:-1], TOKEN + "x", TOKEN.upper()]
CREATE = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
ONE_SLOT = {"max_sessions": 1}
# a valid (constant) submission of the insults competition, quickly
WRITE_SUBMISSION = {"type": "python", "code": "import os, pandas as pd\nt = pd.read_csv('data/test.csv')\n"
                    "t.insert(0, 'Insult', 0.5)\nos.makedirs('submission', exist_ok=True)\n"
                    "t.to_csv('submission/submission.csv', index=False)"}
thread_server = test_openenv.thread_server  # the fixture: start(**create_app options) -> URL, token TOKEN


def refused(status: int, reply: Any, words: str) -> None:
    """A 401 whose JSON says what to do in one line."""
    assert status == 401, (status, reply)
    assert isinstance(reply, dict) and words in reply["detail"] and "Authorization: Bearer" in reply["detail"]
    assert "\n" not in reply["detail"]


def upgrade_refused(url: str, path: str, token: str | None) -> tuple[int, Any]:
    """Status and JSON body of the server's answer to a WebSocket upgrade on ``path`` sending ``token``."""
    from websockets.sync.client import connect as ws_connect

    headers = {"Authorization": f"Bearer {token}"} if token else None
    with pytest.raises(InvalidStatus) as e:
        ws_connect(url.replace("http", "ws", 1) + path, additional_headers=headers, open_timeout=10)
    return e.value.response.status_code, json.loads(bytes(e.value.response.body))


def try_every_route(url: str, token: str | None, words: str) -> None:
    for path, body in (("/schema", None), ("/metadata", None), ("/openapi.json", None), ("/docs", None),
                       ("/step", {}), ("/mcp", CREATE), ("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                                                                   "params": {}})):
        status, reply = http(url, path, body, token=token)
        refused(status, reply, words)
    for path in ("/ws", "/mcp"):
        refused(*upgrade_refused(url, path, token), words)


def the_one_slot_is_free(url: str) -> None:
    """With --max-sessions 1, a client with the token gets the server's only session: nothing took it."""
    with connect(url) as client:
        assert client.reset().observation.action == "reset"


# --- the token ---------------------------------------------------------------------------------------
def test_no_token_gets_401_on_http_websocket_and_mcp_and_opens_no_session(
        thread_server: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    url = thread_server(**ONE_SLOT)
    try_every_route(url, None, "this server needs a token")
    with pytest.raises(ConnectionError, match=r"refused the connection \(401\): this server needs a token"):
        connect(url, token=None).connect()
    assert http(url, "/health", token=None) == (200, {"status": "healthy"})  # liveness only, open to all
    the_one_slot_is_free(url)


@pytest.mark.parametrize("wrong", WRONG_TOKENS, ids=["same-length", "prefix", "longer", "other-case"])
def test_a_wrong_token_gets_401_and_opens_no_session(thread_server: Callable[..., str], wrong: str) -> None:
    url = thread_server(**ONE_SLOT)
    try_every_route(url, wrong, "wrong token")
    with pytest.raises(ConnectionError, match=r"\(401\): wrong token"):
        connect(url, token=wrong).connect()
    for scheme in ("Basic", "Token"):  # the right token under another scheme is no token
        request = urllib.request.Request(f"{url}/schema", headers={"Authorization": f"{scheme} {TOKEN}"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(request, timeout=10)
        refused(e.value.code, json.load(e.value), "this server needs a token")
    the_one_slot_is_free(url)


def test_the_right_token_runs_an_episode_to_its_grade(thread_server: Callable[..., str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    url = thread_server()
    monkeypatch.setenv(TOKEN_ENV, TOKEN)  # MLEEnvClient without token= reads the variable
    with MLEEnvClient(base_url=url).sync() as client:
        assert client.reset(seed=0).observation.action == "reset"
        wrote = client.step(WRITE_SUBMISSION)
        assert wrote.observation.exit_code == 0, wrote.observation.prompt
        last = client.step({"type": "submit"})
        assert last.done and last.observation.status == "submitted"
        assert last.observation.grade is not None and last.observation.grade["valid_submission"]
    assert http(url, "/schema")[0] == 200


# --- who may listen where ------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "example.org"])
def test_a_non_loopback_host_without_a_chosen_token_is_refused_at_start(host: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV} | {"PYTHONPATH": str(REPO)}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mle_env", "serve", "--host", host, "--port", str(free_port()),
                           "--sandbox", "local"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and time.monotonic() - began < 30
    err = done.stderr.strip()
    assert "\n" not in err and err.startswith("error: ") and f"--host {host}" in err, err
    assert "reachable from other hosts" in err and TOKEN_ENV in err and "--token" in err and "127.0.0.1" in err
    assert "mle-env serve:" not in done.stdout  # refused before it served anything


def test_loopback_needs_no_chosen_token_and_another_host_warns_with_one() -> None:
    for host in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST."):
        assert is_loopback(host) and check_host(host, None) is None, host
    warning = check_host("0.0.0.0", TOKEN_ENV)
    assert warning is not None and "reachable from other hosts" in warning and "\n" not in warning


@pytest.mark.parametrize("token", ["short", "with a space in it, sixteen+", "ünïcödé-token-0123456789"])
def test_a_weak_or_odd_token_is_refused_at_start(token: str, insults_home: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from mle_env.cli import main as cli_main

    assert cli_main(["serve", "--port", str(free_port()), "--token", token]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --token must be at least 16") and "secrets.token_urlsafe" in err
    assert "\n" not in err


# --- a real `mle-env serve`, its generated token and another OS user ------------------------------------
@pytest.fixture(scope="module")
def cli_server(insults_session_home: Path, bwrap_ready: None,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """``mle-env serve`` with no token given: (process, URL, the token it printed)."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "stderr.txt"
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    env |= {"MLE_ENV_HOME": str(insults_session_home), "PYTHONPATH": str(REPO)}
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "mle_env", "serve", "--port", str(port), "--competition",
                                 "insults", "--sandbox", "local", "--max-sessions", "1", "--log-level", "warning"],
                                env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(2)] if proc.stdout else []
        assert lines[0].startswith("mle-env serve: http://127.0.0.1:"), (lines, log.read_text())
        assert lines[1].startswith("token: ") and "generated" in lines[1], lines
        token = lines[1].split()[1]
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _healthy(url), 60, "the server's start")
        yield proc, url, token
    finally:
        proc.terminate()
        proc.wait(30)


def _healthy(url: str) -> bool:
    try:
        return http(url, "/health", token=None) == (200, {"status": "healthy"})
    except OSError:
        return False


@pytest.mark.slow
def test_the_printed_token_opens_a_whole_episode(cli_server: tuple[subprocess.Popen[str], str, str]) -> None:
    proc, url, token = cli_server
    assert len(token) >= 32 and token != TOKEN
    try_every_route(url, None, "this server needs a token")
    with MLEEnvClient(base_url=url, token=token).sync() as client:
        client.reset(seed=1)
        assert client.step(WRITE_SUBMISSION).observation.exit_code == 0
        last = client.step({"type": "submit"})
        assert last.done and last.observation.grade is not None and last.observation.grade["valid_submission"]
    assert token not in Path(f"/proc/{proc.pid}/cmdline").read_text()


def _as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *argv],
                          capture_output=True, text=True, timeout=60)


def _curl_status(url: str, *headers: str, data: str | None = None) -> str:
    argv = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", url]
    for header in headers:
        argv += ["-H", header]
    if data is not None:
        argv += ["-H", "Content-Type: application/json", "--data", data]
    return _as_nobody(*argv).stdout


@pytest.mark.skipif(os.geteuid() != 0 or not (shutil.which("setpriv") and shutil.which("curl")),
                    reason="needs root, setpriv and curl to act as another user")
def test_another_os_user_cannot_use_the_server_nor_read_its_token(
        cli_server: tuple[subprocess.Popen[str], str, str]) -> None:
    proc, url, token = cli_server
    upgrade = ("Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
    assert _curl_status(f"{url}/schema") == "401"
    assert _curl_status(f"{url}/mcp", data=json.dumps(CREATE)) == "401"
    assert _curl_status(f"{url}/ws", *upgrade) == "401"
    assert _curl_status(f"{url}/ws", *upgrade, "Authorization: Bearer guessed-token-0123456789") == "401"
    # the token is nowhere that user can read: not in the command line, and the server's environment and open
    # files (its stdout) are the server owner's
    cmdline = _as_nobody("cat", f"/proc/{proc.pid}/cmdline")
    assert cmdline.returncode == 0 and token not in cmdline.stdout
    assert _as_nobody("cat", f"/proc/{proc.pid}/environ").returncode != 0
    assert _as_nobody("ls", f"/proc/{proc.pid}/fd").returncode != 0
    # the token, not the user, is what the server checks
    assert _curl_status(f"{url}/schema", f"Authorization: Bearer {token}") == "200"
    with connect(url, token=token) as client:  # and its only slot is still free
        assert client.reset().observation.action == "reset"


# --- sessions made through MCP ---------------------------------------------------------------------------
def _mcp(url: str, method: str, **params: Any) -> dict[str, Any]:
    status, reply = http(url, "/mcp", {"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    assert status == 200, reply
    return reply


def test_mcp_sessions_take_slots_and_are_closed_when_idle(thread_server: Callable[..., str]) -> None:
    url = thread_server(max_sessions=2, idle_timeout=1)
    made = [_mcp(url, "openenv/session/create")["result"]["session_id"] for _ in range(2)]
    full = _mcp(url, "openenv/session/create")["error"]["message"]
    assert "all 2 sessions of this server are in use" in full and "--max-sessions" in full and "\n" not in full
    with connect(url) as client, pytest.raises(RuntimeError, match="all 2 sessions .* --max-sessions"):
        client.reset()  # a WebSocket session is refused too

    # MCP requests are no activity (this environment has none of MCP's tools): sessions pinged all the time
    # through MCP are closed once idle all the same
    def pinged_and_gone() -> bool:
        return all("Unknown session_id" in str(_mcp(url, "tools/list", session_id=sid).get("error")) for sid in made)

    wait_until(pinged_and_gone, 10, "closing the idle MCP sessions while they are pinged")

    with connect(url) as client:  # the slots are free again; a WebSocket session and an MCP one fill them
        assert client.reset().observation.action == "reset"
        assert "session_id" in _mcp(url, "openenv/session/create")["result"]
        assert "all 2 sessions" in _mcp(url, "openenv/session/create")["error"]["message"]


# --- malformed frames --------------------------------------------------------------------------------------
MALFORMED: list[tuple[str, str | bytes]] = [
    ("array", "[1, 2]"),
    ("string", '"reset"'),
    ("number", "42"),
    ("null", "null"),
    ("invalid JSON", "{'type': 'reset'}"),
    ("10,000-deep array", "[" * 10_000 + "]" * 10_000),
    ("10,000-deep object", '{"a":' * 10_000 + "1" + "}" * 10_000),
    ("deep inside a message", json.dumps({"type": "step", "data": {}})[:-2] + '"x": ' + "[" * 10_000 + "]" * 10_000
     + "}}"),
    ("100-deep reset options", '{"type": "reset", "data": {"options": ' + '{"a": ' * 100 + "1" + "}" * 102),
    ("binary", b"\x00\xff{}"),
    ("binary JSON", json.dumps({"type": "state"}).encode()),
]


def test_a_malformed_frame_is_answered_in_one_line_and_the_session_goes_on(
        thread_server: Callable[..., str]) -> None:
    url = thread_server()
    with ws_session(url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(60))["data"]["observation"]["action"] == "reset"
        ws.send(json.dumps({"type": "step", "data": {"type": "shell", "code": "echo kept > code/mark.txt"}}))
        assert json.loads(ws.recv(60))["data"]["observation"]["exit_code"] == 0
        ws.send(json.dumps({"type": "state"}))
        episode = json.loads(ws.recv(10))["data"]
        for name, frame in MALFORMED:
            ws.send(frame)
            raw = ws.recv(10)
            assert isinstance(raw, str) and "\n" not in raw, name
            reply = json.loads(raw)
            assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON", (name, reply)
            assert "send one JSON object per text frame" in reply["data"]["message"], (name, reply)
            ws.send(json.dumps({"type": "state"}))  # the same session, the same episode
            assert json.loads(ws.recv(10))["data"] == episode, name
        ws.send(json.dumps({"type": "step", "data": {"type": "shell", "code": "cat code/mark.txt"}}))
        obs = json.loads(ws.recv(60))["data"]["observation"]
        assert obs["stdout"] == "kept\n"
