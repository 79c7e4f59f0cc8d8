"""Sandboxes: where actions run. One interface (:class:`Sandbox`), one module per backend.

- ``docker`` (:mod:`mle_env.sandbox.docker`): a container per episode; the secure default.
- ``local`` (:mod:`mle_env.sandbox.local`): a workspace folder and subprocesses; no isolation.

``choose_backend("auto")`` picks docker when an engine answers and the image is present, else local, and
says why.
"""

from __future__ import annotations

from pathlib import Path

from mle_env.errors import PrerequisiteError
from mle_env.sandbox.base import ExecResult, Sandbox, SandboxInfo, SandboxLimits

BACKENDS = ("auto", "docker", "local")


def choose_backend(kind: str, image: str) -> tuple[str, str]:
    """Resolve ``auto`` to ``docker`` or ``local``; returns (backend, reason).

    Raises:
        ValueError: ``kind`` is not auto, docker or local.
    """
    if kind not in BACKENDS:
        raise ValueError(f"sandbox must be one of {', '.join(BACKENDS)}, not {kind!r}")
    if kind != "auto":
        return kind, f"sandbox={kind!r} was asked for"
    from mle_env.sandbox.images import docker_client, image_exists

    try:
        client = docker_client(timeout=10)
    except PrerequisiteError:
        return "local", "no Docker engine answers, so actions run locally (not isolated)"
    try:
        if not image_exists(image, client):
            return "local", (f"the Docker image {image} is missing (`mle-env image build --offline`), "
                             "so actions run locally")
    finally:
        client.close()
    return "docker", "a Docker engine answers and the image is present"


def create_sandbox(kind: str, public_dir: Path, limits: SandboxLimits, image: str) -> Sandbox:
    """A not-yet-started sandbox of the given backend (``docker`` or ``local``)."""
    if kind == "docker":
        from mle_env.sandbox.docker import DockerSandbox

        return DockerSandbox(public_dir, limits, image)
    if kind == "local":
        from mle_env.sandbox.local import LocalSandbox

        return LocalSandbox(public_dir, limits)
    raise ValueError(f"unknown sandbox backend {kind!r}")


__all__ = ["BACKENDS", "ExecResult", "Sandbox", "SandboxInfo", "SandboxLimits", "choose_backend", "create_sandbox"]
