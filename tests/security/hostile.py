"""Helpers of the attack suite. Its fixtures (open_env, sentinel, backend) are in tests/conftest.py; every
test runs on the docker sandbox and on the isolated local one, never on the unisolated backend, and in CI
(MLE_ENV_REQUIRE_DOCKER=1, MLE_ENV_REQUIRE_BWRAP=1) nothing in it may skip. Hostile actions run only inside
those sandboxes; the tests check that the host is untouched and that the episode goes on.
"""

from __future__ import annotations

import os
import subprocess
from typing import Any


def host_alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None and os.path.exists(f"/proc/{proc.pid}")


def shell(env: Any, code: str, timeout: float = 60) -> dict[str, Any]:
    """One shell step; the episode must still be running afterwards."""
    obs, _, terminated, truncated, info = env.step({"type": "shell", "code": code, "timeout": timeout})
    assert not (terminated or truncated), (info.get("status"), obs["message"])
    return obs


def python(env: Any, code: str, timeout: float = 60) -> dict[str, Any]:
    obs, _, terminated, truncated, info = env.step({"type": "python", "code": code, "timeout": timeout})
    assert not (terminated or truncated), (info.get("status"), obs["message"])
    return obs


def still_works(env: Any) -> None:
    """The episode goes on and its output is the real one."""
    marker = os.urandom(8).hex()
    obs = shell(env, f"echo {marker}")
    assert obs["stdout"] == f"{marker}\n", (obs["stdout"], obs["message"])
    obs = python(env, "6 * 7")
    assert obs["stdout"].strip() == "42", (obs["stdout"], obs["message"])
