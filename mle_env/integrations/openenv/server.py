"""mle-env as an OpenEnv environment server (``mle-env serve``): each WebSocket session of OpenEnv's protocol
is one :class:`~mle_env.env.MLEEnv` with its own sandbox.

Sessions:

- A client's WebSocket connection (OpenEnv's ``/ws``; :class:`~mle_env.integrations.openenv.client.MLEEnvClient`
  or any OpenEnv ``EnvClient``) is one session. ``reset`` takes ``competition`` (an id or alias; default: the
  server's), ``seed``, ``episode_id`` and ``options`` (recorded in the trajectory's header) and starts a fresh
  sandbox; ``step`` takes an :class:`~mle_env.integrations.openenv.models.MLEAction` payload; ``state`` answers
  an :class:`~mle_env.integrations.openenv.models.MLEState`.
- A payload that is not a valid action (unknown type, missing code, a bad timeout, unknown keys) is answered
  as ``MLEEnv.step`` answers it: an observation with ``action == "invalid"`` and the reason in ``message``; it
  costs a step. Errors of the caller (reset with an unknown or unprepared competition, a step before reset or
  after the episode ended) come back as one-line OpenEnv error replies; the session stays usable.
- When the client disconnects (cleanly or not), its session is closed and its sandbox removed (after the
  action running then, if any, has ended: actions are bounded by their own timeouts). A session with no
  reset or step, running or sent, for ``idle_timeout`` seconds is closed the same way (``state`` requests do
  not count); its next message is answered with an error saying so. At most ``max_sessions`` sessions are
  open at once; one more is refused with a one-line error naming ``--max-sessions``. Stopping the server
  closes every session.
- A WebSocket frame that is not one JSON object (binary, invalid JSON, an array, a string, a number, nesting
  deeper than ``MAX_DEPTH``) is answered with a one-line ``INVALID_JSON`` error; the session goes on.
- Sessions made through OpenEnv's MCP routes (``openenv/session/create`` on ``POST /mcp``, a ``/mcp``
  WebSocket) take a slot like WebSocket sessions and are closed by the same idle rule; MCP requests are no
  activity (this environment has no MCP tools), so only resets and steps keep a session open.
- OpenEnv's stateless HTTP ``/reset``, ``/step`` and ``/state`` (a new environment per request) cannot hold an
  episode, so they answer 409 saying to use the WebSocket endpoint; ``/health``, ``/schema`` and ``/metadata``
  are OpenEnv's.

Anyone who can use the server can run code in its sandboxes, so every route but ``GET /health`` (which says
only that the server is up) needs the server's token, ``Authorization: Bearer TOKEN``
(:mod:`~mle_env.integrations.openenv.auth`); the server listens on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import sys
import time
import uuid
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, WebSocketDisconnect
from fastapi.responses import JSONResponse
from openenv.core.env_server.exceptions import SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata, WSErrorCode, WSErrorResponse
from pydantic import PrivateAttr, ValidationError, model_validator

from mle_env.errors import ConfigError, MleEnvError
from mle_env.integrations.openenv.auth import TOKEN_ENV, BearerAuth, check_host, resolve_token
from mle_env.integrations.openenv.models import OBSERVATION_KEYS, MLEAction, MLEObservation, MLEState

log = logging.getLogger("mle_env.serve")

DEFAULT_MAX_SESSIONS = 8
DEFAULT_IDLE_TIMEOUT = 3600.0
RESET_KEYS = ("competition", "seed", "episode_id", "options")
MAX_DEPTH = 64  # a session message nests dicts and lists at most this deep
SEND_OBJECT = 'send one JSON object per text frame, such as {"type": "reset", "data": {}}'
STATEFUL_ONLY = ("mle-env episodes are stateful: connect to the WebSocket endpoint /ws (MLEEnvClient, or any "
                 "OpenEnv EnvClient sending the token); the stateless HTTP /reset, /step and /state cannot hold "
                 "an episode")


class SessionError(RuntimeError):
    """A message this session cannot act on (no episode, an ended or expired session, bad reset options); the
    client gets its text as a one-line error reply."""


class _WireAction(MLEAction):
    """What the server reads a step payload into: an :class:`MLEAction`, or, for a payload that is none, the
    payload as sent (``raw``), so that ``MLEEnv.step`` answers it with a malformed-action observation."""

    _raw: Any = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_malformed(cls, data: Any, handler: Any) -> Any:
        try:
            return handler(data)
        except ValidationError:
            action = cls.model_construct()
            action._raw = data
            return action

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return MLEAction.model_json_schema(*args, **kwargs)  # /schema shows the action clients may send


def env_action(action: Any) -> Any:
    """The action to hand to ``MLEEnv.step``: a malformed payload as it was sent, else the action's dict."""
    if isinstance(action, _WireAction) and action._raw is not None:
        return action._raw
    if isinstance(action, MLEAction):
        return action.to_env_action()
    return action


