"""SMAPE as Kaggle's forecasting competitions define it, against numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from mle_env.grading.metrics import get_metric


def test_smape_in_percent_with_zero_over_zero_counting_nothing() -> None:
    smape = get_metric("smape")
    assert smape.lower_is_better
    # |110-100| * 2 / 210 = 0.095238; |0-50| * 2 / 50 = 2; 0 and 0 count 0; mean * 100
    value = smape.fn(np.array([100.0, 50.0, 0.0]), np.array([110.0, 0.0, 0.0]))
    assert value == pytest.approx(100 * (20 / 210 + 2 + 0) / 3)
    assert smape.fn(np.array([3.0, 4.0]), np.array([3.0, 4.0])) == 0.0
    assert smape.fn(np.array([1.0]), np.array([-1.0])) == pytest.approx(200.0)
