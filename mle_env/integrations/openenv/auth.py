"""Who may use ``mle-env serve``: a bearer token on every request, and loopback unless a token was chosen.

- Every HTTP request and WebSocket upgrade carries ``Authorization: Bearer TOKEN``; any other request gets
  401 with a one-line JSON error (``{"detail": ...}``) before OpenEnv sees it, so it opens no session. Only
  ``GET /health`` is open: it says ``{"status": "healthy"}`` and nothing else (a liveness probe).
- The token is ``--token``, else the environment variable ``MLE_ENV_SERVE_TOKEN``, else a random one made
  at start (and printed, so that the person who started the server can hand it to clients).
- A server that listens on anything but loopback (127.0.0.0/8, ::1, ``localhost``) needs a token chosen by
  its owner (``--token`` or the environment variable), so that nobody is told to copy a printed secret
  across machines; the traffic is plain HTTP, so the token is only as private as the network.

This module imports nothing of OpenEnv (``mle-env serve`` checks its options before that slow import).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import string
from contextvars import ContextVar
from typing import Any

from mle_env.errors import ConfigError

TOKEN_ENV = "MLE_ENV_SERVE_TOKEN"
MIN_TOKEN_LENGTH = 16
OPEN_PATHS = frozenset({"/health"})
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + string.punctuation)
MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def new_token() -> str:
    """A random token (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(32)


def check_token(token: str, source: str = "--token") -> str:
    """``token`` if it can be a bearer token (at least 16 visible ASCII characters, no spaces).

    Raises:
        ConfigError: it cannot; the message names ``source`` and how to make a good one.
    """
    if not isinstance(token, str) or len(token) < MIN_TOKEN_LENGTH or not set(token) <= _TOKEN_CHARS:
        raise ConfigError(f"{source} must be at least {MIN_TOKEN_LENGTH} visible ASCII characters without "
                          f"spaces; make one with {MAKE_TOKEN}")
    return token


def resolve_token(token: str | None = None) -> tuple[str, str | None]:
    """The server's token and where it came from: ``token`` (``"--token"``), else ``$MLE_ENV_SERVE_TOKEN``
    (its name), else a new random one (source None: nobody chose it, so it must be shown to the owner)."""
    if token is not None:
        return check_token(token, "--token"), "--token"
    given = os.environ.get(TOKEN_ENV)
    if given:
        return check_token(given, TOKEN_ENV), TOKEN_ENV
    return new_token(), None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost`` (other names count as reachable from outside)."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, token_source: str | None) -> str | None:
    """Refuse a non-loopback ``host`` without a token its owner chose; returns the warning to print for one
    with such a token (None on loopback).

    Raises:
        ConfigError: ``host`` is not loopback and ``token_source`` is None (the token would be random).
    """
    if is_loopback(host):
        return None
    if token_source is None:
        raise ConfigError(f"--host {host} makes the server reachable from other hosts, and anyone who reaches "
                          f"it can run code in its sandboxes: choose a token (export {TOKEN_ENV}=$({MAKE_TOKEN}) "
                          "or --token) or listen on 127.0.0.1")
    return (f"warning: --host {host}: the server is reachable from other hosts; anyone with the token can run "
            "code in its sandboxes, and the token travels in plain HTTP")


def bearer_header(token: str) -> dict[str, str]:
    """The header a client sends: ``{"Authorization": "Bearer TOKEN"}``."""
    return {"Authorization": f"Bearer {token}"}


class BearerAuth:
    """ASGI middleware: an HTTP request or WebSocket upgrade without ``Authorization: Bearer <token>`` is
    answered 401 with a one-line JSON error and never reaches the app (``GET /health`` excepted)."""

    def __init__(self, app: Any, token: str, open_paths: frozenset[str] = OPEN_PATHS) -> None:
        self.app = app
        self._token = check_token(token, "the server's token").encode()
        self.open_paths = open_paths
        logging.getLogger("uvicorn.error").addFilter(_quiet_denials)  # once: a logger keeps one of each filter

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket") or (kind == "http" and scope.get("path") in self.open_paths):
            await self.app(scope, receive, send)
            return
        problem = self.problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
        else:
            await _refuse(scope, receive, send, problem)

    def problem(self, scope: Any) -> str | None:
        """What is wrong with the request's credentials (one line), or None when it carries the token."""
        given = _bearer(scope)
        if given is None:
            return ("this server needs a token: send the header 'Authorization: Bearer TOKEN' with the token "
                    f"`mle-env serve` printed at start (or its --token / {TOKEN_ENV})")
        if not hmac.compare_digest(given, self._token):
            return (f"wrong token: send the token `mle-env serve` printed at start (or its --token / {TOKEN_ENV}) "
                    "as 'Authorization: Bearer TOKEN'")
        return None


def _bearer(scope: Any) -> bytes | None:
    """The token of the request's ``Authorization: Bearer`` header, or None without one."""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"authorization":
            scheme, _, token = value.strip().partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                return token.strip()
            return None
    return None


_denied: ContextVar[bool] = ContextVar("mle_env_ws_denied", default=False)


async def _refuse(scope: Any, receive: Any, send: Any, message: str) -> None:
    from starlette.responses import JSONResponse

    response = JSONResponse(status_code=401, content={"detail": message}, headers={"WWW-Authenticate": "Bearer"})
    if scope["type"] == "http":
        await response(scope, receive, send)
    elif "websocket.http.response" in scope.get("extensions", {}):
        _denied.set(True)
        await response(scope, receive, send)  # a WebSocket upgrade gets the same 401 (the denial extension)
    else:  # a server without that extension: refuse the upgrade (its client sees 403)
        await send({"type": "websocket.close", "code": 1008, "reason": "unauthorized"})


def _quiet_denials(record: logging.LogRecord) -> bool:
    """Drop uvicorn's "returned without completing handshake" error for an upgrade refused here with 401 (its
    websockets-sansio protocol logs it after any denial response; uvicorn logs it in the refused request's
    task, where ``_denied`` is set)."""
    return not (_denied.get() and "without completing handshake" in str(record.msg))