def _plain(value: Any) -> Any:
    from mle_env.observation import to_jsonable

    try:
        return to_jsonable(value)
    except TypeError:  # something outside an observation's types: its text
        return json.loads(json.dumps(value, default=str))


def to_observation(obs: Mapping[str, Any], info: Mapping[str, Any], reward: float | None = None,
                   terminated: bool = False, truncated: bool = False) -> MLEObservation:
    """An MLEEnv observation and info as an :class:`MLEObservation` (the grade moves from info to ``grade``)."""
    from mle_env.text_interface import render_observation

    plain = _plain(dict(obs))
    rest = _plain({k: v for k, v in info.items() if k != "grade"})
    return MLEObservation(
        **{key: plain[key] for key in OBSERVATION_KEYS}, reward=reward, done=bool(terminated or truncated),
        terminated=bool(terminated), truncated=bool(truncated), status=str(info.get("status", "running")),
        prompt=render_observation(obs), info=rest, grade=_plain(info.get("grade")),
    )


class MLEEnvironment(Environment[MLEAction, MLEObservation, MLEState]):
    """One session: an MLEEnv, made at the first reset (and again when a reset names another competition).

    Args:
        competition: the competition a reset without ``competition`` runs (id or alias).
        env_options: ``mle_env.make`` options for every episode (sandbox, budgets, resources, reward, ...).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, competition: str | None = None, env_options: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.default_competition = competition
        self.env_options = dict(env_options or {})
        self._env: Any = None
        self._competition_id: str | None = None
        self._state = MLEState()
        self._expired: str | None = None
        self._turn = 0  # resets of a set without a seed take its competitions in turn

    def reset(self, seed: int | None = None, episode_id: str | None = None, competition: str | None = None,
              options: Mapping[str, Any] | None = None, **kwargs: Any) -> MLEObservation:
        """Start a new episode (a new sandbox; the previous one is removed)."""
        self._check_open()
        if kwargs:
            raise SessionError(f"reset got unknown option(s) {', '.join(sorted(map(str, kwargs)))}; it takes "
                               f"{', '.join(RESET_KEYS)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise SessionError(f"seed must be a non-negative integer or None; got {seed!r}")
        if options is not None and not isinstance(options, Mapping):
            raise SessionError(f"options must be an object (dict) or None; got {type(options).__name__}")
        if episode_id is not None and not isinstance(episode_id, str):
            raise SessionError(f"episode_id must be a string or None; got {type(episode_id).__name__}")
        wanted = competition or self.default_competition
        if not wanted:
            raise SessionError("no competition: send reset(competition=ID), or start the server with "
                               "--competition ID")
        if not isinstance(wanted, str):
            raise SessionError(f"competition must be an id or alias (a string); got {type(wanted).__name__}")
        wanted = self._member(wanted, seed)
        obs, info = self._guarded(self._reset, wanted, seed, dict(options) if options is not None else None)
        self._state = MLEState(episode_id=episode_id or uuid.uuid4().hex, step_count=0,
                               competition=self._competition_id, status=str(info.get("status", "running")),
                               sandbox=info.get("sandbox"), episode_dir=info.get("episode_dir"))
        return to_observation(obs, info)

    def _member(self, wanted: str, seed: int | None) -> str:
        """A set (``practice-eval``, ``practice-tabular``...) stands for one of its competitions: the one at
        ``seed`` modulo its size, or, without a seed, the next in turn."""
        from mle_env.competition.registry import task_set

        members = task_set(wanted)
        if not members:
            return wanted
        self._turn += 1
        return members[(seed if seed is not None else self._turn - 1) % len(members)]

    def _reset(self, wanted: str, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, Any]:
        from mle_env.competition.registry import get_spec
        from mle_env.env import make

        cid = get_spec(wanted).id
        if self._env is None or cid != self._competition_id:
            self._close_env()
            self._env = make(cid, **self.env_options)
            self._competition_id = cid
        return self._env.reset(seed=seed, options=options)

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> MLEObservation:
        """One action; a malformed one is answered with an observation (see the module docstring)."""
        from gymnasium.error import ResetNeeded

        self._check_open()
        if self._env is None:
            raise SessionError("no episode in this session: send reset first")
        try:
            obs, reward, terminated, truncated, info = self._guarded(self._env.step, env_action(action))
        except ResetNeeded:
            raise SessionError("the episode has ended: send reset to start another") from None
        self._state.step_count = int(info.get("step", self._state.step_count + 1))
        self._state.status = str(info.get("status", "running"))
        return to_observation(obs, info, float(reward), terminated, truncated)

    @property
    def state(self) -> MLEState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        from mle_env import __version__

        return EnvironmentMetadata(
            name="mle-env", version=__version__,
            description="ML-engineering competitions as episodes: shell/python actions in a sandbox, graded as "
                        "MLE-bench grades (reward: medal tier 0-3 on the last step).",
        )

    def expire(self, reason: str) -> None:
        """Refuse every later message of this session with ``reason`` (the server closes it next)."""
        self._expired = reason

    def close(self) -> None:
        """Close the episode (it is recorded as closed) and remove its sandbox; safe to call twice."""
        self._close_env()

    def _close_env(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            env.close()

    def _check_open(self) -> None:
        if self._expired is not None:
            raise SessionError(self._expired)

    @staticmethod
    def _guarded(fn: Any, *args: Any) -> Any:
        """``fn(*args)``; errors mle-env raises on purpose pass as they are, anything else (a bug) is logged with
        its traceback and passed on with its type named, so the client's one line says what happened."""
        from gymnasium.error import ResetNeeded

        try:
            return fn(*args)
        except (MleEnvError, SessionError, ResetNeeded):
            raise
        except Exception as e:
            log.exception("session error")
            raise SessionError(f"{type(e).__name__}: {e}") from e


