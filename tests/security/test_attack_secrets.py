"""Reading what the agent must never read: the private answers, the host's files, the host's environment."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hostile import shell


@pytest.mark.slow
def test_answers_host_files_and_host_environment_stay_out_of_reach(
    open_env, home: Path, tiny_prepared: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = uuid.uuid4().hex
    (home / tiny_prepared / "prepared" / "private" / "canary.txt").write_text(canary)
    (tmp_path / "host-secret.txt").write_text(canary)
    for name in ("GITHUB_TOKEN", "DATABASE_PASSWORD", "KAGGLE_KEY", "SOME_UNLISTED_SECRET"):
        monkeypatch.setenv(name, canary)
    env = open_env()
    obs = shell(env, (
        f"echo contents=$(grep -rl {canary} /home /tmp /etc /opt /root /var /run /srv /mnt /usr/local 2>/dev/null"
        " | wc -l);"
        " echo names=$(find / -xdev \\( -name canary.txt -o -name host-secret.txt -o -name private \\)"
        " -not -path '/proc/*' -not -path '*/ssl/private' 2>/dev/null | wc -l);"  # OpenSSL's key folder
        f" echo environ=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {canary});"
        f" echo env=$(env | grep -c {canary});"
        " echo mounts=$(grep -c -E '/private|/trajectories' /proc/self/mountinfo);"
        " echo home=$(ls /root 2>/dev/null | grep -v -c '^.pyenv$')"), timeout=180)
    values = dict(line.split("=", 1) for line in obs["stdout"].split())
    assert values == {"contents": "0", "names": "0", "environ": "0", "env": "0", "mounts": "0", "home": "0"}, obs


def test_the_public_data_is_there_and_read_only(open_env) -> None:
    env = open_env()
    before = shell(env, "md5sum data/train.csv")["stdout"]
    obs = shell(env, "touch data/x; echo more >> data/train.csv; rm -f data/train.csv; chmod 777 data/train.csv;"
                     " ls data")
    assert (obs["stdout"] + obs["stderr"]).count("Read-only file system") >= 3, obs
    assert "train.csv" in obs["stdout"] and "x" not in obs["stdout"].split()
    assert shell(env, "md5sum data/train.csv")["stdout"] == before
