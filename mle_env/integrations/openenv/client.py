"""The client of ``mle-env serve``: OpenEnv's WebSocket ``EnvClient`` with mle-env's typed messages.

    >>> from mle_env.integrations.openenv import MLEAction, MLEEnvClient
    >>> with MLEEnvClient(base_url="http://127.0.0.1:8000", token=TOKEN).sync() as env:   # doctest: +SKIP
    ...     result = env.reset(competition="insults", seed=0)
    ...     result = env.step(MLEAction(type="shell", code="ls data"))
    ...     print(result.observation.prompt)

Async use is OpenEnv's: ``async with MLEEnvClient(base_url=...) as env: await env.reset(...)``. Each client is
one session (one sandbox) on the server. ``step`` also takes an action dict or a plain string (a shell
command), as ``MLEEnv.step`` does; a dict that is not a valid action is sent as it is and answered with a
malformed-action observation. Errors the server answers (no such competition, capacity reached, the session
closed after idling) raise ``RuntimeError`` with its one-line message.

The server needs its token (``Authorization: Bearer TOKEN``): ``token=``, else ``$MLE_ENV_SERVE_TOKEN``. A
refused token raises ``ConnectionError`` with the server's one-line reason. OpenEnv's ``EnvClient`` sends no
headers of its own; :class:`TokenAuth` adds the token to any of them (``class Client(TokenAuth,
GenericEnvClient)``).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from mle_env.integrations.openenv.auth import TOKEN_ENV, bearer_header, is_loopback
from mle_env.integrations.openenv.models import MLEAction, MLEObservation, MLEState


class TokenAuth:
    """Mixin for an OpenEnv ``EnvClient`` class: its WebSocket sends ``Authorization: Bearer TOKEN``.

    ``token``: the server's token; None reads ``$MLE_ENV_SERVE_TOKEN`` (no header when that is unset too).
    ``connect`` opens the connection as OpenEnv's does (its timeouts and message size), with the header; a
    refusal (401: no or wrong token; a full server's refusal comes later, as a reply) raises ConnectionError
    with the server's reason.
    """

    _ws_url: str
    _connect_timeout: float
    _max_message_size: int
    _ws: Any

    def __init__(self, *args: Any, token: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._token = token if token is not None else os.environ.get(TOKEN_ENV) or None

    async def connect(self) -> Any:
        from websockets.asyncio.client import connect as ws_connect
        from websockets.exceptions import InvalidStatus

        if self._ws is not None:
            return self
        try:
            self._ws = await ws_connect(
                self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size,
                additional_headers=bearer_header(self._token) if self._token else None,
                proxy=None if is_loopback(urlsplit(self._ws_url).hostname or "") else True,
            )
        except InvalidStatus as e:
            raise ConnectionError(f"{self._ws_url} refused the connection ({e.response.status_code}): "
                                  f"{_reason(e.response.body)}") from None
        except Exception as e:
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {e}") from e
        return self


def _reason(body: bytes | None) -> str:
    """The one-line ``detail`` of a refusal's JSON body, or its text."""
    text = (body or b"").decode("utf-8", "replace").strip()
    try:
        detail = json.loads(text).get("detail")
    except (ValueError, AttributeError):
        detail = None
    return str(detail if detail is not None else text or "no reason given").replace("\n", " ")


class MLEEnvClient(TokenAuth, EnvClient[MLEAction, MLEObservation, MLEState]):
    """A session on an mle-env OpenEnv server.

    Args:
        base_url: the server, ``http://host:port`` or ``ws://host:port``.
        token: the server's token (sent as ``Authorization: Bearer TOKEN``); None: ``$MLE_ENV_SERVE_TOKEN``.
        message_timeout_s: seconds to wait for one reply; None (the default) waits as long as the action runs
            (actions are bounded by their own timeouts and the episode's budget, and a dead server closes the
            connection). OpenEnv's other options (``connect_timeout_s``, ``max_message_size_mb``, ...) pass on.
    """

    def __init__(self, base_url: str, message_timeout_s: float | None = None, *, token: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(base_url, message_timeout_s=message_timeout_s, token=token, **kwargs)

    async def reset(self, competition: str | None = None, seed: int | None = None, episode_id: str | None = None,
                    options: Mapping[str, Any] | None = None, **kwargs: Any) -> StepResult[MLEObservation]:
        """Start a new episode of ``competition`` (default: the server's ``--competition``)."""
        given = dict(competition=competition, seed=seed, episode_id=episode_id,
                     options=dict(options) if options is not None else None, **kwargs)
        return await super().reset(**{k: v for k, v in given.items() if v is not None})

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        try:
            return await super()._send_and_receive(message)
        except ConnectionClosed as closed:
            # a server that refuses the session (all sessions in use) says why, then closes: that reply is the error
            try:
                reply = json.loads(await asyncio.wait_for(self._ws.recv(), 1)) if self._ws is not None else {}
            except Exception:  # noqa: BLE001 - nothing was said: the closing is the error
                reply = {}
            self._ws = None
            if reply.get("type") == "error":
                data = reply.get("data", {})
                raise RuntimeError(f"Server error: {data.get('message', 'Unknown error')} "
                                   f"(code: {data.get('code', 'UNKNOWN')})") from None
            raise ConnectionError(f"the server closed the connection ({closed}); connect again") from None

    def _step_payload(self, action: MLEAction | Mapping[str, Any] | str) -> dict[str, Any]:
        if isinstance(action, MLEAction):
            return action.to_env_action()
        if isinstance(action, str):
            return {"type": "shell", "code": action}
        if isinstance(action, Mapping):
            return dict(action)
        raise TypeError(f"step takes an MLEAction, an action dict or a shell command string; got "
                        f"{type(action).__name__}")

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[MLEObservation]:
        reward, done = payload.get("reward"), bool(payload.get("done", False))
        observation = MLEObservation(**payload.get("observation", {}), reward=reward, done=done)
        return StepResult(observation=observation, reward=reward, done=done)

    def _parse_state(self, payload: dict[str, Any]) -> MLEState:
        return MLEState(**payload)
