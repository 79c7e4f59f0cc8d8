"""``mle-env serve``: an OpenEnv environment server whose sessions are episodes (see
:mod:`mle_env.integrations.openenv.server`)."""

from __future__ import annotations

import argparse

from mle_env.cli.episodes import add_env_arguments, env_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve episodes to RL trainers over OpenEnv's HTTP/WebSocket protocol",
                       description="Each WebSocket session (OpenEnv's EnvClient; mle_env.integrations.openenv."
                                   "MLEEnvClient) is one episode at a time in its own sandbox. Needs the openenv "
                                   "extra: pip install 'mle-env[openenv]'.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; anyone who can reach the server can run code "
                        "in its sandboxes)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--competition", help="competition of resets that name none (id or alias; default: every "
                                         "reset must name one)")
    p.add_argument("--max-sessions", type=int, default=8, help="sessions (sandboxes) open at once (default 8)")
    p.add_argument("--idle-timeout", type=float, default=3600.0,
                   help="close a session after this many seconds without a reset or step (default 3600; 0: never)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    add_env_arguments(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from mle_env.errors import ConfigError, PrerequisiteError

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0..65535; got {args.port}")
    options = env_options(args)  # a bad option fails here, before OpenEnv loads
    try:
        from mle_env.integrations.openenv.server import create_app, run
    except ModuleNotFoundError as e:
        raise PrerequisiteError(f"mle-env serve needs OpenEnv ({e.name} is not installed): "
                                "pip install 'mle-env[openenv]'") from e
    app = create_app(args.competition, max_sessions=args.max_sessions, idle_timeout=args.idle_timeout or None,
                     env_options=options)  # an unknown or unprepared competition fails here
    print(f"mle-env serve: http://{args.host}:{args.port} (WebSocket /ws), competition "
          f"{args.competition or '(named by each reset)'}, at most {args.max_sessions} sessions, idle timeout "
          f"{f'{args.idle_timeout:g} s' if args.idle_timeout else 'none'}", flush=True)
    run(app, args.host, args.port, args.log_level)
    return 0
