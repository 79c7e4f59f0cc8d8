"""Reference implementations (plain Python, from the definitions) of the fgvc group's new metric, merged into
reference_metrics.REFERENCES: ``fn(answers, submission, params) -> float`` with every cell as text (see
reference_metrics.py). Macro F1 (the herbarium competitions) is reference_metrics.f1."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def classification_error(answers: pd.DataFrame, submission: pd.DataFrame, params: Mapping[str, Any]) -> float:
    """Top-1 error: the share of rows whose predicted label (the first whitespace-separated token of the
    cell, an integer) differs from the true integer label."""
    truth = [int(str(v).strip()) for v in answers.iloc[:, 0]]
    predicted = [int(str(v).split()[0]) for v in submission.iloc[:, 0]]
    return sum(t != p for t, p in zip(truth, predicted, strict=True)) / len(truth)


REFERENCES_FGVC = {
    "classification_error": classification_error,
}
