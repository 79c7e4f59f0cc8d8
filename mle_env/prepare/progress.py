"""Progress bars (rich, on stderr) for the long steps of a prepare: streaming a large CSV, copying many files.

Shown only on an interactive terminal, and never when ``MLE_ENV_NO_PROGRESS`` is set, so logs, tests and
``--json`` output stay clean.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator

NO_PROGRESS_ENV = "MLE_ENV_NO_PROGRESS"


@contextlib.contextmanager
def progress(description: str, total: float | None) -> Iterator[Callable[[float], None]]:
    """A progress bar for one step; yields ``advance(count)``. ``total`` None: a bar without an end."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    if not console.is_terminal or os.environ.get(NO_PROGRESS_ENV):
        yield lambda amount: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda amount: bar.advance(task, amount)
