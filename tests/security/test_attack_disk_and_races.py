"""Attacks found by reviewing the hardened sandboxes: ways around the disk watchdog (paths too long for it,
files deleted while held open, a folder swapped for a link while it walks), a submission rewritten while it
is copied out, a half-sent request holding the validation endpoint, tracing the sandbox's init into exiting
(which would end the episode as an infrastructure error: a free retry), and vsock sockets, which no network
namespace covers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hostile import python, shell, still_works


def background(env, code: str) -> None:
    """Start ``code`` as a Python program of its own in the sandbox, detached: it goes on after the action."""
    python(env, f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {code!r}], start_new_session=True)")

DEEP_PATH_FILL = r"""
import os
os.chdir("code")
for i in range(18):                      # 18 levels of 250-character names: a path of over 4,500 bytes
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
for i in range(3):
    with open(f"f{i}", "wb") as f:
        f.write(b"x" * (19 << 20))
"""


def test_files_below_a_path_too_long_for_a_path_walk_still_count(open_env) -> None:
    env = open_env(disk="40m")
    obs, _, terminated, truncated, _ = env.step({"type": "python", "code": DEEP_PATH_FILL, "timeout": 120})
    assert not (terminated or truncated)
    if "disk limit" not in obs["message"]:  # a scan that got slow (a loaded machine) waits for its next turn:
        obs = shell(env, "sleep 2")        # the watchdog looks at most every 10x its own cost, not after every cell
    assert "disk limit" in obs["message"], obs["message"]
    still_works(env)


HELD_OPEN_FILL = r"""
import os, time
files = []
for i in range(4):
    f = open(f'/tmp/held{i}', 'wb'); f.write(b'x' * (19 << 20)); f.flush()
    os.unlink(f'/tmp/held{i}'); files.append(f)
time.sleep(600)
"""


def test_files_deleted_while_held_open_still_count(open_env) -> None:
    env = open_env(disk="40m")
    background(env, HELD_OPEN_FILL)
    obs = shell(env, "sleep 3")
    if "disk limit" not in obs["message"]:  # the background writer may finish after that: look again
        obs = shell(env, "sleep 3")
    assert "disk limit" in obs["message"], obs["message"]
    assert shell(env, "pgrep -f 'held[0]' || echo none")["stdout"].strip() == "none"  # the holder was stopped
    still_works(env)


SWAP_LOOP = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
d = os.open('code/w', os.O_RDONLY)
for _ in range(2_000_000):
    libc.renameat2(d, b'x', d, b'y', 2)  # RENAME_EXCHANGE: the folder and the link trade places
"""


@pytest.mark.slow
def test_a_folder_swapped_for_a_link_does_not_make_the_watchdog_walk_the_link(open_env) -> None:
    env = open_env(disk="20m")  # /usr is far larger than 20 MiB: walking it would stop the actions
    shell(env, "mkdir -p code/w/x && ln -s /usr code/w/y")
    background(env, SWAP_LOOP)
    for _ in range(5):
        obs = shell(env, "sleep 1.2")
        assert "disk limit" not in obs["message"], obs["message"]
    shell(env, "pkill -f renameat2 || true")
    still_works(env)


REWRITE_LOOP = r"""
import os
block = b'x' * (8 << 20)
for _ in range(200_000):
    fd = os.open('submission/submission.csv', os.O_WRONLY | os.O_CREAT)
    os.ftruncate(fd, 0)
    for i in range(400):
        os.pwrite(fd, b'x', i * 8192)
    os.close(fd)
    fd = os.open('code/churn.bin', os.O_WRONLY | os.O_CREAT)  # 8 MiB, then nothing, over and over
    os.pwrite(fd, block, 0)
    os.ftruncate(fd, 0)
    os.close(fd)
"""


def test_a_file_rewritten_while_it_is_copied_or_forked_is_the_agents_result(open_env) -> None:
    env = open_env()
    background(env, REWRITE_LOOP)
    for _ in range(25):
        obs, _, terminated, truncated, info = env.step({"type": "validate"})
        assert not (terminated or truncated), (info["status"], obs["message"])
    for _ in range(5):  # the fork packs code/churn.bin while it shrinks and grows
        env.unwrapped.fork().close()
    obs, _, terminated, _, info = env.step({"type": "submit"})
    assert terminated and info["status"] == "submitted", (info["status"], obs["message"])
    footer = json.loads((Path(info["episode_dir"]) / "trajectory.jsonl").read_text().splitlines()[-1])
    assert "errors" not in footer["artifacts"] and footer["artifacts"]["code"]["files"] >= 1, footer["artifacts"]


HALF_SENT = r"""
import socket, time
s = socket.create_connection(('127.0.0.1', 5000))
s.sendall(b'POST /validate HTTP/1.1\r\n')
time.sleep(600)
"""


@pytest.mark.slow
def test_a_half_sent_request_holds_the_endpoint_only_for_a_while(open_env, monkeypatch) -> None:
    from mle_env.sandbox.endpoint import ValidationEndpoint

    monkeypatch.setattr(ValidationEndpoint, "idle_s", 3.0)  # 30 s outside tests: the same rule, sooner
    env = open_env()
    background(env, HALF_SENT)
    time.sleep(2)  # connected before the real request
    obs = shell(env, "echo id,target > /tmp/s.csv; curl -s -m 90 -X POST -F file=@/tmp/s.csv "
                     "http://localhost:5000/validate", timeout=120)
    assert "Submission" in obs["stdout"], obs


def test_the_sandboxs_init_cannot_be_traced_and_the_episode_is_never_an_infra_error(open_env) -> None:
    env = open_env()
    obs = python(env, "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                      "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno())")  # PTRACE_ATTACH to pid 1
    assert obs["stdout"].split() == ["-1", "1"], obs  # EPERM
    obs, _, terminated, truncated, info = env.step({"type": "shell", "code": "kill -9 1; kill -9 -1; true"})
    assert info["status"] in ("running", "sandbox_broken"), (info["status"], obs["message"])


def test_no_vsock_socket(open_env) -> None:
    env = open_env()
    obs = python(env, "import socket\ntry:\n    socket.socket(40, socket.SOCK_STREAM); print('opened')\n"
                      "except OSError as e:\n    print('refused', e.errno)")
    assert obs["stdout"] == "refused 97\n", obs["stdout"]  # EAFNOSUPPORT: the seccomp filter of either sandbox


LONG_PATHS = r"""
import os
os.chdir("code")
for i in range(12):                      # paths of over 3,000 characters: their tar headers would be large
    os.mkdir("p" * 250)
    os.chdir("p" * 250)
for i in range(100):
    open(f"f{i}", "w").close()
"""


def test_files_with_overlong_paths_are_left_out_of_the_kept_code_which_is_still_kept(open_env) -> None:
    env = open_env(artifacts_max_bytes="1m", artifacts_max_files=100)
    shell(env, "echo keep > code/short.txt")
    python(env, LONG_PATHS)
    info = env.step({"type": "submit"})[4]
    kept = Path(info["episode_dir"]) / "code"
    assert (kept / "short.txt").read_text() == "keep\n"
    assert "100 file(s) with paths over 1024 characters" in (kept / "TRUNCATED.txt").read_text()