class MLEEnvServer(HTTPEnvServer):
    """OpenEnv's HTTP/WebSocket server with mle-env's session rules (see the module docstring): a capacity
    error that says what to do, and an idle reaper that checks often and never closes a session whose action
    is running."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._running: dict[str, int] = {}  # session id -> reset/step calls in flight

    async def _create_session(self) -> tuple[str, Environment]:
        try:
            session_id, env = await super()._create_session()
        except SessionCapacityError as e:
            raise SessionCapacityError(e.active_sessions, e.max_sessions, message=(
                f"all {e.max_sessions} sessions of this server are in use: close one, or start the server with "
                f"a larger --max-sessions")) from None
        log.info("session %s opened (%d/%d)", session_id[:8], len(self._sessions), self._max_concurrent_envs)
        return session_id, env

    async def _destroy_session(self, session_id: str) -> None:
        known = session_id in self._sessions
        await super()._destroy_session(session_id)
        self._running.pop(session_id, None)
        if known:
            log.info("session %s closed, its sandbox removed", session_id[:8])

    async def _run_in_session_executor(self, session_id: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        self._running[session_id] = self._running.get(session_id, 0) + 1
        self._touch(session_id)
        try:
            return await super()._run_in_session_executor(session_id, func, *args, **kwargs)
        finally:
            if session_id in self._running:
                self._running[session_id] -= 1
            self._touch(session_id)

    def _update_session_activity(self, session_id: str, increment_step: bool = False) -> None:
        """OpenEnv calls this after any message of a session, MCP requests included; here only resets and steps
        (run through :meth:`_run_in_session_executor`) are activity, so no request that does nothing keeps an
        idle session (and its slot) open."""
        info = self._session_info.get(session_id)
        if info is not None and increment_step:
            info.step_count += 1

    def _touch(self, session_id: str) -> None:
        info = self._session_info.get(session_id)
        if info is not None:
            info.last_activity_at = time.time()

    async def _reap_idle_sessions(self) -> None:
        timeout = self._session_idle_timeout_s
        if timeout is None:
            return
        interval = min(5.0, max(0.1, timeout / 4))
        while True:
            try:
                await asyncio.sleep(interval)
                now = time.time()
                async with self._session_lock:  # nothing awaits between this check and expire()
                    stale = [sid for sid, info in self._session_info.items()
                             if not self._running.get(sid) and now - info.last_activity_at > timeout]
                    for sid in stale:
                        env = self._sessions.get(sid)
                        if isinstance(env, MLEEnvironment):
                            env.expire(f"this session was closed after {timeout:g} s without a reset or step "
                                       "(the server's --idle-timeout); connect again to start a new one")
                for sid in stale:
                    log.info("session %s idle for %g s", sid[:8], timeout)
                    await self._destroy_session(sid)
            except asyncio.CancelledError:
                break
            except Exception:  # noqa: BLE001 - the reaper must outlive one failed close
                log.exception("idle-session reaper")

    async def close_all(self) -> None:
        """Close every session (the server is stopping)."""
        for sid in list(self._sessions):
            await self._destroy_session(sid)


class _QuietDisconnects:
    """ASGI middleware: a WebSocket whose client left before OpenEnv's handler closed it is not an error (that
    handler's final close() raises WebSocketDisconnect then, which uvicorn would log as a crash)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope.get("type") != "websocket":
                raise


