"""What outlives an action or the episode: `kill -9 -1` and `pkill -f python` from inside leave the host's
processes alive, background or `setsid` processes never outlive close(), a tree of folders however deep or
unreadable never makes close() or `mle-env gc` fail nor stays behind, and a script that raises with its env
open leaves no container or sandbox folder behind."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from hostile import host_alive, python, shell, still_works

from mle_env.recording import read_trajectory


def test_kill_minus_one_leaves_the_host_alive_and_the_episode_running(open_env, sentinel) -> None:
    env = open_env()
    host_python = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        env.step({"type": "shell", "code": "kill -9 -1; echo after", "timeout": 30})
        env.step({"type": "shell", "code": "pkill -9 -f python; pkill -9 -f worker; echo after", "timeout": 30})
        assert host_alive(sentinel) and host_alive(host_python)
        still_works(env)
        assert subprocess.run(["docker", "info"], capture_output=True).returncode == 0 or not _docker_expected()
    finally:
        host_python.kill()
        host_python.wait()


def _docker_expected() -> bool:
    import shutil

    return shutil.which("dockerd") is not None


def host_processes(pattern: str) -> list[str]:
    """Command lines of the host's processes that start with ``pattern``."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith(pattern)]


def test_background_and_setsid_processes_do_not_outlive_close(open_env) -> None:
    env = open_env()
    shell(env, "nohup sleep 4321 >/dev/null 2>&1 & setsid sleep 4322 >/dev/null 2>&1 < /dev/null &"
               " setsid bash -c 'while true; do sleep 1; done; : 4323' >/dev/null 2>&1 < /dev/null &"
               " sleep 0.5; echo started")
    assert len(host_processes("sleep 432")) == 2
    env.close()
    time.sleep(0.5)
    assert host_processes("sleep 432") == [] and [p for p in host_processes("bash -c while") if "4323" in p] == []


# --- what close() and `mle-env gc` must remove, whatever the agent left ---------------------------------
def make_deep_folders(depth: int, *, locked: bool = False) -> str:
    """Python for the agent: ``depth`` nested folders in ./code, made by changing into each (no path grows past
    PATH_MAX), a file at the bottom; with ``locked`` the bottom folder and a folder beside ./code get mode 000."""
    return textwrap.dedent(f"""
        import os
        top = os.open(".", os.O_RDONLY)
        os.chdir("code")
        for _ in range({depth}):
            os.mkdir("a")
            os.chdir("a")
        open("bottom.txt", "w").write("x")
        if {locked}:
            os.mkdir("../../../locked")
            open("../../../locked/f", "w").close()
            os.chmod("../../../locked", 0)
            os.chmod(".", 0)
        os.fchdir(top)
        os.close(top)
        print("made", {depth})
    """)


def host_traces(env) -> tuple[str, str]:
    """(backend, what the sandbox holds on the host): the local sandbox's folder or the container's id."""
    sandbox = env.unwrapped._sandbox
    if sandbox.kind == "docker":
        return "docker", sandbox.container.id
    return "local", str(sandbox.base)


def left_behind(trace: tuple[str, str]) -> bool:
    kind, where = trace
    if kind == "docker":
        out = subprocess.run(["docker", "ps", "-aq", "--no-trunc", "--filter", f"id={where}"], capture_output=True,
                             text=True, check=True).stdout
        return where in out
    return os.path.lexists(where)


@pytest.mark.parametrize("depth", [1500, 5000])
def test_deep_folders_then_submit_end_the_episode_and_leave_nothing(open_env, depth: int) -> None:
    env = open_env()
    trace = host_traces(env)
    obs = python(env, make_deep_folders(depth), timeout=600)
    assert obs["stdout"].strip() == f"made {depth}", (obs["stdout"], obs["stderr"], obs["message"])
    obs, _, terminated, truncated, info = env.step({"type": "submit"})  # close() walks and removes the tree
    assert terminated and not truncated and info["status"] == "submitted", (info["status"], obs["message"])
    assert not left_behind(trace)
    footer = read_trajectory(info["trajectory"])[-1]
    artifacts = footer["artifacts"]  # ./code was walked and copied out too, without an error
    assert footer["type"] == "footer" and "errors" not in artifacts and "code" in artifacts, artifacts


