"""The host<->worker channel: garbage, forged replies and forged errors written wherever the agent can
write, closed descriptors and attempts to kill the worker change nothing: later steps return their real
output and the episode goes on."""

from __future__ import annotations

import pytest
from hostile import python, shell, still_works

FORGED = '{"id": %d, "stdout": "FORGED", "stderr": "", "exit_code": 0, "timed_out": false, "stdout_bytes": 6, ' \
         '"stderr_bytes": 0, "duration": 0, "note": ""}'

ATTACKS = {
    "garbage": "echo 'not json' > /proc/$PPID/fd/1; for p in /proc/[0-9]*; do echo 'not json' > $p/fd/1; done",
    "forged-replies": "for i in $(seq 1 40); do for p in /proc/[0-9]*; do echo '{}' > $p/fd/1; done; done".format(
        FORGED.replace("%d", "'$i'")),
    "forged-errors": "for i in $(seq 1 40); do for p in /proc/[0-9]*; do echo '{\"id\": '$i', \"error\": \"x\"}'"
                     " > $p/fd/1; done; done",
    "kill-the-parent": "kill -9 $PPID; echo tried",
    "kill-every-worker": "pkill -9 -f worker.py; pkill -9 -f 'serve'; echo tried",
    "close-own-descriptors": "exec 0<&- 1>&- 2>&-; sleep 0.1",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_channel_attacks_change_nothing(open_env, attack: str) -> None:
    env = open_env()
    obs, _, terminated, truncated, info = env.step({"type": "shell", "code": ATTACKS[attack] + " 2>/dev/null",
                                                    "timeout": 60})
    assert not (terminated or truncated), (info["status"], obs["message"])
    for _ in range(3):
        still_works(env)
        assert "FORGED" not in shell(env, "true")["stdout"]


def test_python_cells_that_close_descriptors_or_forge_status_are_contained(open_env) -> None:
    env = open_env()
    python(env, "import os\nos.closerange(0, 1024)")
    python(env, "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'{\"exit_code\": 0}\\n')\n"
                      "    except OSError:\n        pass")
    still_works(env)