def frame_problem(text: str | None, data: bytes | None = None) -> str | None:
    """What keeps a WebSocket frame from being a session message (one line), or None for one JSON object
    nested at most ``MAX_DEPTH`` deep. Very deep input is caught (Python's json raises RecursionError)."""
    if text is None or data is not None:
        return f"binary frames are not read: {SEND_OBJECT}"
    try:
        message = json.loads(text)
    except RecursionError:
        return f"the message nests deeper than {MAX_DEPTH} levels: {SEND_OBJECT}"
    except ValueError as e:
        return f"invalid JSON ({getattr(e, 'msg', e)} at character {getattr(e, 'pos', '?')}): {SEND_OBJECT}"
    if not isinstance(message, dict):
        return f"a JSON {_json_kind(message)} is not a message: {SEND_OBJECT}"
    if _deeper_than(message, MAX_DEPTH):
        return f"the message nests deeper than {MAX_DEPTH} levels: {SEND_OBJECT}"
    return None


def _json_kind(value: Any) -> str:
    kinds = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    return kinds.get(type(value), "number")


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests dicts and lists more than ``limit`` deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


class _FrameGuard:
    """ASGI middleware for the session WebSocket: a frame that is not one JSON object (:func:`frame_problem`)
    is answered with a one-line ``INVALID_JSON`` error and never reaches OpenEnv's handler (which ends the
    session on a binary frame, a non-object or RecursionError); the next frame is read as usual. The handler
    reads only between its replies, so an error reply never overtakes another reply."""

    def __init__(self, app: Any, path: str = "/ws") -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "websocket" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return

        async def receive_message() -> Any:
            while True:
                message = await receive()
                if message.get("type") != "websocket.receive":
                    return message
                problem = frame_problem(message.get("text"), message.get("bytes"))
                if problem is None:
                    return message
                reply = WSErrorResponse(data={"message": problem, "code": WSErrorCode.INVALID_JSON})
                await send({"type": "websocket.send", "text": reply.model_dump_json()})

        await self.app(scope, receive_message, send)


async def _stateful_only() -> JSONResponse:
    return JSONResponse(status_code=409, content={"detail": STATEFUL_ONLY})


