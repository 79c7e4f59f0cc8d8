"""The process that runs inside every sandbox and executes actions (standard library only, Python >= 3.8).

The host keeps one persistent channel to it (a pipe for the local sandbox, an attached ``docker exec``
stream for docker), so an action costs a message round trip instead of a new process. Protocol: one
JSON object per line in each direction.

Requests:  {"id": n, "op": "shell"|"python", "code": str, "timeout": seconds, "max_output": bytes}
           {"id": n, "op": "ping"}  |  {"id": n, "op": "shutdown"}
Responses: {"id": n, "stdout": str, "stderr": str, "exit_code": int|null, "timed_out": bool,
            "stdout_bytes": int, "stderr_bytes": int, "duration": seconds, "note": str}

- ``shell`` runs ``bash -c code`` (``sh`` where bash is missing) in its own process group; on timeout the
  whole group is killed. Processes an action leaves in the background keep running, but what they print
  after the action ends is read and dropped: redirect it to a file to keep it. (When the sandbox's process
  limit leaves no room for the thread that reads it, their output pipe is closed instead.)
- ``python`` runs the code in ONE persistent interpreter (a child process), like a notebook cell: state
  carries over; the value of a final expression is printed. A timeout or a crash kills that interpreter;
  a fresh one starts and ``note`` says the state was lost.
- Output is capped: the first and last ``max_output / 2`` bytes of each stream are kept and the cut is
  marked, so 10 MB of output never sits in memory whole.
- Children get ``oom_score_adj = 1000`` so that, under a memory limit, the kernel kills the agent's
  program rather than this worker.
"""

import ast
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback

DEFAULT_MAX_OUTPUT = 64 * 1024
_READ = 65536


def _set_oom_score_adj(value: str) -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(value)
    except OSError:
        pass


def _spawn(args: list, **kwargs) -> subprocess.Popen:
    """Start ``args`` in a new session (its own process group) with oom_score_adj 1000.

    The score is inherited: the worker raises its own for the spawn and lowers it back (allowed without
    privileges down to the value it started with). A preexec_fn would do the same but makes every spawn
    about 1 ms slower.
    """
    _set_oom_score_adj("1000")
    try:
        return subprocess.Popen(args, start_new_session=True, close_fds=True, **kwargs)
    finally:
        _set_oom_score_adj("0")


