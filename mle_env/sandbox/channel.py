"""The host's side of the persistent channel to a sandbox's worker (JSON lines, see worker.py).

Two transports: :class:`PipeTransport` (a local subprocess's stdin/stdout) and
:class:`DockerStreamTransport` (the socket of an attached ``docker exec``, whose output arrives in
Docker's multiplexed frames: an 8-byte header with the stream number and length, then the payload).
:class:`WorkerClient` sends requests and waits for the matching response; when the worker cannot be
reached it raises SandboxUnavailable, never returns a made-up result. Events the worker sends while a
request is in flight (the validation endpoint's, see worker.py) go to ``on_event``, whose answer, if any,
is sent back at once. :meth:`WorkerClient.cancel` asks the worker to stop the action in flight; it only
sets a flag, so a signal handler may call it, and the waiting loop sends the request within
``_POLL_S``.
"""

from __future__ import annotations

import base64
import json
import os
import select
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import IO, Any, Protocol

from mle_env.errors import SandboxUnavailable
from mle_env.sandbox.exec_result import ExecResult

# the worker enforces action timeouts itself; the host waits this much longer before it gives up on it. A worker
# that dies closes the channel at once; only a live one that cannot answer waits this out, so it is generous:
# after a fork bomb on a starved machine (load 80 on 2 cores), killing the bomb's processes took over 15 s
_GRACE_S = 60.0
# a response holds two capped output streams; anything longer than this is not the worker speaking
MAX_RESPONSE_BYTES = 64 * 2**20
_DIAGNOSTICS_BYTES = 4096
# how often a waiting call looks for a cancel to send, in seconds
_POLL_S = 0.1


class StderrTail:
    """Reads a worker's stderr in a thread and keeps only its last few KiB (whatever is written to it)."""

    def __init__(self, stream: IO[bytes], keep: int = _DIAGNOSTICS_BYTES) -> None:
        self.keep = keep
        self.tail = bytearray()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while chunk := stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(1 << 16):
                with self.lock:
                    self.tail += chunk
                    del self.tail[: max(0, len(self.tail) - self.keep)]
        except (OSError, ValueError):
            pass

    def __call__(self) -> str:
        with self.lock:
            return bytes(self.tail).decode("utf-8", "replace")


class Transport(Protocol):
    def send(self, data: bytes) -> None: ...
    def read_chunk(self, timeout: float) -> bytes | None:
        """Protocol bytes from the worker, b"" at end of stream, None if nothing came within ``timeout``."""
    def diagnostics(self) -> str: ...
    def close(self) -> None: ...


class PipeTransport:
    """A worker running as a local subprocess: requests on its stdin, responses on its stdout.

    The file descriptors stay owned by the ``subprocess.Popen`` that created them."""

    def __init__(self, stdin_fd: int, stdout_fd: int, stderr_tail: Any = None) -> None:
        self.stdin_fd, self.stdout_fd = stdin_fd, stdout_fd
        self.stderr_tail = stderr_tail

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.stdin_fd, view):]

    def read_chunk(self, timeout: float) -> bytes | None:
        ready, _, _ = select.select([self.stdout_fd], [], [], timeout)
        return os.read(self.stdout_fd, 1 << 16) if ready else None

    def diagnostics(self) -> str:
        return self.stderr_tail() if callable(self.stderr_tail) else ""

    def close(self) -> None:
        pass  # the fds belong to the subprocess's pipes, which its owner closes


