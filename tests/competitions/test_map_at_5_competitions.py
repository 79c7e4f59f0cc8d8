"""whale-categorization-playground and hotel-id-2021-fgvc8: MAP@5 follows MLE-bench's rule on hand-made
rows (cut to five, then repeats skipped; single-space separator), and whale's column check is exact."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic
from mle_env.grading.grader import Grader
from mle_env.prepare.runner import prepare

#: (prediction for a row whose truth is T, MLE-bench's average precision)
CASES = [("T x y z w", 1.0), ("x T", 0.5), ("x x x x x T", 0.0), ("x x T", 1 / 3), ("x  T", 1 / 3),
         ("T T T T T", 1.0), ("a b c d e", 0.0)]


COMPETITIONS = {"whale-categorization-playground": ("Image", "Id"), "hotel-id-2021-fgvc8": ("image", "hotel_id")}


def _grader(cid: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Grader, str, str]:
    home, raw = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    load_synthetic(cid).generate(raw)
    prepare(cid, raw_dir=raw, home=home, verify=False)
    return Grader(get_spec(cid), home), *COMPETITIONS[cid]


@pytest.fixture(scope="module", params=sorted(COMPETITIONS))
def prepared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Grader, str, str]:
    return _grader(request.param, tmp_path_factory)


@pytest.mark.parametrize(("guess", "precision"), CASES)
def test_one_row_scores_as_mlebench(prepared: tuple[Grader, str, str], guess: str, precision: float,
                                    tmp_path: Path) -> None:
    grader, id_col, target = prepared
    answers = pd.read_csv(grader.paths.private / "test.csv", dtype=str, keep_default_na=False)
    sub = answers[[id_col, target]].copy()
    sub.iloc[0, 1] = guess.replace("T", sub.iloc[0, 1])
    sub.to_csv(tmp_path / "sub.csv", index=False)
    n = len(sub)
    assert grader.grade(tmp_path / "sub.csv").score == pytest.approx(round((n - 1 + precision) / n, 5))


def test_whale_rejects_any_other_column(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    grader, id_col, target = _grader("whale-categorization-playground", tmp_path_factory)
    answers = pd.read_csv(grader.paths.private / "test.csv", dtype=str, keep_default_na=False)
    answers[[id_col, target]].assign(score=1).to_csv(tmp_path / "extra.csv", index=False)
    report = grader.grade(tmp_path / "extra.csv")
    assert report.status == "invalid" and "score" in report.invalid_reason
