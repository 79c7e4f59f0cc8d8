"""Privilege: no way up (sudo, setuid binaries, mount, new namespaces), no writing outside the workspace,
and no reaching the worker that supervises the sandbox (signal, ptrace, its file descriptors)."""

from __future__ import annotations

from hostile import python, shell, still_works


def test_no_way_to_gain_privileges_or_write_outside_the_workspace(open_env) -> None:
    env = open_env()
    obs = shell(env, (
        "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status;"
        " sudo -n true 2>/dev/null && echo SUDO;"
        " su -c 'id -u' root </dev/null 2>/dev/null && echo SU;"
        " mkdir -p /tmp/m && mount -t tmpfs none /tmp/m 2>/dev/null && echo MOUNTED;"
        " unshare -U -r true 2>/dev/null && echo USERNS;"
        " for p in /usr/x /etc/x /opt/x data/x /x; do touch $p 2>/dev/null && echo WROTE:$p; done;"
        " echo end"))
    lines = obs["stdout"].split("\n")
    assert lines[0] == "1000"
    assert "CapEff:\t0000000000000000" in obs["stdout"] and "NoNewPrivs:\t1" in obs["stdout"], obs["stdout"]
    for escalation in ("SUDO", "SU\n", "MOUNTED", "USERNS", "WROTE"):
        assert escalation not in obs["stdout"], obs["stdout"]
    assert obs["stdout"].rstrip().endswith("end")


PTRACE = """
import ctypes, errno, os, signal, subprocess
out = subprocess.run(['ps', '-eo', 'pid=,args='], capture_output=True, text=True).stdout
workers = [int(l.split()[0]) for l in out.splitlines() if 'worker.py serve' in l]
libc = ctypes.CDLL(None, use_errno=True)
results = []
for pid in workers:
    results.append('ptrace:' + ('ok' if libc.ptrace(16, pid, 0, 0) == 0 else errno.errorcode[ctypes.get_errno()]))
    try:
        os.kill(pid, signal.SIGKILL); results.append('kill:ok')
    except OSError as e:
        results.append('kill:' + type(e).__name__)
    try:
        open(f'/proc/{pid}/fd/1', 'w').write('{"id": 99}\\n'); results.append('fd:ok')
    except OSError as e:
        results.append('fd:' + type(e).__name__)
print(len(workers), results)
"""


def test_the_worker_cannot_be_traced_signalled_or_written_to(open_env, backend: str) -> None:
    env = open_env()
    obs = python(env, PTRACE)
    count, _, results = obs["stdout"].strip().partition(" ")
    if backend == "local":  # the worker is on the host, outside the sandbox's PID namespace: not even visible
        assert count == "0", obs["stdout"]
    else:  # visible in the container, but root's
        assert count == "1" and results == "['ptrace:EPERM', 'kill:PermissionError', 'fd:PermissionError']", obs
    still_works(env)
