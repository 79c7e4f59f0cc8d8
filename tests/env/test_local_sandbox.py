"""The isolated local sandbox (bubblewrap) and the choice of backend: what it shows, the limits it enforces
and says it enforces, whose fault a dead sandbox is, and that nothing falls back to running unisolated."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mle_env
from mle_env.errors import PrerequisiteError, SandboxUnavailable
from mle_env.sandbox import choose_backend
from mle_env.sandbox.base import SandboxLimits
from mle_env.sandbox.local import LocalSandbox, require_bubblewrap


@pytest.fixture
def sandbox(bwrap_ready: None, tmp_path: Path):
    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("id,x\n1,2\n")
    box = LocalSandbox(public, SandboxLimits(cpus=1, memory=512 * 2**20, disk=2**30))
    box.start()
    yield box
    box.close()


#: bubblewrap whose fork spends a second building the sandbox's root, before any bind, after it has reported its
#: pid on --info-fd (the empty sandbox require_bubblewrap starts, without --info-fd, is not slowed)
SLOW_BWRAP = """#!/bin/sh
case " $* " in
  *" --info-fd "*) {{ sleep 1; }} | {bwrap} --file 0 /slow-start "$@" ;;
  *) exec {bwrap} "$@" ;;
esac
"""


@pytest.fixture
def slow_bubblewrap(bwrap_ready: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``bwrap`` on PATH is :data:`SLOW_BWRAP` (in a folder that nobody, whose uid bubblewrap runs as under
    root, can reach)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="slow-bwrap-", dir="/tmp"))
    folder.chmod(0o755)
    (folder / "bwrap").write_text(SLOW_BWRAP.format(bwrap=require_bubblewrap()))
    (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    require_bubblewrap.cache_clear()
    try:
        yield
    finally:
        require_bubblewrap.cache_clear()
        shutil.rmtree(folder)


def test_the_first_action_waits_for_bubblewrap_to_finish_the_sandbox(slow_bubblewrap: None, tmp_path: Path) -> None:
    """bubblewrap reports its init's pid while the fork still builds the sandbox's root: an action entering
    the namespaces then found no /home ("nsenter: cannot open current working directory", on a busy
    machine). start() returns once the init runs."""
    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("id,x\n1,2\n")
    box = LocalSandbox(public, SandboxLimits(cpus=1, memory=512 * 2**20, disk=2**30))
    try:
        box.start()
        r = box.exec("shell", "pwd; ls data", 60)
    finally:
        box.close()
    assert (r.exit_code, r.stdout.split()) == (0, ["/home", "train.csv"]), r


def test_the_workspace_layout_and_what_it_runs_as(sandbox: LocalSandbox) -> None:
    r = sandbox.exec("shell", "pwd; id -un; ls; echo $HOME; python3 -c 'import sklearn, numpy; print(\"ok\")'", 60)
    lines = r.stdout.split()
    assert lines[:2] == ["/home", "agent"] and {"data", "submission", "code", "logs"} <= set(lines)
    assert "/home/agent" in lines and lines[-1] == "ok", r


def test_info_says_which_limits_are_enforced_and_how(sandbox: LocalSandbox, bwrap_ready: None) -> None:
    r = sandbox.exec("shell", "echo $$; ulimit -f", 30)
    inner_pid, blocks = r.stdout.split()
    enforced = sandbox.enforced
    assert set(enforced) == {"memory", "pids", "cpu", "disk", "seccomp"}
    assert enforced["seccomp"] == "filter"  # libseccomp2 is installed with Docker's runtime and in CI
    if os.geteuid() == 0:  # root may create cgroups: then they carry the limits
        assert enforced["memory"] == enforced["pids"] == enforced["cpu"] == "cgroup"
        limits = {p.name: p.read_text().strip() for group in sandbox.cgroups for p in group.iterdir()
                  if p.name in ("memory.limit_in_bytes", "memory.max", "pids.max", "cpu.cfs_quota_us", "cpu.max")}
        assert str(512 * 2**20) in limits.values() and "1024" in limits.values(), limits
    assert enforced["disk"] == "watchdog + RLIMIT_FSIZE"
    assert blocks == str(2**30 // 1024)  # bash's ulimit -f counts KiB


def test_the_cpu_and_memory_limits_hold(sandbox: LocalSandbox) -> None:
    if sandbox.enforced["memory"] != "cgroup":
        pytest.skip("cgroups are not available to this user; the rlimit fallback is covered by the attack suite")
    r = sandbox.exec("python", "b = bytearray(1024 ** 3)\nb[::4096] = b'x' * len(b[::4096])", 60)
    assert "killed by signal 9" in r.note
    code = "import time\nt = time.time()\nc = time.process_time()\nwhile time.time() - t < 1.5: pass\n" \
           "print(round((time.process_time() - c) / (time.time() - t), 2))"
    share = float(sandbox.exec("python", code, 60).stdout)
    assert share <= 1.15, share  # one core's worth of CPU time per wall second


def test_the_workspace_on_the_host_is_not_the_hosts_root(sandbox: LocalSandbox) -> None:
    sandbox.exec("shell", "echo x > code/made-inside", 30)
    made = Path(sandbox.base) / "home" / "code" / "made-inside"
    owner = made.stat().st_uid
    assert owner == (65534 if os.geteuid() == 0 else os.geteuid())


def test_a_sandbox_killed_from_outside_is_an_infrastructure_error(sandbox: LocalSandbox) -> None:
    os.killpg(sandbox.process.pid, signal.SIGKILL)
    sandbox.process.wait()
    with pytest.raises(SandboxUnavailable, match="ended from outside"):
        sandbox.exec("shell", "echo hi", 30)
    assert sandbox.copy_out("data/train.csv", 1000) == b"id,x\n1,2\n"


def test_gpus_without_devices_is_a_clear_error(bwrap_ready: None, tmp_path: Path) -> None:
    if list(Path("/dev").glob("nvidia*")):
        pytest.skip("this machine has NVIDIA devices")
    box = LocalSandbox(tmp_path, SandboxLimits(gpus="all"))
    with pytest.raises(PrerequisiteError, match="no /dev/nvidia"):
        box.start()
    assert box.base is None and box.process is None  # start cleaned up after itself


def test_auto_never_falls_back_to_an_unisolated_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no engine answering and no bubblewrap on PATH, auto raises and names what to install."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setenv("PATH", str(tmp_path))
    require_bubblewrap.cache_clear()
    try:
        with pytest.raises(PrerequisiteError) as error:
            choose_backend("auto", "mle-env-agent:cpu")
    finally:
        require_bubblewrap.cache_clear()
    message = str(error.value)
    assert "no Docker engine" in message and "bubblewrap" in message and "unisolated" in message


def test_auto_picks_docker_then_the_isolated_local_sandbox(bwrap_ready: None, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    kind, reason = choose_backend("auto", "mle-env-agent:cpu")
    assert kind == "local" and "bubblewrap" in reason


def test_the_unisolated_backend_refuses_root_unless_told(tiny_prepared: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("the refusal is for root")
    monkeypatch.delenv("MLE_ENV_ALLOW_UNISOLATED_ROOT", raising=False)
    env = mle_env.make(tiny_prepared, sandbox="unisolated")
    with pytest.raises(PrerequisiteError, match="MLE_ENV_ALLOW_UNISOLATED_ROOT"):
        env.reset()
    env.close()
    monkeypatch.setenv("MLE_ENV_ALLOW_UNISOLATED_ROOT", "1")
    env = mle_env.make(tiny_prepared, sandbox="unisolated")
    obs, info = env.reset()
    assert info["sandbox"] == "unisolated"
    assert env.step("echo hi")[0]["stdout"] == "hi\n"
    env.close()


@pytest.fixture
def searchable_root() -> Iterator[Path]:
    """A sandbox root every user may pass through (pytest's tmp_path lies below a folder of mode 0700)."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="mle-env-test-root-", dir="/tmp"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_gc_removes_what_a_killed_process_left(bwrap_ready: None, tmp_path: Path, searchable_root: Path) -> None:
    import subprocess
    import textwrap

    from mle_env.sandbox.local import CGROUP_ROOT, remove_stale_local_sandboxes

    public = tmp_path / "public"
    public.mkdir()
    script = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        from mle_env.sandbox.local import LocalSandbox
        box = LocalSandbox(Path({str(public)!r}), root=Path({str(searchable_root)!r}))
        box.start()
        assert box.exec("shell", "echo alive", 30).stdout == "alive\\n"
        print(box.base.name, flush=True)
        os.kill(os.getpid(), 9)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    name = out.stdout.strip()
    assert name.startswith("mle-env-") and (searchable_root / name).is_dir(), out.stderr
    assert remove_stale_local_sandboxes(root=searchable_root) == [name]
    assert not (searchable_root / name).exists()
    assert not any((CGROUP_ROOT / c / "mle-env" / name).exists() for c in ("", "memory", "pids", "cpu"))


@pytest.mark.skipif(os.geteuid() != 0, reason="bubblewrap takes nobody's uid only when run as root")
def test_a_root_others_cannot_enter_is_refused_in_one_line(bwrap_ready: None, tmp_path: Path) -> None:
    """Below a folder of mode 0700 nobody cannot reach the workspace: a clear refusal, no half-made sandbox."""

    private = tmp_path / "private"
    (private / "root").mkdir(parents=True)
    private.chmod(0o700)
    box = LocalSandbox(tmp_path, root=private / "root")
    with pytest.raises(SandboxUnavailable, match=r"other users cannot enter \(mode 700\).*chmod o\+x") as caught:
        box.start()
    assert "\n" not in str(caught.value)
    assert list((private / "root").iterdir()) == []


def test_binds_below_the_workspace_are_mounted_after_it(tmp_path: Path) -> None:
    """A later mount hides what an earlier one put below it: a venv in /tmp must be bound after /tmp."""
    box = LocalSandbox(tmp_path)
    binds = box._binds(tmp_path / "home", tmp_path / "tmp", tmp_path / "etc")
    dests = [dest for _, _, dest in binds]
    for top in ("/tmp", "/home"):
        first = dests.index(top)
        assert all(i > first for i, d in enumerate(dests) if d.startswith(top + "/")), dests
