"""The ``mle-env`` command line.

Each command lives in a module of this package that exposes ``add_parser(subparsers)``; the parser sets
``func`` to the function that runs it. Errors mle-env raises on purpose are printed as one line
(``error: ...``, made terminal_safe: they may quote agent-made paths) with exit status 2; everything else is
a bug and keeps its traceback. Without a command it prints the help. A closed pipe (``mle-env list | head``)
ends any command quietly with exit status 1, as rich's console does.
"""

from mle_env.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
