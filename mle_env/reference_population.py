"""The reference population of competitions made with ``mle-env new`` (``table_split`` recipe).

A practice competition's leaderboard is the scores of a documented population of seeded solutions
(:mod:`mle_env.reference`). A folder with its own ``reference.py`` defines its own; every ``table_split``
competition without one gets this population: 19 model set-ups, from a constant guess to gradient boosting,
each trained on 10 % to 100 % of the training rows (6 fractions), 114 entries, Kaggle's 100-249 band (gold
is the top 10). Strength thus spreads from chance to a good tuned model, so a medal means something.

Features are read from public/train.csv as a first attempt would: numbers (median-imputed, scaled for the
linear and neighbour models), low-cardinality text columns one-hot encoded, free text and
phrases as TF-IDF words (reduced to 64 SVD components for the tree models), dates split into year, month,
day, weekday and hour; other columns (ids, high-cardinality codes) are left out; with no usable column
left, every set-up guesses the constant. Regression set-ups fit log1p(target) when the
metric is RMSLE.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from mle_env.competition.spec import CompetitionSpec
from mle_env.reference_solution import ReferenceSolution, subsample

FRACTIONS = (0.1, 0.2, 0.35, 0.5, 0.75, 1.0)
#: a text column with many values is free text (TF-IDF) when its values are this long on average, or are
#: mostly phrases of several words (names, titles)
TEXT_MIN_CHARS = 30
#: a text column with at most this many distinct values is one-hot encoded
MAX_CATEGORIES = 50


def column_roles(frame: pd.DataFrame, skip: set[str]) -> dict[str, list[str]]:
    """Columns of ``frame`` (but ``skip``) by role: numeric, categorical, text, date; others are left out."""
    roles: dict[str, list[str]] = {"numeric": [], "categorical": [], "text": [], "date": []}
    for name in frame.columns:
        if name in skip:
            continue
        values = frame[name]
        if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
            roles["numeric"].append(name)
            continue
        text = values.dropna().astype(str)
        if text.empty:
            continue
        if text.nunique() <= MAX_CATEGORIES:
            roles["categorical"].append(name)
        elif _dates(text.head(50)).notna().all():
            roles["date"].append(name)
        elif text.str.len().mean() >= TEXT_MIN_CHARS or text.str.contains(r"\w\W+\w", regex=True).mean() > 0.5:
            roles["text"].append(name)  # free text, or names and phrases of several words
    return roles


def _dates(values: pd.Series) -> pd.Series:
    if not values.astype(str).str.contains(r"\d{4}|\d{1,2}[/:]\d{1,2}", regex=True).all():
        return pd.Series([pd.NaT] * len(values), index=values.index)
    return pd.to_datetime(values.astype(str), errors="coerce", format="mixed")


def _date_parts(frame: pd.DataFrame) -> pd.DataFrame:
    out = {}
    for name in frame.columns:
        when = _dates(frame[name])
        out.update({f"{name}_year": when.dt.year, f"{name}_month": when.dt.month, f"{name}_day": when.dt.day,
                    f"{name}_weekday": when.dt.dayofweek, f"{name}_hour": when.dt.hour})
    return pd.DataFrame(out, index=frame.index).astype(float)


def _labels(x: Any) -> np.ndarray:
    """A column of categories as text, a missing value as "missing" (for the encoders)."""
    return pd.DataFrame(x).astype("string").fillna("missing").astype(object).to_numpy()


def _texts(x: Any) -> pd.Series:
    """A column of free text as strings (for TF-IDF)."""
    return pd.Series(np.ravel(np.asarray(x, dtype=object))).fillna("").astype(str)


class _Components(TransformerMixin, BaseEstimator):
    """TruncatedSVD to 64 components, or fewer when a small sample's vocabulary has fewer words."""

    def fit(self, x: Any, y: Any = None) -> _Components:
        from sklearn.decomposition import TruncatedSVD

        self.svd_ = TruncatedSVD(n_components=max(1, min(64, x.shape[1] - 1)), random_state=0).fit(x)
        return self

    def transform(self, x: Any) -> Any:
        return self.svd_.transform(x)


