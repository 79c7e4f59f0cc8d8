"""Agent images for the docker sandbox.

- ``mle-env image build`` builds ``images/Dockerfile.cpu`` (or ``Dockerfile.cuda`` with ``--gpu``): the ML
  stack agents expect (numpy, pandas, scikit-learn, lightgbm, xgboost, torch, ...). Needs an image
  registry and PyPI.
- ``mle-env image build --offline`` is for machines that reach no image registry: ``debootstrap`` builds a
  Debian root filesystem from Debian's packages (python3, numpy, pandas, scikit-learn, scipy, pillow,
  xgboost; ``--with-torch`` adds PyTorch) and ``docker import`` turns it into an image. About 75 s for
  debootstrap and 20 s for the import on 2 cores; needs root and the ``debootstrap`` program.

Both recipes give ``python`` and ``pip`` besides ``python3``, and ``curl``, as MLE-bench agents expect; an
image records its recipe's version in the label ``org.mle-env.recipe`` and ``--if-needed`` rebuilds
older ones. Any other image works as ``image=`` when it has ``python3`` (3.8 or newer), ``bash`` and
``sleep``: the worker needs only the standard library, and the sandbox copies it in and runs the agent's
programs as uid 1000 in ``/home``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mle_env.errors import PrerequisiteError

DEFAULT_IMAGE = "mle-env-agent:cpu"
GPU_IMAGE = "mle-env-agent:cuda"
IMAGES_DIR = Path(__file__).with_name("images")
DEBIAN_PACKAGES = (
    "python3", "python-is-python3", "python3-pip", "python3-numpy", "python3-pandas", "python3-sklearn",
    "python3-scipy", "python3-pil", "python3-xgboost", "procps", "curl",
)
#: images carry the version of the recipe they were built from; ``--if-needed`` rebuilds older ones
RECIPE_LABEL = "org.mle-env.recipe"
RECIPE_VERSION = "2"  # 2: python, pip and curl, as MLE-bench agents expect
DEBIAN_MIRROR = "http://deb.debian.org/debian"


def docker_client(timeout: int = 120) -> Any:
    """A client for the engine in DOCKER_HOST (or the local socket).

    Raises:
        PrerequisiteError: the ``docker`` package is missing or no engine answers.
    """
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is a runtime dependency
        raise PrerequisiteError("the docker sandbox needs the docker package: pip install docker") from e
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except Exception as e:  # noqa: BLE001 - docker raises several unrelated types here
        raise PrerequisiteError(
            f"no Docker engine answers ({type(e).__name__}: {e}). Install and start one "
            "(Debian: apt-get install -y docker.io && dockerd &), or use sandbox='local'"
        ) from e
    return client


def image_exists(tag: str, client: Any = None) -> bool:
    """Whether the engine has an image tagged ``tag`` (a client made here is closed again)."""
    import docker

    own = client is None
    client = client or docker_client()
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    finally:
        if own:
            client.close()
    return True


def image_recipe(tag: str, client: Any = None) -> str | None:
    """The recipe version an image was built from ("" for an image without the label, e.g. one the user
    brought), or None when there is no such image."""
    import docker

    own = client is None
    client = client or docker_client()
    try:
        labels = client.images.get(tag).labels or {}
    except docker.errors.ImageNotFound:
        return None
    finally:
        if own:
            client.close()
    return str(labels.get(RECIPE_LABEL, ""))


def build_image(gpu: bool = False, tag: str | None = None, log: Callable[[str], None] = print) -> str:
    """Build the agent image from its Dockerfile (needs a registry and PyPI); returns the tag."""
    tag = tag or (GPU_IMAGE if gpu else DEFAULT_IMAGE)
    client = docker_client(timeout=3600)
    dockerfile = "Dockerfile.cuda" if gpu else "Dockerfile.cpu"
    for chunk in client.api.build(path=str(IMAGES_DIR), dockerfile=dockerfile, tag=tag, rm=True, decode=True,
                                  labels={RECIPE_LABEL: RECIPE_VERSION}):
        if "stream" in chunk and chunk["stream"].strip():
            log(chunk["stream"].rstrip())
        if "error" in chunk:
            raise PrerequisiteError(build_failure(tag, dockerfile, chunk["error"].strip()))
    return tag


_UNREACHABLE = ("no such host", "dial tcp", "i/o timeout", "connection refused", "tls handshake timeout",
                "temporary failure in name resolution", "network is unreachable")


def build_failure(tag: str, dockerfile: str, error: str) -> str:
    """The one-line message for a failed build; when the image registry (or PyPI) cannot be reached, it
    says what the recipe needs and the ways around it."""
    if not any(marker in error.lower() for marker in _UNREACHABLE):
        return f"building {tag} failed: {error}"
    gpu = dockerfile == "Dockerfile.cuda"
    needs = ("the nvidia/cuda base image from Docker Hub, Ubuntu's packages, PyPI and download.pytorch.org" if gpu
             else "the python base image from Docker Hub, Debian's packages and PyPI")
    offline = "" if gpu else "; or run `mle-env image build --offline`, which needs only Debian's package mirror"
    return (f"building {tag} needs {needs}, and the build could not reach them ({error[:160]}): build it on a "
            f"machine that can, `docker save -o image.tar {tag}` there and `docker load -i image.tar` here{offline}")


def build_offline_image(
    tag: str = DEFAULT_IMAGE,
    *,
    with_torch: bool = False,
    suite: str = "bookworm",
    mirror: str = DEBIAN_MIRROR,
    workdir: Path | None = None,
    log: Callable[[str], None] = print,
) -> str:
    """Build an agent image with debootstrap + docker import (no image registry needed); returns the tag.

    Raises:
        PrerequisiteError: not root, no debootstrap, or a step failed (the message has its output).
    """
    if os.geteuid() != 0:
        raise PrerequisiteError("the offline image build runs debootstrap, which needs root")
    if shutil.which("debootstrap") is None:
        raise PrerequisiteError("the offline image build needs debootstrap: apt-get install -y debootstrap")
    client = docker_client(timeout=1800)
    packages = DEBIAN_PACKAGES + (("python3-torch",) if with_torch else ())
    rootfs = Path(tempfile.mkdtemp(prefix="mle-env-rootfs-", dir=workdir))
    try:
        log(f"debootstrap {suite} with {len(packages)} packages into {rootfs} (about a minute)")
        _run(["debootstrap", "--variant=minbase", "--include=" + ",".join(packages), suite, str(rootfs), mirror])
        _run(["chroot", str(rootfs), "useradd", "--uid", "1000", "--create-home", "--home-dir", "/home/agent",
              "agent"])
        # agents run `pip install` (into ~/.local, as uid 1000): Debian's marker would refuse every install
        for marker in (rootfs / "usr" / "lib").glob("python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (rootfs / cache).glob("*"):
                if item.is_file():
                    item.unlink()
        log(f"importing {rootfs} as {tag}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        assert tar.stdout is not None
        repository, _, version = tag.partition(":")
        client.api.import_image(
            src=tar.stdout, repository=repository, tag=version or "latest", stream_src=True,
            changes=['WORKDIR /home', 'ENV LANG=C.UTF-8', 'CMD ["sleep", "infinity"]',
                     f'LABEL {RECIPE_LABEL}="{RECIPE_VERSION}"'],
        )
        if tar.wait() != 0:
            raise PrerequisiteError(f"tar of {rootfs} failed")
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    return tag


def _run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise PrerequisiteError(f"{' '.join(cmd[:3])} ... failed:\n" + "\n".join(tail))
