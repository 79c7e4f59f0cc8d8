"""The docker sandbox's isolation and hygiene, against a real engine (skipped without one, never in CI)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import mle_env
from mle_env.errors import PrerequisiteError
from mle_env.sandbox.docker import LABEL, OWNER_HOST, OWNER_PID, remove_stale_containers

pytestmark = pytest.mark.usefixtures("docker_engine")


def containers(owner: int | None = None) -> list:
    """mle-env containers started by process ``owner`` (default: this test session's) on this host, so that
    other users of the same engine (another checkout's tests, an evaluation, a process with the same pid on
    another host or in another container) do not count."""
    from mle_env.sandbox.images import docker_client

    owner = os.getpid() if owner is None else owner
    labels = [LABEL, f"{OWNER_PID}={owner}", f"{OWNER_HOST}={socket.gethostname()}"]  # all must match
    return docker_client().containers.list(all=True, filters={"label": labels})


def processes_of(container_ids: set[str], settle_s: float = 10.0) -> list[str]:
    """Command lines of the host's processes that belong to one of ``container_ids`` (by their cgroup), once
    there are none or ``settle_s`` has passed (the engine reaps a removed container's processes
    asynchronously, which takes a moment under load). Other users of the engine do not count."""
    deadline = time.monotonic() + settle_s
    while True:
        found = []
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cgroup = (proc / "cgroup").read_text()
                if any(c in cgroup for c in container_ids):
                    found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:  # gone meanwhile
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


@pytest.fixture
def env(tiny_prepared: str):
    environment = mle_env.make(tiny_prepared, sandbox="docker", memory="256m")
    environment.reset()
    yield environment
    environment.close()


def test_runs_as_an_unprivileged_user_without_capabilities(env) -> None:
    obs, *_ = env.step("id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; touch data/x")
    lines = obs["stdout"].split()
    assert lines[0] == "1000"
    assert "0000000000000000" in obs["stdout"] and "NoNewPrivs:\t1" in obs["stdout"]
    assert "Read-only file system" in obs["stderr"]


def test_no_network(env) -> None:
    code = (
        "import socket\n"
        "results = []\n"
        "for host, port in [('1.1.1.1', 53), ('8.8.8.8', 443), ('172.17.0.1', 2375), ('127.0.0.1', 22)]:\n"
        "    s = socket.socket(); s.settimeout(3)\n"
        "    try:\n"
        "        s.connect((host, port)); results.append('connected')\n"
        "    except OSError as e:\n"
        "        results.append(type(e).__name__)\n"
        "print(results)\n"
        "try:\n"
        "    socket.getaddrinfo('pypi.org', 443); print('resolved')\n"
        "except OSError:\n"
        "    print('no dns')"
    )
    obs, *_ = env.step({"type": "python", "code": code})
    assert "connected" not in obs["stdout"] and "no dns" in obs["stdout"], obs["stdout"]


@pytest.mark.slow
def test_no_private_answer_enters_the_sandbox(tiny_prepared: str, home: Path) -> None:
    canary = uuid.uuid4().hex
    (home / tiny_prepared / "prepared" / "private" / "canary.txt").write_text(canary)
    env = mle_env.make(tiny_prepared, sandbox="docker")
    env.reset()
    obs, *_ = env.step({"type": "shell", "timeout": 120, "code": (
        f"grep -rl --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev {canary} / 2>/dev/null | wc -l; "
        "ls /home/data; cat /proc/mounts | grep -c private || true")})
    count, *listing = obs["stdout"].split()
    assert count == "0" and "test.csv" in listing and listing[-1] == "0"
    env.close()


def test_memory_limit_kills_the_program_and_the_env_goes_on(env) -> None:
    grow = "keep = 1\nblob = bytearray(1024 ** 3)\nblob[::4096] = b'x' * len(blob[::4096])"
    obs, *_ = env.step({"type": "python", "code": grow, "timeout": 60})
    assert "killed by signal 9" in obs["message"], (obs["message"], obs["stderr"])
    obs, *_ = env.step("python3 -c 'b = bytearray(1024 ** 3); b[::4096] = bytes(len(b[::4096]))'; echo status=$?")
    assert "status=137" in obs["stdout"]
    obs, *_ = env.step({"type": "python", "code": "'keep' in globals(), 6 * 7"})
    assert obs["stdout"].strip() == "(False, 42)"


@pytest.mark.slow
def test_fork_bomb_is_held_by_the_pids_limit(tiny_prepared: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox="docker", memory="2g")  # so that only the pids limit can stop it
    env.reset()
    try:
        container = env.unwrapped._sandbox.container
        obs, *_ = env.step({"type": "shell", "code": "bomb() { bomb | bomb & }; bomb", "timeout": 5})
        assert "could not run this action" not in obs["message"], obs["message"]
        time.sleep(1)
        pids = container.stats(stream=False)["pids_stats"]
        assert pids["limit"] == 1024 and pids["current"] <= 1024
        # the episode goes on: when the limit blocks a new action, the worker clears earlier background processes
        outputs = [env.step("echo alive")[0] for _ in range(2)]
        assert any(o["stdout"] == "alive\n" for o in outputs), outputs
    finally:
        env.close()
    assert containers() == []


def test_twenty_episodes_leave_no_containers_and_no_processes(tiny_prepared: str) -> None:
    before = len(containers())
    env = mle_env.make(tiny_prepared, sandbox="docker")
    started: set[str] = set()
    for _ in range(20):
        env.reset()
        container = env.unwrapped._sandbox.container.id
        started.add(container)
        env.step("sleep 300 &")
        assert processes_of({container}, settle_s=0), "the episode's processes are not found by their cgroup"
        env.step({"type": "python", "code": "1"})
        env.step({"type": "submit"})
    env.close()
    env.close()
    assert len(started) == 20
    assert len(containers()) == before == 0
    assert processes_of(started) == []  # neither the worker nor the agent's background sleep


def test_gc_removes_the_container_of_a_killed_process(tiny_prepared: str, home: Path) -> None:
    code = (
        "import os, signal, mle_env\n"
        "from mle_env.competition.registry import register_competition\n"
        f"register_competition({str(home.parent / 'competitions' / tiny_prepared)!r})\n"
        f"env = mle_env.make({tiny_prepared!r}, sandbox='docker'); env.reset()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy(), stderr=subprocess.PIPE, text=True)
    _, stderr = proc.communicate()
    assert proc.returncode == -9, stderr
    orphans = containers(owner=proc.pid)
    assert len(orphans) == 1
    removed = remove_stale_containers()
    assert orphans[0].short_id in removed and containers(owner=proc.pid) == []


def test_a_removed_container_is_an_infra_error(env) -> None:
    container = env.unwrapped._sandbox.container
    container.remove(force=True)
    obs, reward, terminated, truncated, info = env.step("echo hi")
    assert truncated and not terminated and reward == 0.0
    assert info["status"] == "infra_error" and info["grade"] is None
    assert "infrastructure error" in obs["message"]


def test_gpus_without_a_gpu_runtime_is_a_clear_error(tiny_prepared: str) -> None:
    from mle_env.sandbox.images import docker_client

    if "nvidia" in docker_client().info().get("Runtimes", {}):
        pytest.skip("this engine has a GPU runtime")
    env = mle_env.make(tiny_prepared, sandbox="docker", gpus="all")
    with pytest.raises(PrerequisiteError, match="no GPU runtime"):
        env.reset()
    env.close()
    assert containers() == []


def test_image_packages_are_listed_and_read_once_per_image(env) -> None:
    from mle_env.sandbox import docker as docker_backend

    sandbox = env.unwrapped._sandbox
    assert sandbox.image_id and sandbox.image_id.startswith("sha256:")
    packages = docker_backend._PACKAGES[sandbox.image_id]  # cached under the image's id, not its tag
    assert "numpy" in {name.lower() for name in packages}
    obs, _ = env.reset()
    assert f"numpy {packages.get('numpy') or packages.get('NumPy')}" in obs["task"]
