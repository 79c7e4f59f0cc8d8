"""``mle-env serve``: an OpenEnv environment server whose sessions are episodes (see
:mod:`mle_env.integrations.openenv.server`)."""

from __future__ import annotations

import argparse

from mle_env.cli.episodes import add_env_arguments, env_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve episodes to RL trainers over OpenEnv's HTTP/WebSocket protocol",
                       description="Each WebSocket session (OpenEnv's EnvClient; mle_env.integrations.openenv."
                                   "MLEEnvClient) is one episode at a time in its own sandbox; every route but "
                                   "/health needs the server's token. Needs the openenv extra: pip install "
                                   "'mle-env[openenv]'.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1); any other than loopback needs --token or "
                        "MLE_ENV_SERVE_TOKEN, since anyone with the token can run code in its sandboxes")
    p.add_argument("--token", help="the token clients send as 'Authorization: Bearer TOKEN' (at least 16 "
                                   "characters; default: $MLE_ENV_SERVE_TOKEN, else a random one, printed). "
                                   "Other users of this machine can read a command line: prefer the variable")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--competition", help="competition of resets that name none (id or alias, or a set such as "
                                         "practice-eval, taken by seed); default: every reset must name one")
    p.add_argument("--max-sessions", type=int, default=8, help="sessions (sandboxes) open at once (default 8)")
    p.add_argument("--idle-timeout", type=float, default=3600.0,
                   help="close a session after this many seconds without a reset or step (default 3600; 0: never)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="the web server's log level (default info)")
    add_env_arguments(p)
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Check the options (the token and host first, before OpenEnv's slow import), then serve until
    interrupted."""
    from mle_env.errors import ConfigError, PrerequisiteError
    from mle_env.integrations.openenv.auth import check_host, resolve_token

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0..65535; got {args.port}")
    token, source = resolve_token(args.token)
    warning = check_host(args.host, source)
    options = env_options(args)  # a bad option fails here, before OpenEnv loads
    try:
        from mle_env.integrations.openenv.server import announce, create_app, run
    except ModuleNotFoundError as e:
        raise PrerequisiteError(f"mle-env serve needs OpenEnv ({e.name} is not installed): "
                                "pip install 'mle-env[openenv]'") from e
    app = create_app(args.competition, max_sessions=args.max_sessions, idle_timeout=args.idle_timeout or None,
                     env_options=options, token=token)  # an unknown or unprepared competition fails here
    announce(app, args.host, args.port, source, warning)
    run(app, args.host, args.port, args.log_level)
    return 0
