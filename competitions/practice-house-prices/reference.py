"""Reference population for practice-house-prices: 20 model set-ups x 6 training-set sizes = 120 entries.

Every model predicts log1p(SalePrice). Set-ups range from a constant median to gradient boosting on all
features; training on 10 % to 100 % of the rows spreads their strength.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

from mle_env.reference_solution import ReferenceSolution, subsample

FRACTIONS = (0.1, 0.2, 0.35, 0.5, 0.75, 1.0)


def _columns(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    features = frame.drop(columns=["Id", "SalePrice"], errors="ignore")
    numeric = features.select_dtypes("number").columns.tolist()
    return numeric, [c for c in features.columns if c not in numeric]


def _linear(alpha: float, with_categories: bool):
    def build(numeric, categorical):
        parts = [(make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric)]
        if with_categories:
            parts.append((make_pipeline(SimpleImputer(strategy="constant", fill_value="none"),
                                        OneHotEncoder(handle_unknown="ignore")), categorical))
        return make_pipeline(make_column_transformer(*parts), Ridge(alpha=alpha))
    return build


def _knn(k: int):
    def build(numeric, categorical):
        prep = make_column_transformer((make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric))
        return make_pipeline(prep, KNeighborsRegressor(n_neighbors=k))
    return build


def _trees(model):
    def build(numeric, categorical):
        prep = make_column_transformer(
            (SimpleImputer(strategy="median"), numeric),
            (make_pipeline(SimpleImputer(strategy="constant", fill_value="none"),
                           OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)), categorical),
        )
        return make_pipeline(prep, model())
    return build


SETUPS = {
    "median": None,
    "ridge-numeric-a1": _linear(1.0, False),
    "ridge-numeric-a100": _linear(100.0, False),
    "ridge-all-a1": _linear(1.0, True),
    "ridge-all-a10": _linear(10.0, True),
    "ridge-all-a30": _linear(30.0, True),
    "knn-5": _knn(5),
    "knn-15": _knn(15),
    "knn-40": _knn(40),
    "forest-depth4": _trees(lambda: RandomForestRegressor(100, max_depth=4, random_state=0, n_jobs=2)),
    "forest-depth8": _trees(lambda: RandomForestRegressor(100, max_depth=8, random_state=0, n_jobs=2)),
    "forest-full": _trees(lambda: RandomForestRegressor(200, random_state=0, n_jobs=2)),
    "hgb-20-iter": _trees(lambda: HistGradientBoostingRegressor(max_iter=20, random_state=0)),
    "hgb-100-iter": _trees(lambda: HistGradientBoostingRegressor(max_iter=100, random_state=0)),
    "hgb-300-lr05": _trees(lambda: HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, random_state=0)),
    "hgb-depth3": _trees(lambda: HistGradientBoostingRegressor(max_depth=3, max_iter=300, random_state=0)),
    "hgb-leaves8": _trees(lambda: HistGradientBoostingRegressor(max_leaf_nodes=8, max_iter=500,
                                                                learning_rate=0.03, random_state=0)),
    "hgb-l2": _trees(lambda: HistGradientBoostingRegressor(max_iter=400, learning_rate=0.05,
                                                           l2_regularization=1.0, random_state=0)),
    "hgb-minleaf40": _trees(lambda: HistGradientBoostingRegressor(min_samples_leaf=40, max_iter=200, random_state=0)),
    "forest-sqrt": _trees(lambda: RandomForestRegressor(200, max_features="sqrt", random_state=0, n_jobs=2)),
}


def _solution(name: str, fraction: float) -> ReferenceSolution:
    def predict(public: Path) -> pd.DataFrame:
        train = subsample(pd.read_csv(public / "train.csv"), fraction)
        test = pd.read_csv(public / "test.csv")
        target = np.log1p(train["SalePrice"])
        if SETUPS[name] is None:
            guess = np.full(len(test), target.median())
        else:
            model = SETUPS[name](*_columns(train))
            model.fit(train, target)
            guess = model.predict(test)
        return pd.DataFrame({"Id": test["Id"], "SalePrice": np.expm1(np.clip(guess, 0, 15))})
    return ReferenceSolution(f"{name}@{int(fraction * 100)}%", predict)


def solutions() -> list[ReferenceSolution]:
    return [_solution(name, fraction) for name in SETUPS for fraction in FRACTIONS]