def _preprocessor(roles: dict[str, list[str]], dense: bool, scale: bool) -> Any:
    """A ColumnTransformer for the roles; ``dense``: text becomes 64 SVD components (tree models)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder, StandardScaler

    numeric = [SimpleImputer(strategy="median", keep_empty_features=True)] + ([StandardScaler()] if scale else [])
    parts: list[tuple[str, Any, Any]] = []
    if roles["numeric"] or roles["date"]:
        dates = FunctionTransformer(_date_parts)
        if roles["numeric"]:
            parts.append(("numeric", make_pipeline(*numeric), roles["numeric"]))
        if roles["date"]:
            parts.append(("date", make_pipeline(dates, *numeric), roles["date"]))
    for name in roles["categorical"]:
        encode = (OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1) if dense
                  else OneHotEncoder(handle_unknown="ignore"))
        parts.append((f"cat-{name}", make_pipeline(FunctionTransformer(_labels), encode), [name]))
    for name in roles["text"]:
        words = TfidfVectorizer(max_features=5000, sublinear_tf=True)
        steps = [FunctionTransformer(_texts), words]
        if dense:
            steps.append(_Components())
        parts.append((f"text-{name}", make_pipeline(*steps), [name]))
    return ColumnTransformer(parts, sparse_threshold=0.0 if dense else 0.3)


def _setups(classify: bool) -> dict[str, tuple[Callable[[], Any] | None, bool, bool]]:
    """Set-up name -> (model factory or None for a constant guess, dense features, scaled numbers)."""
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        ExtraTreesRegressor,
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if classify:
        linear = {f"logistic-c{c:g}": (lambda c=c: LogisticRegression(C=c, max_iter=300), False, True)
                  for c in (0.01, 0.1, 1.0, 10.0)}
        knn, tree, forest, extra, hgb = (KNeighborsClassifier, DecisionTreeClassifier, RandomForestClassifier,
                                         ExtraTreesClassifier, HistGradientBoostingClassifier)
    else:
        linear = {f"ridge-a{a:g}": (lambda a=a: Ridge(alpha=a), False, True) for a in (0.1, 1.0, 10.0, 100.0)}
        knn, tree, forest, extra, hgb = (KNeighborsRegressor, DecisionTreeRegressor, RandomForestRegressor,
                                         ExtraTreesRegressor, HistGradientBoostingRegressor)
    return {
        "constant": (None, False, False),
        **linear,
        **{f"knn-{k}": (lambda k=k: knn(n_neighbors=k), False, True) for k in (5, 15, 50)},
        "tree-depth3": (lambda: tree(max_depth=3, random_state=0), True, False),
        "tree-depth6": (lambda: tree(max_depth=6, random_state=0), True, False),
        "forest-depth4": (lambda: forest(60, max_depth=4, random_state=0), True, False),
        "forest-depth8": (lambda: forest(60, max_depth=8, random_state=0), True, False),
        "forest-full": (lambda: forest(100, min_samples_leaf=2, random_state=0), True, False),
        "extra-trees": (lambda: extra(100, min_samples_leaf=2, random_state=0), True, False),
        # no early stopping: its validation split is stratified, which a class of one row breaks
        "hgb-20-iter": (lambda: hgb(max_iter=20, early_stopping=False, random_state=0), True, False),
        "hgb-100-iter": (lambda: hgb(max_iter=100, early_stopping=False, random_state=0), True, False),
        "hgb-300-lr05": (lambda: hgb(max_iter=300, learning_rate=0.05, early_stopping=False, random_state=0),
                         True, False),
        "hgb-depth3": (lambda: hgb(max_depth=3, max_iter=200, early_stopping=False, random_state=0), True, False),
        "hgb-leaves8-l2": (lambda: hgb(max_leaf_nodes=8, max_iter=300, learning_rate=0.05, l2_regularization=1.0,
                                       early_stopping=False, random_state=0), True, False),
    }


def _predict(spec: CompetitionSpec, setup: str, fraction: float, public: Path) -> pd.DataFrame:
    params = spec.prepare.params
    target, task, id_column = params["target"], params["task"], spec.submission.id_column
    classify = task != "regression"
    factory, dense, scale = _setups(classify)[setup]
    train = subsample(pd.read_csv(public / "train.csv"), fraction)
    test = pd.read_csv(public / "test.csv")
    y = train[target]
    log_target = spec.metric.name == "rmsle"
    if not classify and log_target:
        y = np.log1p(y.clip(lower=0))
    labels = [str(label) for label in params.get("labels", ())]
    roles = column_roles(train, {id_column, target})
    if factory is None or not any(roles.values()):
        model = None
    else:
        from sklearn.pipeline import make_pipeline

        estimator = factory()
        if hasattr(estimator, "n_neighbors"):  # a 10 % sample of a small table has fewer rows than k
            estimator.set_params(n_neighbors=min(estimator.n_neighbors, len(train)))
        model = make_pipeline(_preprocessor(roles, dense, scale), estimator)
        model.fit(train.drop(columns=[target]), y.astype(str) if task == "multiclass" else y)
    out = pd.DataFrame({id_column: test[id_column]})
    answers = params["answers"]
    if answers == "classes" or spec.submission.kind == "probability":
        classes = labels if answers == "classes" else [1]
        if model is None:
            share = y.astype(str).value_counts(normalize=True) if answers == "classes" else None
            probs = (np.tile([share.get(c, 0.0) for c in classes], (len(test), 1)) if share is not None
                     else np.full((len(test), 1), float(y.mean())))
        else:
            proba = model.predict_proba(test)
            known = [str(c) for c in model.classes_]
            probs = np.column_stack([proba[:, known.index(str(c))] if str(c) in known else np.zeros(len(test))
                                     for c in classes])
        if answers == "classes":
            probs = np.clip(probs, 1e-6, 1)
            probs = probs / probs.sum(axis=1, keepdims=True)
            return pd.concat([out, pd.DataFrame(probs, columns=classes, index=out.index)], axis=1)
        out[target] = probs[:, 0]
        return out
    if model is None:
        guess = y.mode().iloc[0] if classify else float(np.median(y))
        values = np.full(len(test), guess, dtype=object if task == "multiclass" else float)
    else:
        values = model.predict(test)
    if not classify:
        values = np.expm1(np.clip(values, 0, 30)) if log_target else values
        out[target] = np.asarray(values, dtype=float)
    else:
        out[target] = values if task == "multiclass" else np.asarray(values).astype(int)
    return out


def solutions(spec: CompetitionSpec) -> list[ReferenceSolution]:
    """The 114 members of the population for ``spec`` (a ``table_split`` competition)."""
    setups = _setups(spec.prepare.params["task"] != "regression")

    def member(setup: str, fraction: float) -> ReferenceSolution:
        return ReferenceSolution(f"{setup}@{int(fraction * 100)}%",
                                 lambda public: _predict(spec, setup, fraction, public))

    return [member(setup, fraction) for setup in setups for fraction in FRACTIONS]
