"""Resources: a fork bomb, a memory blow-up, endless loops, floods of output and a disk fill are each held by
a limit, told to the agent, and the episode goes on; the host is untouched."""

from __future__ import annotations

import resource

import pytest
from hostile import host_alive, python, shell, still_works


def test_a_fork_bomb_is_held_and_the_episode_goes_on(open_env, sentinel) -> None:
    env = open_env(memory="2g")  # so that only the process limit can stop it
    obs = shell(env, "bomb() { bomb | bomb & }; bomb", timeout=5)
    assert "could not run this action" not in obs["message"], obs["message"]
    outputs = [shell(env, "echo alive") for _ in range(3)]
    assert any(o["stdout"] == "alive\n" for o in outputs), outputs
    still_works(env)
    assert host_alive(sentinel)


def test_a_memory_blow_up_kills_the_program_only(open_env, sentinel) -> None:
    env = open_env(memory="256m")
    grow = "keep = 1\nblob = bytearray(1024 ** 3)\nblob[::4096] = b'x' * len(blob[::4096])"
    obs = python(env, grow)
    assert "killed by signal 9" in obs["message"], (obs["message"], obs["stderr"])
    obs = shell(env, "python3 -c 'b = bytearray(1024 ** 3); b[::4096] = bytes(len(b[::4096]))'; echo status=$?")
    assert "status=137" in obs["stdout"], obs
    obs = python(env, "'keep' in globals(), 6 * 7")
    assert obs["stdout"].strip() == "(False, 42)"
    assert host_alive(sentinel)


@pytest.mark.slow
def test_endless_loops_time_out(open_env) -> None:
    env = open_env()
    obs = shell(env, "while true; do :; done", timeout=2)
    assert obs["timed_out"] and "timed out after 2s" in obs["message"]
    obs = python(env, "x = 1\nwhile True:\n    pass", timeout=2)
    assert obs["timed_out"] and "restarted" in obs["message"]
    still_works(env)


def test_floods_of_output_are_capped_on_both_sides(open_env) -> None:
    env = open_env()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    flood = "head -c 50000000 /dev/zero | tr '\\0' a; head -c 30000000 /dev/zero | tr '\\0' b >&2"
    obs = shell(env, flood, timeout=120)
    assert len(obs["stdout"]) < 40_000 and "bytes of output cut" in obs["stdout"]
    assert len(obs["stderr"]) < 40_000 and "bytes of output cut" in obs["stderr"]
    obs = python(env, "print('x' * 20_000_000)", timeout=120)
    assert len(obs["stdout"]) < 40_000 and "bytes of output cut" in obs["stdout"]
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 64, f"the host process grew by {grown_mb:.0f} MB"
    still_works(env)


def test_a_disk_fill_with_its_output_redirected_is_stopped_at_the_limit_too(open_env) -> None:
    env = open_env(disk="64m")  # the program closes the pipes the worker reads: the watchdog must still look
    obs = shell(env, "exec >/dev/null 2>&1; for i in $(seq 1 30); do head -c 9000000 /dev/zero > /tmp/f$i || break;"
                     " sleep 0.1; done", timeout=120)
    assert "disk limit" in obs["message"] and "exceeded" in obs["message"], obs
    obs = shell(env, "du -cm --apparent-size /tmp/f* | tail -1 | cut -f1")
    assert int(obs["stdout"]) <= 64 + 32, obs
    still_works(env)


def test_a_disk_fill_is_stopped_at_the_limit_and_the_submission_survives(open_env) -> None:
    env = open_env(disk="64m")
    shell(env, "cp data/sample_submission.csv submission/submission.csv")
    obs = shell(env, "dd if=/dev/zero of=code/big bs=1M count=500 2>&1 | tail -1; echo rc=${PIPESTATUS[0]}",
                timeout=120)
    assert "rc=0" not in obs["stdout"], obs
    obs = shell(env, "for i in $(seq 1 30); do head -c 9000000 /dev/zero > /tmp/f$i || break; sleep 0.1; done;"
                     " echo done", timeout=120)
    assert "disk limit" in obs["message"] and "exceeded" in obs["message"], obs
    obs = shell(env, "du -cm --apparent-size /tmp/f* code | tail -1 | cut -f1")
    assert int(obs["stdout"]) <= 64 + 32, obs  # near the limit the watchdog looks ten times a second
    obs = shell(env, "rm -rf /tmp/f* code/big; echo freed")
    assert obs["stdout"] == "freed\n"
    still_works(env)
    obs, reward, terminated, _, info = env.step({"type": "submit"})
    assert terminated and info["grade"]["valid_submission"], info["grade"]
