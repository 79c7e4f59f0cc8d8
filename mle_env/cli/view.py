"""``mle-env view PATH [PATH2]``: a run, an episode or an AIDE journal in the browser (see
:mod:`mle_env.viewer`). Serves on 127.0.0.1 until interrupted, or writes a static bundle with ``--bundle``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mle_env.viewer.index import ViewIndex


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="view a run, an episode or an AIDE journal in the browser",
                       description="Opens a page that shows an evaluation (`mle-env eval --out`: medals, pass@k, "
                                   "every episode in a table), an episode's timeline, or an AIDE search tree. "
                                   "Given two run folders, it also compares them. It only reads PATH.")
    p.add_argument("path", type=Path, help="a run folder, a folder of episode folders, an episode's folder, a "
                                           "trajectory .jsonl or an AIDE journal (.aide.jsonl)")
    p.add_argument("path2", type=Path, nargs="?", help="a second run folder, to compare with the first")
    p.add_argument("--port", type=int, default=8777, help="port (default 8777; 0: any free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1); any address "
                                                       "that is not loopback needs --allow-remote")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host other machines can reach (anyone who reaches it reads the run)")
    p.add_argument("--bundle", type=Path, metavar="OUT_DIR",
                   help="write the page and all its data as static files into OUT_DIR (opens from file://) "
                        "instead of serving")
    p.add_argument("--no-open", action="store_true", help="do not open a browser")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from mle_env.errors import ConfigError
    from mle_env.viewer.index import ViewError, ViewIndex
    from mle_env.viewer.server import is_loopback

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be 0..65535; got {args.port}")
    if not is_loopback(args.host) and not args.allow_remote and args.bundle is None:
        raise ConfigError(f"--host {args.host} is not a loopback address: anyone who reaches it can read the run; "
                          "add --allow-remote to serve it there")
    paths = [args.path] + ([args.path2] if args.path2 is not None else [])
    index = ViewIndex(paths)
    if args.path2 is not None and not all(s.kind == "run" for s in index.sources):
        raise ViewError("two paths are compared only when both are run folders (of `mle-env eval --out`)")
    if args.bundle is not None:
        from mle_env.viewer.bundle import write_bundle

        keys = write_bundle(index, args.bundle)
        print(f"wrote {len(keys)} data files and the page into {args.bundle}: open {args.bundle / 'index.html'}")
        return 0
    return _serve(index, args)


def _serve(index: ViewIndex, args: argparse.Namespace) -> int:
    from mle_env.errors import ConfigError
    from mle_env.viewer.server import ViewServer

    index.manifest()  # built before the server starts: the first page opens at once
    try:
        server = ViewServer(index, args.host, args.port, allow_remote=args.allow_remote)
    except OSError as e:
        raise ConfigError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e} (another server there? "
                          "pick another --port, or 0 for any free one)") from None
    print(f"mle-env view: {server.url} (Ctrl-C to stop)", flush=True)
    if not args.no_open:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
