"""Fixtures and helpers of the attack suite (imported by each test module, like tests/llm_fixture.py).

Every test runs on the docker sandbox and on the isolated local one (bubblewrap), never
on the unisolated backend. In CI (MLE_ENV_REQUIRE_DOCKER=1, MLE_ENV_REQUIRE_BWRAP=1) nothing here may skip.

Hostile actions (``kill -9 -1``, fork bombs, disk fills) run only inside those sandboxes; the tests check
that the host is untouched (a sentinel process of the host's stays alive) and that the episode goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mle_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import require  # noqa: E402 - tests/conftest.py, as the other test folders import it


@pytest.fixture(scope="session")
def bwrap_ready() -> None:
    from mle_env.errors import PrerequisiteError
    from mle_env.sandbox.local import require_bubblewrap

    try:
        require_bubblewrap()
    except PrerequisiteError as e:
        require(False, f"no bubblewrap: {e}", "MLE_ENV_REQUIRE_BWRAP")


@pytest.fixture(params=["docker", "local"])
def kind(request: pytest.FixtureRequest) -> str:
    """The isolating backends: docker (needs the engine and image) and local (needs bubblewrap)."""
    request.getfixturevalue("docker_engine" if request.param == "docker" else "bwrap_ready")
    return request.param


@pytest.fixture
def open_env(kind: str, tiny_prepared: str) -> Iterator[Callable[..., Any]]:
    """``open_env(**options)``: a reset env on this backend; every one is closed after the test."""
    made = []

    def factory(**options: Any) -> Any:
        env = mle_env.make(tiny_prepared, sandbox=kind, **{"memory": "512m", **options})
        made.append(env)
        env.reset()
        return env

    yield factory
    for env in made:
        env.close()


@pytest.fixture
def env(open_env: Callable[..., Any]) -> Any:
    return open_env()


@pytest.fixture
def sentinel() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the host's, as the test's user, that an attack from inside must not reach."""
    proc = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


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
