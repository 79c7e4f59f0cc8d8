"""The ``mle-env`` entry point: builds the parser from the command modules and runs the chosen command (see
:mod:`mle_env.cli` for the rules every command follows)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from mle_env import __version__

_COMMAND_MODULES = ("competitions", "new", "doctor", "episodes", "evaluation", "audit", "sandboxes", "show", "serve",
                    "trajectories", "view")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(
        prog="mle-env",
        description="ML-engineering competitions as Gymnasium environments, graded as MLE-bench does.",
    )
    parser.add_argument("--version", action="version", version=f"mle-env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(f"mle_env.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``mle-env``; returns the exit status."""
    from mle_env.display_text import terminal_safe
    from mle_env.errors import MleEnvError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # a newcomer typing `mle-env` alone gets the commands, not a usage error
        parser.print_help()
        return 0
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except MleEnvError as e:
        print(f"error: {terminal_safe(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush into the closed pipe is silent."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
