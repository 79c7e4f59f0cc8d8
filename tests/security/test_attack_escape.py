"""The escape the red team found in docker (issue: root in the container, then the host's files), and the
pieces it was made of, each as an attack on both sandboxes:

- a ``.pth`` planted in the agent's user site must run in no privileged Python: not in the worker of a fork,
  not in a restarted validation relay;
- no process in the sandbox can open files by handle (``open_by_handle_at`` on the data mount reached the
  host's root filesystem), create namespaces, mount, or use keyrings, BPF or userfaultfd;
- the host and the worker read the agent's files only as the agent could, refusing a link in any component;
- the endpoint rejects a bad Content-Length before reading anything;
- the python interpreter's output is the agent's own to forge, and the trajectory says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hostile import python, shell, still_works

PLANT_PTH = r"""
import os, site
folder = site.getusersitepackages()
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "zz-hostile.pth"), "w") as f:
    f.write("import os; open('/tmp/pth-ran-as-%d' % os.getuid(), 'a').close()\n")
print(folder)
"""


def ran_as(env) -> set[str]:
    """The uids that loaded the planted .pth so far (it leaves /tmp/pth-ran-as-<uid>)."""
    out = shell(env, "ls /tmp | grep '^pth-ran-as-' || true")["stdout"].split()
    return {name.rsplit("-", 1)[1] for name in out}


def restart_the_relay(env, backend: str) -> None:
    """Kill the validation endpoint's relay from outside the agent's reach (as root through the engine in
    docker; in the local sandbox it runs as the agent, who may kill it), so that the next action restarts it."""
    kill = ("import os, signal\n"
            "for p in filter(str.isdigit, os.listdir('/proc')):\n"
            "    try:\n"
            "        if b'worker.py\\x00relay' in open(f'/proc/{p}/cmdline', 'rb').read():\n"
            "            os.kill(int(p), signal.SIGKILL)\n"
            "    except OSError:\n"
            "        pass\n")
    if backend == "docker":
        env.unwrapped._sandbox.container.exec_run(["python3", "-I", "-c", kill], user="0:0")
    else:
        python(env, kill)


def relay_pid(env) -> str:
    return python(env, (
        "import os\n"
        "print(*[p for p in filter(str.isdigit, os.listdir('/proc')) if b'worker.py\\x00relay'"
        " in open(f'/proc/{p}/cmdline', 'rb').read()])"))["stdout"].strip()


def user_site_enabled(env) -> bool:
    """Whether the agent's python reads a user site-packages folder at all (a virtual environment without the
    system's site-packages does not: then no .pth can be planted there, and only the absence of privileged
    runs is left to check)."""
    return shell(env, "python3 -c 'import site; print(site.ENABLE_USER_SITE)'")["stdout"].strip() == "True"


def test_a_planted_pth_runs_in_no_privileged_python_after_a_fork_or_a_relay_restart(open_env, backend: str) -> None:
    env = open_env()
    python(env, PLANT_PTH)
    shell(env, "python3 -c pass")  # the agent's own python loads it: the plant works
    agent = {"1000"} if user_site_enabled(env) else set()
    assert ran_as(env) == agent
    # a restarted relay (the red team OOM-killed it; here it is killed from outside) starts a new Python
    before = relay_pid(env)
    restart_the_relay(env, backend)
    shell(env, "true")  # the worker restarts the relay with the next action
    obs = shell(env, "curl -s -m 20 -X POST -F file=@/etc/hostname http://localhost:5000/validate")
    assert "Submission invalid" in obs["stdout"], obs
    assert relay_pid(env) not in ("", before)
    assert ran_as(env) == agent
    # a fork starts a new worker and a new relay over a copy of everything the agent wrote
    child = env.unwrapped.fork()
    try:
        assert ran_as(child) == agent
        obs = shell(child, "curl -s -m 20 -X POST -F file=@/etc/hostname http://localhost:5000/validate")
        assert "Submission invalid" in obs["stdout"], obs
        assert ran_as(child) == agent
        still_works(child)
    finally:
        child.close()
    still_works(env)


HANDLES = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)

class Handle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int), ("f_handle", ctypes.c_ubyte * 8)]

def err(rc):
    return "ok" if rc >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

handle = Handle(8, 1, (ctypes.c_ubyte * 8)(2, 0, 0, 0, 0, 0, 0, 0))  # ext4's root inode, generation 0
mount_fd = os.open("data", os.O_RDONLY | os.O_DIRECTORY)
mount_id = ctypes.c_int()
probe = Handle(8, 0)
print("open_by_handle_at", err(libc.open_by_handle_at(mount_fd, ctypes.byref(handle), os.O_RDONLY)))
made = libc.name_to_handle_at(mount_fd, b".", ctypes.byref(probe), ctypes.byref(mount_id), 0x1000)
print("name_to_handle_at", err(made))
print("unshare", err(libc.unshare(0x10000000)))
print("mount", err(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))
print("keyctl", err(libc.syscall(250, 0, 0, 0, 0, 0)))
print("bpf", err(libc.syscall(321, 0, 0, 0)))
print("userfaultfd", err(libc.syscall(323, 0)))
print("ptrace", err(libc.ptrace(0, 0, 0, 0)))
"""