def create_app(competition: str | None = None, *, max_sessions: int = DEFAULT_MAX_SESSIONS,
               idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT, env_options: Mapping[str, Any] | None = None,
               token: str | None = None) -> FastAPI:
    """The server's FastAPI app (run it with uvicorn, or use :func:`serve`).

    Args:
        competition: the competition of resets that name none (id or alias), or a set of them
            (``practice-eval``...: a reset takes the member at its seed modulo the set's size, or the next
            in turn); checked to exist and be prepared now. None: every reset must name one.
        max_sessions: sessions (sandboxes) open at once, >= 1; MCP-made sessions count too.
        idle_timeout: seconds without a reset or step after which a session is closed (None or 0: never).
        env_options: ``mle_env.make`` options for every episode, validated now.
        token: the bearer token every route but ``GET /health`` needs (at least 16 visible ASCII
            characters); None: ``$MLE_ENV_SERVE_TOKEN``, else a random one. The app's is ``app.state.token``.

    Raises:
        ConfigError: an option is malformed or out of range.
        UnknownCompetition, NotPrepared: ``competition`` does not exist or is not prepared.
    """
    from mle_env.config import EnvConfig

    token, _ = resolve_token(token)
    options = dict(env_options or {})
    EnvConfig.from_options(options)
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ConfigError(f"max_sessions (--max-sessions) must be an integer >= 1; got {max_sessions!r}")
    if idle_timeout is not None and (isinstance(idle_timeout, bool) or not isinstance(idle_timeout, (int, float))
                                     or not 0 <= idle_timeout < float("inf")):
        raise ConfigError(f"idle_timeout (--idle-timeout) must be a number of seconds >= 0 (0: never); "
                          f"got {idle_timeout!r}")
    if competition is not None:
        from mle_env.competition.registry import select_competitions
        from mle_env.env import make

        for cid in select_competitions([competition]):  # a set's every member
            make(cid, **options).close()  # an unknown or unprepared competition fails here, not at reset
    app = FastAPI(title="mle-env OpenEnv server", version=_version(),
                  description="ML-engineering competitions as OpenEnv episodes. " + STATEFUL_ONLY)
    server = MLEEnvServer(
        functools.partial(MLEEnvironment, competition, options), _WireAction, MLEObservation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                             session_timeout=float(idle_timeout) if idle_timeout else None),
    )
    for path in ("/reset", "/step", "/state"):
        app.add_api_route(path, _stateful_only, methods=["GET", "POST"], include_in_schema=False)
    server.register_routes(app, mode="production")  # production: no stateless episode routes of OpenEnv's
    app.router.on_shutdown.append(server.close_all)
    app.add_middleware(_FrameGuard)
    app.add_middleware(_QuietDisconnects)
    app.add_middleware(BearerAuth, token=token)  # the outermost: nothing unauthorized reaches the rest
    app.state.mle_env_server = server
    app.state.token = token
    app.state.settings = {"competition": competition, "max_sessions": max_sessions, "idle_timeout": idle_timeout}
    return app


def serve(host: str = "127.0.0.1", port: int = 8000, competition: str | None = None, *,
          max_sessions: int = DEFAULT_MAX_SESSIONS, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
          env_options: Mapping[str, Any] | None = None, log_level: str = "info", token: str | None = None) -> None:
    """Run the server until interrupted (see :func:`create_app` for the options); prints where it listens and
    its token (the token itself only when it was generated).

    Raises:
        ConfigError: ``host`` is not loopback and no token was chosen (``token`` or ``$MLE_ENV_SERVE_TOKEN``).
    """
    token, source = resolve_token(token)
    warning = check_host(host, source)
    app = create_app(competition, max_sessions=max_sessions, idle_timeout=idle_timeout, env_options=env_options,
                     token=token)
    announce(app, host, port, source, warning)
    run(app, host, port, log_level)


def announce(app: FastAPI, host: str, port: int, token_source: str | None, warning: str | None = None) -> None:
    """Print where the server listens, its settings and how clients pass its token (the token itself when
    ``token_source`` is None, i.e. it was generated and only this output tells it); ``warning`` to stderr."""
    settings, token = app.state.settings, app.state.token
    idle = settings["idle_timeout"]
    print(f"mle-env serve: http://{host}:{port} (WebSocket /ws), competition "
          f"{settings['competition'] or '(named by each reset)'}, at most {settings['max_sessions']} sessions, "
          f"idle timeout {f'{idle:g} s' if idle else 'none'}", flush=True)
    shown = token if token_source is None else "TOKEN"
    where = "generated for this run" if token_source is None else f"TOKEN from {token_source}"
    print(f"token: {shown} ({where}); clients send 'Authorization: Bearer {shown}': "
          f"MLEEnvClient(base_url=..., token=...) or {TOKEN_ENV}={shown} in the client's environment", flush=True)
    if warning:
        print(warning, file=sys.stderr, flush=True)


def run(app: FastAPI, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info") -> None:
    """Run an app of :func:`create_app` with uvicorn until interrupted; session events are logged."""
    import uvicorn

    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO), format="%(message)s")
    uvicorn.run(app, host=host, port=port, log_level=log_level, ws_max_size=100 * 2**20)


def _version() -> str:
    from mle_env import __version__

    return __version__
