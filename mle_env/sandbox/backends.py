"""Choosing a sandbox backend (``auto``: docker when an engine answers and the image is present, else the
isolated local sandbox when bubblewrap works here) and creating one."""

from __future__ import annotations

from pathlib import Path

from mle_env.errors import PrerequisiteError
from mle_env.sandbox.base import Sandbox, SandboxLimits

BACKENDS = ("auto", "docker", "local", "unisolated")


def choose_backend(kind: str, image: str) -> tuple[str, str]:
    """Resolve ``auto`` to ``docker`` or ``local``; returns (backend, reason).

    Raises:
        ValueError: ``kind`` is not one of BACKENDS.
        PrerequisiteError: ``auto`` found neither a usable Docker engine with the image nor bubblewrap.
    """
    if kind not in BACKENDS:
        raise ValueError(f"sandbox must be one of {', '.join(BACKENDS)}, not {kind!r}")
    if kind != "auto":
        return kind, f"sandbox={kind!r} was asked for"
    from mle_env.sandbox.images import docker_client, image_exists
    from mle_env.sandbox.local import require_bubblewrap

    try:
        client = docker_client(timeout=10)
    except PrerequisiteError as e:
        docker_problem = f"no Docker engine answers ({e})"
    else:
        try:
            if image_exists(image, client):
                return "docker", "a Docker engine answers and the image is present"
            docker_problem = f"the Docker image {image} is missing (`mle-env image build --offline`)"
        finally:
            client.close()
    try:
        require_bubblewrap()
    except PrerequisiteError as e:
        raise PrerequisiteError(
            f"no isolated sandbox is available: {docker_problem}, and {e}. sandbox='unisolated' runs actions "
            "without isolation, for trusted code only"
        ) from None
    return "local", f"{docker_problem}, so actions run in the isolated local sandbox (bubblewrap)"


def create_sandbox(kind: str, public_dir: Path, limits: SandboxLimits, image: str) -> Sandbox:
    """A not-yet-started sandbox of the given backend (``docker``, ``local`` or ``unisolated``)."""
    if kind == "docker":
        from mle_env.sandbox.docker import DockerSandbox

        return DockerSandbox(public_dir, limits, image)
    if kind == "local":
        from mle_env.sandbox.local import LocalSandbox

        return LocalSandbox(public_dir, limits)
    if kind == "unisolated":
        from mle_env.sandbox.unisolated import UnisolatedSandbox

        return UnisolatedSandbox(public_dir, limits)
    raise ValueError(f"unknown sandbox backend {kind!r}")