CAPABILITIES = r"""
import os
held = {}
for p in filter(str.isdigit, os.listdir('/proc')):
    try:
        fields = dict(l.split(':', 1) for l in open(f'/proc/{p}/status') if l.startswith('Cap'))
    except OSError:
        continue
    held[p] = {k: int(v, 16) for k, v in fields.items()}
print(len(held), sorted({k for caps in held.values() for k, v in caps.items() if k != 'CapBnd' and v & (1 << 2)}),
      any(caps['CapBnd'] & (1 << 2) for caps in held.values()))
"""


def test_no_process_can_open_files_by_handle_or_leave_its_namespaces(open_env, backend: str) -> None:
    env = open_env()
    obs = python(env, HANDLES)
    results = dict(line.split() for line in obs["stdout"].split("\n") if line)
    # the seccomp filter (docker's profile; the local sandbox's BPF program), whatever the capabilities
    for call in ("open_by_handle_at", "name_to_handle_at", "unshare", "mount", "keyctl", "bpf", "userfaultfd",
                 "ptrace"):
        assert results[call] == "EPERM", (call, obs["stdout"])
    if backend == "docker":  # no process in the container holds, or can ever hold, CAP_DAC_READ_SEARCH
        obs = python(env, CAPABILITIES)
        count, *rest = obs["stdout"].split(" ", 1)
        assert int(count) >= 4 and rest == ["[] False\n"], obs["stdout"]
    still_works(env)


def test_the_worker_runs_with_its_own_uid_and_none_of_the_agents_environment(open_env, backend: str) -> None:
    env = open_env()
    if backend == "docker":  # the worker and the relay are visible in the container: check what they are
        out = python(env, (
            "import os\n"
            "for p in filter(str.isdigit, os.listdir('/proc')):\n"
            "    cmd = open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')\n"
            "    if b'/opt/mle-env/worker.py' in cmd and (b'serve' in cmd or b'relay' in cmd):\n"
            "        st = os.stat(f'/proc/{p}')\n"
            "        print(cmd[cmd.index(b'/opt/mle-env/worker.py') + 1].decode(), st.st_uid, b'-I' in cmd)\n"
        ))["stdout"].split("\n")
        assert sorted(line for line in out if line) == ["relay 998 True", "serve 999 True"], out
    # the agent's programs get the agent's home; nothing the worker itself reads is the agent's
    obs = shell(env, "echo $HOME; python3 -c 'import site; print(site.ENABLE_USER_SITE)'")
    # the interpreter's own default (a virtual environment without the system's packages turns it off), not
    # one the worker forced on the agent
    default = "True" if backend == "docker" else subprocess.run(
        [sys.executable, "-c", "import site; print(site.ENABLE_USER_SITE)"], capture_output=True, text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}).stdout.strip()
    assert obs["stdout"] == f"/home/agent\n{default}\n", obs


def test_the_oom_score_is_no_way_to_the_worker(open_env, backend: str) -> None:
    """The red team lowered its oom_score_adj (allowed down to the floor the kernel keeps), then made the relay
    read without end until the OOM killer took it. Where the engine grants CAP_SYS_RESOURCE the floor is the
    worker's 1000; everywhere the relay reads nothing unbounded and a restarted one is harmless (above)."""
    env = open_env()
    obs = shell(env, "cat /proc/self/oom_score_adj; echo 0 > /proc/self/oom_score_adj 2>/dev/null; "
                     "cat /proc/self/oom_score_adj")
    first, after = obs["stdout"].split()
    assert first == "1000", obs
    if backend == "docker" and "SYS_RESOURCE" in env.unwrapped._sandbox.capabilities:
        assert after == "1000", obs
    relay = relay_pid(env)
    obs = python(env, BAD_LENGTHS)
    assert obs["stdout"].split() == ["411", "411", "411", "411"], obs
    assert relay_pid(env) == relay  # still the same process: nothing was read
    still_works(env)


BAD_LENGTHS = r"""
import socket, time
def post(headers):
    s = socket.create_connection(("127.0.0.1", 5000), timeout=10)
    s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + b"x" * 1000)
    reply = s.recv(4096)
    s.close()
    return reply.split()[1].decode()
print(post(b"Content-Length: -1\r\n"), post(b""), post(b"Content-Length: 5\r\nContent-Length: 7\r\n"),
      post(b"Content-Length: 1e9\r\n"))
"""


