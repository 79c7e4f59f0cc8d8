"""mle-env over OpenEnv (``pip install 'mle-env[openenv]'``): an OpenEnv environment server whose sessions are
MLEEnv episodes, each in its own sandbox (``mle-env serve``), and the client for it.

    $ export MLE_ENV_SERVE_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
    $ mle-env serve --competition insults --sandbox local --port 8000

    >>> from mle_env.integrations.openenv import MLEAction, MLEEnvClient
    >>> # the token: MLEEnvClient(..., token=TOKEN), or MLE_ENV_SERVE_TOKEN as here
    >>> with MLEEnvClient(base_url="http://127.0.0.1:8000").sync() as env:   # doctest: +SKIP
    ...     result = env.reset(seed=0)
    ...     result = env.step(MLEAction(type="shell", code="ls data"))

- :mod:`.models`: :class:`MLEAction`, :class:`MLEObservation`, :class:`MLEState` (OpenEnv pydantic models).
- :mod:`.server`: :class:`MLEEnvironment` (OpenEnv ``Environment``), :func:`create_app`, :func:`serve`.
- :mod:`.client`: :class:`MLEEnvClient` (OpenEnv ``EnvClient``; ``.sync()`` for blocking use) and
  :class:`TokenAuth` (sends the server's token from any OpenEnv ``EnvClient``).
- :mod:`.auth`: the server's token rules (every route but ``GET /health`` needs ``Authorization: Bearer``).

Names are imported on first use: importing this package alone loads nothing of OpenEnv (whose import takes
seconds); without OpenEnv installed, using a name raises PrerequisiteError saying what to install.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "MLEAction": "models",
    "MLEObservation": "models",
    "MLEState": "models",
    "MLEEnvironment": "server",
    "create_app": "server",
    "serve": "server",
    "MLEEnvClient": "client",
    "TokenAuth": "client",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] in ("openenv", "fastapi", "uvicorn", "websockets"):
            from mle_env.errors import PrerequisiteError

            raise PrerequisiteError(f"{name} needs OpenEnv ({e.name} is not installed): "
                                    "pip install 'mle-env[openenv]'") from e
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
