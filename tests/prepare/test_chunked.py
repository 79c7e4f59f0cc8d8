"""A streamed split_csv writes exactly the files the in-memory split writes (same rows, order, bytes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_env.competition.registry import get_spec
from mle_env.prepare.chunked import split_chunks
from mle_env.prepare.helpers import PrepareContext, split_csv


def raw_frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    ints = rng.integers(0, 100, n).astype(float)
    ints[n - 3] = np.nan  # an integer column with one blank near the end: float over the whole file
    return pd.DataFrame({
        "id": [f"r{i:05d}" for i in range(n)],
        "x": rng.normal(size=n),
        "count": ints,
        "text": rng.choice(["a, b", 'say "hi"', "plain", "", "ünï"], n),
        "flag": rng.choice([True, False], n),
        "target": rng.integers(0, 3, n),
    })


@pytest.fixture
def contexts(tmp_path: Path, make_competition: Callable[..., Path]) -> Callable[[str], PrepareContext]:
    make_competition()
    raw = tmp_path / "raw-big"
    raw.mkdir()
    frame = raw_frame(2_345)
    frame["count"] = frame["count"].map(lambda v: "" if np.isnan(v) else str(int(v)))  # raw "7", not "7.0"
    frame.to_csv(raw / "data.csv", index=False)

    def make(name: str) -> PrepareContext:
        dirs = [tmp_path / name / d for d in ("public", "private", "scratch")]
        for d in dirs:
            d.mkdir(parents=True)
        return PrepareContext(get_spec("tiny"), raw, *dirs)

    return make


def outputs(ctx: PrepareContext) -> dict[str, bytes]:
    return {str(p.relative_to(ctx.public.parent)): p.read_bytes()
            for root in (ctx.public, ctx.private) for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("options", [
    {},
    {"keep_order": True, "answers_keep": "targets"},
    {"exclude": "target == 2", "classes": [0, 1], "test_size": 100},
    {"sample_random": {"target": {"draw": "numpy_randint", "seed": 42, "low": 1, "high": 7}}},
])
def test_chunked_split_equals_in_memory_split(contexts: Callable[[str], PrepareContext], options: dict) -> None:
    params = {"file": "data.csv", "test_size": 0.2, "id_column": "id", "target_columns": ["target"],
              "sample_values": {"target": 0}} | options
    if "classes" in options:  # the sample defaults to 1 / number of classes
        params["sample_values"] = None
    in_memory, streamed = contexts("memory"), contexts("streamed")
    split_csv(in_memory, **params, chunk_rows=0)
    split_csv(streamed, **params, chunk_rows=300)
    a, b = outputs(in_memory), outputs(streamed)
    assert a.keys() == b.keys() and len(a) == 4
    for name in a:
        assert a[name] == b[name], name
    assert not list(streamed.scratch.rglob("*.pkl"))  # buckets are removed once read


def test_split_chunks_gives_the_split_order_bucket_by_bucket(tmp_path: Path) -> None:
    path = tmp_path / "small.csv"
    raw_frame(10).to_csv(path, index=False)
    parts = split_chunks(path, 0.3, 0, scratch=tmp_path, chunk_rows=4)
    assert parts.sizes == {"train": 7, "test": 3} and parts.buckets == {"train": 2, "test": 1}
    train_rows, test_rows = train_test_split(pd.read_csv(path), test_size=0.3, random_state=0)
    assert list(pd.concat(list(parts.frames("train")))["id"]) == list(train_rows["id"])
    assert list(next(parts.frames("test"))["id"]) == list(test_rows["id"])