def test_validate_refuses_a_link_in_any_component_of_the_path(open_env) -> None:
    env = open_env()
    shell(env, "ln -s /etc code/etc; mkdir -p code/real; echo id,target > code/real/s.csv; ln -s real code/alias")
    for path in ("code/etc/shadow", "code/etc/passwd", "code/alias/s.csv"):
        obs, _, terminated, truncated, _ = env.step({"type": "validate", "path": path})
        assert not (terminated or truncated) and obs["exit_code"] == 1, obs
        assert "symbolic link" in obs["message"] and "root:" not in obs["message"] + obs["stdout"], obs
    obs = env.step({"type": "validate", "path": "code/real/s.csv"})[0]
    assert "symbolic link" not in obs["message"], obs


def test_a_huge_sparse_file_and_many_files_cost_the_host_little(open_env, backend: str) -> None:
    import resource

    env = open_env(artifacts_max_files=500)
    shell(env, "truncate -s 3G code/big.bin; echo ok > code/small.txt; mkdir logs/many;"
               " python3 -c \"[open(f'logs/many/{i:05d}-' + 'n' * 200, 'w').close() for i in range(3000)]\"",
          timeout=120)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    _, _, terminated, _, info = env.step({"type": "submit"})
    took = time.monotonic() - started
    assert terminated
    kept = Path(info["episode_dir"])
    assert sorted(p.name for p in (kept / "code").iterdir()) == ["TRUNCATED.txt", "small.txt"]
    assert "3221225472 bytes" in (kept / "code" / "TRUNCATED.txt").read_text()  # never read: left out at once
    logs = [p for p in (kept / "logs").rglob("*") if p.is_file()]
    assert len(logs) == 501 and "500-file cap" in (kept / "logs" / "TRUNCATED.txt").read_text()
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) < 200 * 1024  # KiB: no 3 GiB read
    footer = json.loads((Path(info["episode_dir"]) / "trajectory.jsonl").read_text().splitlines()[-1])
    assert footer["artifacts"]["code"]["truncated"] is True and footer["artifacts"]["logs"]["truncated"] is True
    assert took < 60, took  # (3 GiB of zeros took 29.6 s through the engine before)


STEAL_NONCES = r"""
import os, sys, threading
command_fd, result_fd = int(sys.argv[2]), int(sys.argv[3])  # the interpreter's pipes (see worker.py's repl)
real = os.dup(command_fd)
r, w = os.pipe()
os.dup2(r, command_fd)                # the interpreter now waits on an empty pipe
def forge():
    with os.fdopen(real) as commands, os.fdopen(result_fd, "w") as results:
        for line in commands:
            import json
            nonce = json.loads(line)["nonce"]
            print("forged output", flush=True)
            results.write(json.dumps({"exit_code": 0, "nonce": nonce}) + "\n")
            results.flush()
threading.Thread(target=forge, daemon=True).start()
"""


def test_a_cell_can_forge_later_python_output_which_the_trajectory_says(open_env) -> None:
    """A persistent interpreter is the agent's own process: framing its results with anything the host
    trusts cannot work. So the trajectory and the README say so, and shell actions stay trustworthy."""
    env = open_env()
    python(env, STEAL_NONCES)
    obs = python(env, "print('never runs')")  # forged: a persistent interpreter is the agent's to falsify
    assert obs["stdout"] == "forged output\n" and obs["exit_code"] == 0, obs
    assert shell(env, "echo real")["stdout"] == "real\n"  # shell actions are fresh processes: unaffected
    info = env.step({"type": "submit"})[4]
    header = json.loads((Path(info["episode_dir"]) / "trajectory.jsonl").read_text().splitlines()[0])
    assert "forge" in header["trust"]["python"] and "cannot forge" in header["trust"]["validate, score_dev, submit"]


def test_a_fork_keeps_a_huge_sparse_file_sparse_and_writes_nothing_through_links(open_env) -> None:
    """docker commit wrote a 1 GiB sparse file out as 1 GiB of zeros per fork (12.6 s instead of 0.8 s);
    and a fork's copy is made by a privileged process, so links in it must stay links."""
    env = open_env()
    shell(env, "truncate -s 1G code/sparse.bin; printf abc | dd of=code/sparse.bin bs=1 seek=500000000 "
               "conv=notrunc 2>/dev/null; ln -s /etc code/etc; ln -s /etc/passwd code/passwd; "
               "md5sum /etc/passwd > /tmp/before")
    child = env.unwrapped.fork()
    try:
        obs = shell(child, "stat -c '%s %b %B' code/sparse.bin; tail -c +500000001 code/sparse.bin | head -c 3; "
                           "echo; readlink code/etc code/passwd; md5sum -c /tmp/before >/dev/null && echo same")
        size, blocks, block_size, data, etc, passwd, same = obs["stdout"].split()
        assert int(size) == 2**30 and int(blocks) * int(block_size) < 2**20, obs["stdout"]  # still sparse
        assert (data, etc, passwd, same) == ("abc", "/etc", "/etc/passwd", "same"), obs["stdout"]
        still_works(child)
    finally:
        child.close()