class Capture:
    """Keeps the head and tail of a byte stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        kept = len(self.head) + len(self.tail)
        if self.total <= kept:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        cut = self.total - kept
        return (
            bytes(self.head).decode("utf-8", "replace")
            + f"\n[... {cut} bytes of output cut ...]\n"
            + bytes(self.tail).decode("utf-8", "replace")
        )


class Streams:
    """Non-blocking reads of a program's output pipes into Captures, plus an optional control pipe that
    delivers one status line (the persistent interpreter's "cell finished")."""

    def __init__(self, captures: dict) -> None:
        self.captures = captures
        self.sel = selectors.DefaultSelector()
        self.open = set()
        for fd in captures:
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ)
            self.open.add(fd)
        self.control = None
        self.control_buffer = b""
        self.control_line = None
        self.control_closed = False

    def watch(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.sel.register(fd, selectors.EVENT_READ)
        self.control = fd

    def read(self, until: float) -> None:
        """Read until ``until`` (monotonic), all output pipes close, or the control line arrives."""
        while self.open or self.control is not None:
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            for key, _ in self.sel.select(remaining):
                self._read_one(key.fd)
            if self.control_line is not None or self.control_closed:
                return

    def drain(self) -> None:
        """Take whatever is already in the pipes, without waiting."""
        for fd in list(self.open):
            while fd in self.open and self._read_one(fd):
                pass

    def _read_one(self, fd: int) -> bool:
        try:
            data = os.read(fd, _READ)
        except BlockingIOError:
            return False
        if fd == self.control:
            if not data:
                self.control_closed = True
                self._forget(fd)
                self.control = None
                return False
            self.control_buffer += data
            if b"\n" in self.control_buffer:
                self.control_line = self.control_buffer.split(b"\n", 1)[0]
                self._forget(fd)
                self.control = None
            return True
        if not data:
            self._forget(fd)
            self.open.discard(fd)
            return False
        self.captures[fd].feed(data)
        return True

    def _forget(self, fd: int) -> None:
        try:
            self.sel.unregister(fd)
        except (KeyError, ValueError):
            pass

    def close(self) -> None:
        self.sel.close()


def _discard_in_background(pipe) -> None:
    """Keep reading (and dropping) a pipe that processes left in the background may still write to, so
    that their writes do not fail with SIGPIPE; the thread ends when the last writer closes the pipe."""

    def drain() -> None:
        try:
            while pipe.read(_READ):
                pass
        except (OSError, ValueError):
            pass
        finally:
            pipe.close()

    os.set_blocking(pipe.fileno(), True)
    try:
        threading.Thread(target=drain, daemon=True).start()
    except RuntimeError:  # the process limit is reached, so no thread can start: give up on the background
        pipe.close()      # writers instead (their next write fails) rather than on the action that just ran


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class Worker:
    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.repl = None
        self.repl_note = ""
        self.groups = set()

    # -- shell ----------------------------------------------------------------------------------------
    def _spawn_action(self, args: list, **kwargs) -> tuple:
        """Spawn an action's process; when the process limit is hit, kill the background processes of
        earlier actions and try once more. Returns (process or None, note)."""
        try:
            return _spawn(args, **kwargs), ""
        except BlockingIOError:
            killed = self._kill_background()
        note = (f"the sandbox's process limit was reached, so {killed} background process group(s) of earlier "
                "actions were killed; ")
        try:
            return _spawn(args, **kwargs), note
        except OSError as e:
            return None, note + f"the command still could not start ({e})"

    def _kill_background(self) -> int:
        repl_pid = self.repl[0].pid if self.repl is not None else None
        killed = 0
        for pgid in list(self.groups):
            if pgid == repl_pid:
                continue
            try:
                os.killpg(pgid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
            self.groups.discard(pgid)
        return killed

    def _forget_finished_groups(self) -> None:
        for pgid in list(self.groups):
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                self.groups.discard(pgid)
            except PermissionError:
                pass

    def shell(self, code: str, timeout: float, max_output: int) -> dict:
        self._forget_finished_groups()
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        out, err = Capture(max_output), Capture(max_output)
        proc, spawn_note = self._spawn_action([shell, "-c", code], cwd=self.workdir, stdin=subprocess.DEVNULL,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc is None:
            return self._result(out, err, 126, False, spawn_note)
        self.groups.add(proc.pid)
        streams = Streams({proc.stdout.fileno(): out, proc.stderr.fileno(): err})
        deadline = time.monotonic() + timeout
        timed_out = False
        # until the pipes close, or the program ends while a background child still holds them
        while streams.open and proc.poll() is None and time.monotonic() < deadline:
            streams.read(min(deadline, time.monotonic() + 0.05))
        if proc.poll() is None:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
        streams.drain()
        streams.close()
        for pipe in (proc.stdout, proc.stderr):
            _discard_in_background(pipe)
        note = f"timed out after {timeout:g}s; the command and its process group were killed" if timed_out else ""
        return self._result(out, err, None if timed_out else proc.returncode, timed_out, spawn_note + note)

    # -- python ---------------------------------------------------------------------------------------
    def _start_repl(self) -> str:
        """Start the persistent interpreter; returns a note when the process limit got in the way."""
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        proc, note = self._spawn_action(
            [sys.executable, "-u", os.path.abspath(__file__), "repl", str(cmd_r), str(res_w)],
            cwd=self.workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=(cmd_r, res_w),
        )
        os.close(cmd_r)
        os.close(res_w)
        if proc is None:
            os.close(cmd_w)
            os.close(res_r)
            return note
        self.groups.add(proc.pid)
        self.repl = (proc, cmd_w, res_r)
        return note

    def _stop_repl(self) -> None:
        if self.repl is None:
            return
        proc, cmd_w, res_r = self.repl
        _kill_group(proc)
        for fd in (cmd_w, res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        proc.stdout.close()
        proc.stderr.close()
        self.repl = None

    def python(self, code: str, timeout: float, max_output: int) -> dict:
        out, err = Capture(max_output), Capture(max_output)
        start_note = ""
        if self.repl is None or self.repl[0].poll() is not None:
            self._stop_repl()
            start_note = self._start_repl()
            if self.repl is None:
                return self._result(out, err, 126, False, start_note)
        proc, cmd_w, res_r = self.repl
        streams = Streams({proc.stdout.fileno(): out, proc.stderr.fileno(): err})
        streams.watch(res_r)
        try:
            _write_all(cmd_w, json.dumps({"code": code}).encode() + b"\n")
        except BrokenPipeError:
            pass
        streams.read(time.monotonic() + timeout)
        # the interpreter flushes its output before it reports, so what is left is already in the pipes
        streams.drain()
        streams.close()
        if streams.control_line is not None:
            try:
                return self._result(out, err, int(json.loads(streams.control_line.decode())["exit_code"]), False,
                                    start_note)
            except (ValueError, KeyError, TypeError):  # the cell wrote into the interpreter's status pipe
                self._stop_repl()
                return self._result(out, err, 1, False, "the python interpreter's status channel was written to "
                                    "by the code and is no longer trustworthy, so the interpreter was restarted "
                                    "and its state is lost")
        if not streams.control_closed:
            self._stop_repl()
            note = (f"timed out after {timeout:g}s; the python interpreter was killed and restarted, "
                    "so its variables and imports are lost")
            return self._result(out, err, None, True, note)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        rc = proc.returncode
        self._stop_repl()
        if rc is not None and rc < 0:
            why = f"was killed by signal {-rc} (out of memory?)"
        else:
            why = f"exited (code {rc})"
        note = f"the python interpreter {why}; a new one starts with the next python action, so state is lost"
        return self._result(out, err, rc if rc is not None else -1, False, note)

    # -- common ---------------------------------------------------------------------------------------
    def _result(self, out: Capture, err: Capture, exit_code, timed_out: bool, note: str) -> dict:
        return {
            "stdout": out.text(), "stderr": err.text(), "exit_code": exit_code, "timed_out": timed_out,
            "stdout_bytes": out.total, "stderr_bytes": err.total, "note": note,
        }

    def shutdown(self) -> None:
        self._stop_repl()
        for pgid in list(self.groups):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def serve(self, inp, out) -> None:
        self._start_repl()  # ready before the first python action; it imports nothing heavy
        for raw in inp:
            try:
                request = json.loads(raw)
            except ValueError:
                continue
            started = time.monotonic()
            op = request.get("op")
            if op == "shutdown":
                self.shutdown()
                out.write(json.dumps({"id": request.get("id"), "ok": True}) + "\n")
                out.flush()
                return
            if op == "ping":
                response = {"ok": True}
            elif op in ("shell", "python"):
                fn = self.shell if op == "shell" else self.python
                try:
                    response = fn(request["code"], float(request["timeout"]),
                                  int(request.get("max_output", DEFAULT_MAX_OUTPUT)))
                except Exception as e:  # noqa: BLE001 - what the action did to its sandbox is its own result
                    self._stop_repl()
                    empty = Capture(1)
                    response = self._result(empty, empty, 126, False,
                                            f"the sandbox could not run this action ({type(e).__name__}: {e})")
            else:
                response = {"error": f"unknown op {op!r}"}
            response["id"] = request.get("id")
            response["duration"] = time.monotonic() - started
            out.write(json.dumps(response) + "\n")
            out.flush()
        self.shutdown()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# --- the persistent interpreter ------------------------------------------------------------------------
def _run_cell(code: str, namespace: dict) -> int:
    try:
        tree = ast.parse(code, "<cell>", "exec")
    except SyntaxError:
        traceback.print_exc(limit=0)
        return 1
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), namespace)
            if value is not None:
                print(repr(value))
    except SystemExit:
        raise
    except BaseException:
        etype, value, tb = sys.exc_info()
        traceback.print_exception(etype, value, tb.tb_next if tb is not None else tb)
        return 1
    return 0


def repl(cmd_fd: int, res_fd: int) -> None:
    sys.path.insert(0, os.getcwd())
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    commands = os.fdopen(cmd_fd, "r")
    results = os.fdopen(res_fd, "w")
    for line in commands:
        code = json.loads(line)["code"]
        try:
            status = _run_cell(code, namespace)
        except SystemExit as e:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(e.code if isinstance(e.code, int) else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        results.write(json.dumps({"exit_code": status}) + "\n")
        results.flush()


def main(argv) -> None:
    if argv and argv[0] == "repl":
        repl(int(argv[1]), int(argv[2]))
        return
    workdir = argv[1] if len(argv) > 1 and argv[0] == "serve" else os.getcwd()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Worker(workdir).serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
