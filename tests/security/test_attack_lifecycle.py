"""What outlives an action or the episode: `kill -9 -1` and `pkill -f python` from inside leave the host's
processes alive, and background or `setsid` processes never outlive close()."""

from __future__ import annotations

import subprocess
import sys
import time

from hostile import host_alive, shell, still_works


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