def test_gc_removes_a_killed_owners_sandbox_with_deep_and_unreadable_folders(bwrap_ready, tiny_prepared: str,
                                                                             tmp_path: Path) -> None:
    from mle_env.sandbox.local import remove_stale_local_sandboxes

    script = textwrap.dedent(f"""
        import sys, time
        import mle_env
        env = mle_env.make({tiny_prepared!r}, sandbox="local", memory="512m")
        env.reset()
        obs = env.step({{"type": "python", "code": {make_deep_folders(3000, locked=True)!r}, "timeout": 600}})[0]
        assert obs["stdout"].strip() == "made 3000", obs
        print(env.unwrapped._sandbox.base, flush=True)
        time.sleep(3600)
    """)
    owner = subprocess.Popen([sys.executable, "-c", script], env=script_env(tmp_path), stdout=subprocess.PIPE,
                             text=True)
    try:
        base = Path(owner.stdout.readline().strip())
    finally:
        owner.send_signal(signal.SIGKILL)  # no close(), no finalizer: only gc can clean up
        owner.wait()
    assert base.name.startswith("mle-env-") and base.is_dir(), base
    assert base.name in remove_stale_local_sandboxes()
    assert not base.exists()


def test_gc_command_removes_leftovers_and_keeps_what_is_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys) -> None:
    import tempfile

    import mle_env.sandbox.docker
    from mle_env.cli.sandboxes import cmd_gc

    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid whose process is gone
    stale, live, orphan, unisolated = (tmp_path / f"mle-env-{name}" for name in ("stale000", "live0000", "orphan00",
                                                                                 "unisol00"))
    for base, owner in ((stale, dead.pid), (live, os.getpid()), (orphan, None)):
        (base / "home" / "code").mkdir(parents=True)
        (base / "stage").mkdir()
        if owner is not None:
            (base / "owner").write_text(f"{owner} {socket.gethostname()}\n")
        (base / "home" / "code" / "locked").mkdir(mode=0)
    chain = os.open(orphan / "home" / "code", os.O_RDONLY)  # what releases before this fix left: no owner file
    for _ in range(3000):
        os.mkdir("a", dir_fd=chain)
        chain, previous = os.open("a", os.O_RDONLY, dir_fd=chain), chain
        os.close(previous)
    os.close(chain)
    for part in ("data", "code", "submission", "home"):  # an unisolated sandbox's folder: never taken for one
        (unisolated / part).mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(mle_env.sandbox.docker, "remove_stale_containers", lambda everything=False: [])
    assert cmd_gc(argparse.Namespace(all=False)) == 0
    out = capsys.readouterr().out
    assert "removed 2 local sandbox folder(s): mle-env-stale000, mle-env-orphan00" in out, out
    assert not stale.exists() and not orphan.exists() and live.is_dir() and unisolated.is_dir()
    os.chmod(live / "home" / "code" / "locked", 0o700)


def script_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a script run by a test: the test's MLE_ENV_HOME and its tiny competition's folder."""
    return {**os.environ, "MLE_ENV_COMPETITIONS": str(tmp_path / "competitions"),
            "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                           os.environ.get("PYTHONPATH", "")])}


def test_a_script_that_raises_after_reset_leaves_no_sandbox_behind(backend: str, tiny_prepared: str,
                                                                   tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import os
        import mle_env
        env = mle_env.make({tiny_prepared!r}, sandbox={backend!r}, memory="512m")
        env.reset()
        print(os.getpid(), env.unwrapped._sandbox.kind, flush=True)
        raise RuntimeError("the script's own bug, with the env still open")
    """)
    result = subprocess.run([sys.executable, "-c", script], env=script_env(tmp_path), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1 and "the script's own bug" in result.stderr, result.stderr[-2000:]
    pid = int(result.stdout.split()[0])
    assert owned_sandboxes(pid) == []


def test_an_env_dropped_without_close_closes_its_sandbox(backend: str, tiny_prepared: str) -> None:
    import gc

    import mle_env

    env = mle_env.make(tiny_prepared, sandbox=backend, memory="512m")
    env.reset()
    trace = host_traces(env)
    assert left_behind(trace)
    del env
    gc.collect()
    assert not left_behind(trace)


def test_a_fork_dropped_without_close_closes_its_own_sandbox_only(open_env) -> None:
    import gc

    env = open_env()
    fork = env.unwrapped.fork()
    trace = host_traces(fork)
    assert left_behind(trace) and trace != host_traces(env)
    del fork
    gc.collect()
    assert not left_behind(trace)
    still_works(env)  # the parent's sandbox is its own, untouched


def owned_sandboxes(pid: int) -> list[str]:
    """Containers labelled as started by process ``pid`` of this host, and local sandbox folders whose owner file
    names it."""
    found = []
    if shutil.which("docker"):
        out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=mle-env.owner-pid={pid}"],
                             capture_output=True, text=True).stdout
        found += [f"container {c}" for c in out.split()]
    for owner in Path(tempfile.gettempdir()).glob("mle-env-*/owner"):
        try:
            if owner.read_text().split()[:1] == [str(pid)]:
                found.append(str(owner.parent))
        except OSError:
            continue
    return found