class DockerStreamTransport:
    """An attached ``docker exec`` socket; stdout frames carry the protocol, stderr frames diagnostics."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.raw = bytearray()
        self.stderr: deque[bytes] = deque(maxlen=64)

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_chunk(self, timeout: float) -> bytes | None:
        deadline = time.monotonic() + timeout
        while True:
            payload = self._next_frame()
            if payload is not None:
                return payload
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.sock], [], [], max(0.0, remaining))
            if not ready:
                return None
            data = self.sock.recv(1 << 16)
            if not data:
                return b""
            self.raw += data

    def _next_frame(self) -> bytes | None:
        while len(self.raw) >= 8:
            stream, size = self.raw[0], struct.unpack(">I", self.raw[4:8])[0]
            if len(self.raw) < 8 + size:
                return None
            payload = bytes(self.raw[8 : 8 + size])
            del self.raw[: 8 + size]
            if stream == 1:
                return payload
            self.stderr.append(payload[-_DIAGNOSTICS_BYTES:])
        return None

    def diagnostics(self) -> str:
        return b"".join(self.stderr).decode("utf-8", "replace")[-2000:]

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class WorkerClient:
    """Request/response over a transport; one request in flight at a time."""

    def __init__(self, transport: Transport, describe: str,
                 on_event: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> None:
        self.transport = transport
        self.describe = describe
        self.on_event = on_event
        self.buffer = bytearray()
        self.next_id = 0
        self.closed = False
        self._in_flight: int | None = None  # the shell or python request being waited for
        self._cancel: int | None = None  # the request cancel() asked to stop

    def call(self, op: str, wait: float, grace: float = _GRACE_S, **fields: Any) -> dict[str, Any]:
        """Send one request and wait up to ``wait + grace`` seconds for its response.

        Raises:
            SandboxUnavailable: the channel broke or the worker stopped answering.
        """
        if self.closed:
            raise SandboxUnavailable(f"{self.describe} is closed")
        self.next_id += 1
        request = {"id": self.next_id, "op": op, **fields}
        self._send(request)
        deadline = time.monotonic() + wait + grace
        self._in_flight = self.next_id if op in ("shell", "python") else None
        try:
            return self._wait(deadline)
        finally:
            self._in_flight = self._cancel = None

    def cancel(self) -> bool:
        """Ask the worker to stop the shell or python action in flight (see worker.py); returns whether one
        was. Safe from a signal handler or another thread: the waiting call sends the request."""
        target = self._in_flight
        if target is None or self.closed:
            return False
        self._cancel = target
        return True

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self.transport.send(json.dumps(message).encode() + b"\n")
        except OSError as e:
            raise self._gone(f"cannot send to the worker ({e})") from e

    def _wait(self, deadline: float) -> dict[str, Any]:
        while True:
            line = self._line(deadline)
            try:
                response = json.loads(line)
            except ValueError:
                raise self._gone(f"the worker sent a line that is not JSON ({bytes(line[:80])!r})") from None
            if not isinstance(response, dict):
                raise self._gone(f"the worker sent {type(response).__name__}, not an object")
            if "event" in response:
                began = time.monotonic()
                self._handle_event(response)
                deadline += time.monotonic() - began  # the host's own work (a validation) is not the worker's
                continue
            if response.get("id") == self.next_id:
                if "error" in response:
                    raise self._gone(f"the worker failed: {response['error']}")
                return response

    def _handle_event(self, event: dict[str, Any]) -> None:
        reply = self.on_event(event) if self.on_event is not None else None
        if reply is not None:
            self._send(reply)

    def put(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create the file ``path`` (relative to the working directory) with ``data``, owned by the worker."""
        self.call("put", 30.0, path=path, data=base64.b64encode(data).decode(), mode=mode)

    def _line(self, deadline: float) -> bytearray:
        """The next line, read in linear time (the search resumes where it stopped) and capped in size."""
        searched = 0
        while (end := self.buffer.find(b"\n", searched)) < 0:
            searched = len(self.buffer)
            if searched > MAX_RESPONSE_BYTES:
                raise self._gone(f"the worker sent a line of over {MAX_RESPONSE_BYTES} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._gone("the worker stopped answering")
            if self._cancel is not None and self._cancel == self._in_flight:
                self._send({"op": "cancel", "target": self._cancel})
                self._cancel = None
            try:
                chunk = self.transport.read_chunk(min(remaining, _POLL_S))
            except OSError as e:
                raise self._gone(f"the channel broke ({e})") from e
            if chunk == b"":
                raise self._gone("the worker's channel closed")
            if chunk:
                self.buffer += chunk
        line = self.buffer[:end]
        del self.buffer[: end + 1]
        return line

    def _gone(self, why: str) -> SandboxUnavailable:
        self.closed = True
        detail = self.transport.diagnostics().strip()
        return SandboxUnavailable(f"{self.describe}: {why}" + (f"; worker said: {detail[-500:]}" if detail else ""))

    def exec(self, kind: str, code: str, timeout: float, max_output: int) -> ExecResult:
        r = self.call(kind, timeout, code=code, timeout=timeout, max_output=max_output)
        try:
            return ExecResult(
                stdout=str(r["stdout"]), stderr=str(r["stderr"]),
                exit_code=None if r["exit_code"] is None else int(r["exit_code"]), timed_out=bool(r["timed_out"]),
                cancelled=bool(r.get("cancelled", False)),
                stdout_bytes=int(r["stdout_bytes"]), stderr_bytes=int(r["stderr_bytes"]),
                duration_s=float(r["duration"]), note=str(r.get("note", "")),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise self._gone(f"the worker's response is malformed ({type(e).__name__}: {e})") from None

    def shutdown(self, timeout: float = 5.0) -> None:
        """Ask the worker to kill everything it started, then close the channel (errors ignored)."""
        if not self.closed:
            try:
                self.call("shutdown", 0.0, grace=timeout)
            except SandboxUnavailable:
                pass
        self.closed = True
        self.transport.close()
