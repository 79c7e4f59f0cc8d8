"""mlkit: the small ML library the offline agents copy into the sandbox and run there.

It is written to ``./code/mlkit.py`` in the sandbox and imported by the programs the baseline agent and
AIDE's offline proposer write, so it must run on the sandbox's Python alone: the standard library, numpy,
pandas >= 1.5 and scikit-learn >= 1.2 (Pillow for images). Two entry points:

- :func:`profile` looks at ``./data`` and works out the task: the training table, the test rows, the id
  and target columns, the data type (tabular, text, image) and the kind of prediction.
- :func:`run` trains one pipeline (a ``family`` and its ``params``) on that profile, prints
  ``VALIDATION_SCORE: <value>`` measured on a held-out part of the training data with the competition's
  metric, refits on everything and writes the submission.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np
import pandas as pd

DATA = "data"
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")
SCORE_PREFIX = "VALIDATION_SCORE:"
FOLDS_PREFIX = "VALIDATION_FOLDS:"


# --- profiling -------------------------------------------------------------------------------------------
def _numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _columns(path: str) -> list[str]:
    return list(pd.read_csv(path, nrows=0).columns)


def _image_dirs(ids: list[str]) -> dict[str, str]:
    """Folders under data/ holding an image file named after one of ``ids``: {"<id>": "data/<dir>/<id>.ext"}."""
    found = {}
    wanted = set(str(i) for i in ids[:50])
    for root, _, files in os.walk(DATA):
        for name in files:
            stem, ext = os.path.splitext(name)
            if ext.lower() in IMAGE_EXTENSIONS and (stem in wanted or name in wanted):
                found[root] = ext
                break
    return found


def profile(info: dict) -> dict:
    """Work out the task from ./data and what the environment said (``info``: header, id_column, targets,
    kind, sample, metric, lower_is_better). Returns a JSON-able dict."""
    id_col, targets, sample_name = info["id_column"], list(info["targets"]), info["sample"]
    csvs = sorted(f for f in os.listdir(DATA) if f.lower().endswith(".csv") and f != sample_name)
    cols = {f: _columns(os.path.join(DATA, f)) for f in csvs}
    train_file = None
    for name in sorted(csvs, key=lambda f: ("train" not in f.lower() and "label" not in f.lower(), f)):
        if set(targets) <= set(cols[name]):
            train_file = name
            break
    label_col = None
    if train_file is None:  # e.g. one column per class in the submission, one label column in train
        for name in csvs:
            extra = [c for c in cols[name] if c != id_col and c not in cols.get("test.csv", [])]
            if id_col in cols[name] and len(extra) == 1:
                train_file, label_col = name, extra[0]
                break
    if train_file is None:
        raise SystemExit("mlkit: no training table with the target columns in data/")
    test_file = next((f for f in csvs if f != train_file and id_col in cols[f] and not set(targets) & set(cols[f])),
                     None)
    train = pd.read_csv(os.path.join(DATA, train_file), nrows=2000, dtype={id_col: str})
    ids = [str(v) for v in train[id_col].head(50)] if id_col in train.columns else []
    image_dirs = _image_dirs(ids) if ids else {}
    text_col = None
    feature_cols = [c for c in train.columns if c not in targets and c != label_col and c != id_col]
    # the id is text to learn from only when it reads like text (detecting-insults keys rows by the comment)
    id_is_text = id_col in train.columns and train[id_col].astype(str).str.split().str.len().mean() > 3
    object_cols = [c for c in train.columns if not _numeric(train[c]) and c not in targets and c != label_col
                   and (c != id_col or id_is_text)]
    lengths = {c: train[c].astype(str).str.len().mean() for c in object_cols}
    if lengths and max(lengths.values()) > 40:
        text_col = max(lengths, key=lengths.get)
    if image_dirs:
        data_type = "image"
    elif text_col is not None:
        data_type = "text"
    else:
        data_type = "tabular"
    kind = info["kind"]
    if kind == "probability":
        task = "binary" if len(targets) == 1 else ("multiclass_proba" if label_col else "multilabel")
    else:  # integers, labels and text are predicted as classes
        task = "regression" if kind == "number" else "classification"
    test_dirs = _image_dirs(_test_ids(info, test_file)) if image_dirs else {}
    return {
        "train_file": train_file, "test_file": test_file, "sample": sample_name, "id_column": id_col,
        "targets": targets, "label_column": label_col, "header": list(info["header"]), "data_type": data_type,
        "text_column": text_col, "feature_columns": feature_cols if data_type == "tabular" else [],
        "image_dir_train": next(iter(image_dirs), None), "image_dir_test": next(iter(test_dirs), None),
        "task": task, "metric": info["metric"], "lower_is_better": info["lower_is_better"],
    }


def _test_ids(info: dict, test_file: str | None) -> list[str]:
    source = test_file or info["sample"]
    frame = pd.read_csv(os.path.join(DATA, source), nrows=50, dtype={info["id_column"]: str})
    return [str(v) for v in frame[info["id_column"]]]


# --- data --------------------------------------------------------------------------------------------------
def load(prof: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(train, test, sample) frames; ids are read as text."""
    id_col = prof["id_column"]
    train = pd.read_csv(os.path.join(DATA, prof["train_file"]), dtype={id_col: str})
    sample = pd.read_csv(os.path.join(DATA, prof["sample"]), dtype={id_col: str})
    test = pd.read_csv(os.path.join(DATA, prof["test_file"]), dtype={id_col: str}) if prof["test_file"] else sample
    return train, test, sample


def _image_matrix(folder: str, ids, side: int) -> np.ndarray:
    from PIL import Image

    names = {os.path.splitext(n)[0]: n for n in os.listdir(folder)}
    rows = []
    for i in ids:
        img = Image.open(os.path.join(folder, names.get(str(i), str(i)))).convert("L")
        if img.size != (side, side):
            img = img.resize((side, side))
        rows.append(np.asarray(img, dtype=np.float32).ravel() / 255.0)
    return np.stack(rows)


def targets_of(prof: dict, train: pd.DataFrame) -> np.ndarray:
    if prof["label_column"]:
        return train[prof["label_column"]].astype(str).to_numpy()
    values = train[prof["targets"]].to_numpy()
    return values[:, 0] if values.shape[1] == 1 else values


# --- models ------------------------------------------------------------------------------------------------
def _is_classification(prof: dict) -> bool:
    return prof["task"] != "regression"


def _tabular_preprocessor(numeric: list[str], categorical: list[str], scale: bool):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, QuantileTransformer, StandardScaler

    # distance- and weight-based models get quantile-normalised numbers: bounded, so a test row with an
    # extreme value (a huge house) cannot be extrapolated to an absurd prediction
    num = make_pipeline(SimpleImputer(strategy="median"), QuantileTransformer(n_quantiles=200,
                        output_distribution="normal"), StandardScaler()) if scale else SimpleImputer(strategy="median")
    if scale:
        cat = make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                            OneHotEncoder(handle_unknown="ignore"))
    else:
        cat = make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                            OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1))
    parts = [("num", num, numeric)] + ([("cat", cat, categorical)] if categorical else [])
    return ColumnTransformer(parts)


# every parameter a pipeline reads, with its default; a config's "params" override these
DEFAULTS: dict[str, dict] = {
    "hgb": {"max_iter": 300, "learning_rate": 0.06, "max_leaf_nodes": 31, "l2": 0.0, "min_samples_leaf": 20},
    "forest": {"n_estimators": 300, "max_features": "sqrt", "min_samples_leaf": 1},
    "extra_trees": {"n_estimators": 300, "max_features": "sqrt", "min_samples_leaf": 1},
    "linear": {"C": 1.0},
    "knn": {"k": 5, "weights": "distance"},
    "svm": {"C": 5.0, "gamma": "scale"},
    "text": {"word_ngrams": 2, "char_ngrams": 5, "min_df": 2, "chars": True, "vocabulary": 200_000},
    "image": {"pca": 50, "whiten": False, "side": 28},
    "run": {"seed": 0, "cv": 1, "holdout": 0.2, "train_fraction": 1.0},
}


def settings(prof: dict, family: str, params: dict) -> dict:
    """The config's params over the defaults of its family, data type and run."""
    if family not in DEFAULTS or family in ("text", "image", "run"):
        raise ValueError(f"unknown model family {family!r}; known: hgb, forest, extra_trees, linear, knn, svm")
    merged = {**DEFAULTS["run"], **DEFAULTS.get(prof["data_type"], {}), **DEFAULTS[family]}
    merged.update(params)
    return merged


def build(prof: dict, family: str, params: dict, frame: pd.DataFrame | None = None) -> Any:
    """An unfitted scikit-learn estimator for the profile's data type."""
    from sklearn import ensemble, linear_model, neighbors, svm
    from sklearn.decomposition import PCA
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline, make_union

    p = settings(prof, family, params)
    classify, seed = _is_classification(prof), p["seed"]
    if family == "hgb":
        cls = ensemble.HistGradientBoostingClassifier if classify else ensemble.HistGradientBoostingRegressor
        model = cls(max_iter=p["max_iter"], learning_rate=p["learning_rate"], max_leaf_nodes=p["max_leaf_nodes"],
                    l2_regularization=p["l2"], min_samples_leaf=p["min_samples_leaf"], random_state=seed)
    elif family in ("forest", "extra_trees"):
        name = "RandomForest" if family == "forest" else "ExtraTrees"
        cls = getattr(ensemble, name + ("Classifier" if classify else "Regressor"))
        model = cls(n_estimators=p["n_estimators"], max_features=p["max_features"],
                    min_samples_leaf=p["min_samples_leaf"], n_jobs=2, random_state=seed)
    elif family == "linear":
        model = (linear_model.LogisticRegression(C=p["C"], max_iter=2000) if classify
                 else linear_model.Ridge(alpha=1.0 / p["C"]))
    elif family == "knn":
        cls = neighbors.KNeighborsClassifier if classify else neighbors.KNeighborsRegressor
        model = cls(n_neighbors=p["k"], weights=p["weights"])
    else:
        model = (svm.SVC(C=p["C"], gamma=p["gamma"], probability=prof["task"] != "classification",
                         random_state=seed) if classify else svm.SVR(C=p["C"]))
    if prof["data_type"] == "text":
        word = TfidfVectorizer(ngram_range=(1, p["word_ngrams"]), min_df=p["min_df"], sublinear_tf=True,
                               max_features=p["vocabulary"])
        char = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, p["char_ngrams"]), min_df=p["min_df"],
                               sublinear_tf=True, max_features=p["vocabulary"])
        return make_pipeline(make_union(word, char) if p["chars"] else word, model)
    if prof["data_type"] == "image":
        steps = [PCA(p["pca"], whiten=p["whiten"], random_state=seed)] if p["pca"] else []
        return make_pipeline(*steps, model)
    numeric = [c for c in prof["feature_columns"] if frame is not None and _numeric(frame[c])]
    categorical = [c for c in prof["feature_columns"] if frame is not None and not _numeric(frame[c])]
    return make_pipeline(_tabular_preprocessor(numeric, categorical, scale=family in ("linear", "knn", "svm")),
                         model)


def features(prof: dict, frame: pd.DataFrame, part: str, params: dict) -> Any:
    if prof["data_type"] == "text":
        return frame[prof["text_column"]].fillna("").astype(str)
    if prof["data_type"] == "image":
        folder = prof["image_dir_train"] if part == "train" else prof["image_dir_test"]
        return _image_matrix(folder, frame[prof["id_column"]], params["side"])
    return frame[prof["feature_columns"]]


# --- scoring -----------------------------------------------------------------------------------------------
def score(prof: dict, y_true: np.ndarray, pred: np.ndarray, classes=None) -> float:
    """The competition's metric (or the closest one) on held-out rows."""
    from sklearn import metrics

    name = prof["metric"]
    if name in ("rmsle", "mean_columnwise_rmsle"):
        return float(np.sqrt(np.mean((np.log1p(np.clip(pred, 0, None)) - np.log1p(y_true)) ** 2)))
    if name in ("rmse",):
        return float(np.sqrt(np.mean((pred - y_true) ** 2)))
    if name == "mae":
        return float(np.mean(np.abs(pred - y_true)))
    if name in ("auc", "mean_columnwise_auc"):
        if pred.ndim == 2 and y_true.ndim == 2:
            return float(np.mean([metrics.roc_auc_score(y_true[:, j], pred[:, j]) for j in range(pred.shape[1])]))
        return float(metrics.roc_auc_score(y_true, pred))
    if name in ("log_loss", "multiclass_log_loss"):
        p = np.clip(pred, 1e-15, 1 - 1e-15)
        if p.ndim == 1:
            return float(-np.mean(y_true * np.log(p) + (1 - y_true) * np.log(1 - p)))
        p = p / p.sum(axis=1, keepdims=True)
        onehot = (np.asarray(y_true).reshape(-1, 1) == np.asarray(classes).reshape(1, -1)).astype(float)
        return float(-np.mean(np.sum(onehot * np.log(p), axis=1)))
    if name == "quadratic_weighted_kappa":
        return float(metrics.cohen_kappa_score(y_true.astype(int), pred.astype(int), weights="quadratic"))
    if name == "f1":
        return float(metrics.f1_score(y_true, pred, average="macro"))
    if _is_classification(prof):
        return float(metrics.accuracy_score(np.asarray(y_true).astype(str), np.asarray(pred).astype(str)))
    return float(np.sqrt(np.mean((pred - y_true) ** 2)))


def _predict(prof: dict, model, x):
    """Predictions in the submission's form: probabilities, class labels or numbers."""
    task = prof["task"]
    if task == "binary":
        return model.predict_proba(x)[:, list(model.classes_).index(1) if 1 in model.classes_ else -1]
    if task == "multiclass_proba":
        return model.predict_proba(x)
    if task == "multilabel":
        return np.column_stack([p[:, -1] for p in model.predict_proba(x)])
    return model.predict(x)


def _transform_target(prof: dict, y: np.ndarray) -> np.ndarray:
    return np.log1p(np.clip(y, 0, None)) if prof["metric"] in ("rmsle", "mean_columnwise_rmsle") else y


def _inverse_target(prof: dict, y: np.ndarray) -> np.ndarray:
    return np.expm1(y) if prof["metric"] in ("rmsle", "mean_columnwise_rmsle") else y


class _Clipped:
    """A regressor whose predictions stay within the training targets' range widened by 10 % on each side,
    so that a linear model cannot extrapolate to absurd values on unusual test rows."""

    def __init__(self, model, y: np.ndarray) -> None:
        spread = float(np.max(y) - np.min(y)) or 1.0
        self.model, self.low, self.high = model, float(np.min(y)) - 0.1 * spread, float(np.max(y)) + 0.1 * spread

    def predict(self, x):
        return np.clip(self.model.predict(x), self.low, self.high)


def _fit(prof: dict, family: str, params: dict, frame: pd.DataFrame, x, y):
    if prof["task"] == "multilabel":
        from sklearn.multioutput import MultiOutputClassifier

        model = MultiOutputClassifier(build(prof, family, params, frame))
    else:
        model = build(prof, family, params, frame)
    if prof["task"] == "regression":
        target = _transform_target(prof, y)
        return _Clipped(model.fit(x, target), target)
    return model.fit(x, y)


def _take(x, rows: np.ndarray):
    return x.iloc[rows] if hasattr(x, "iloc") else x[rows]


def validate(prof: dict, family: str, params: dict, train: pd.DataFrame, x, y: np.ndarray) -> tuple[float, list]:
    """The metric on rows the model did not train on, and the metric of each fold.

    One held-out split (``holdout``, default 0.2), or a ``cv``-fold cross-validation when ``cv`` > 1 (less
    noisy, ``cv`` times slower): then the score is that of all out-of-fold predictions together. Folds
    depend only on the row count and ``seed``, so two pipelines' fold scores can be compared pairwise."""
    from sklearn.model_selection import KFold, train_test_split

    seed, rows = params["seed"], np.arange(len(train))
    if params["cv"] > 1:
        splits = list(KFold(params["cv"], shuffle=True, random_state=seed).split(rows))
    else:
        splits = [train_test_split(rows, test_size=params["holdout"], random_state=seed)]
    held_rows, held_preds, folds, classes = [], [], [], None
    for fit_rows, hold_rows in splits:
        model = _fit(prof, family, params, train.iloc[fit_rows], _take(x, fit_rows), y[fit_rows])
        held = _predict(prof, model, _take(x, hold_rows))
        held = _inverse_target(prof, held) if prof["task"] == "regression" else held
        classes = getattr(model, "classes_", None)
        held_rows.append(hold_rows)
        held_preds.append(held)
        folds.append(score(prof, y[hold_rows], held, classes))
    order = np.concatenate(held_rows)
    return score(prof, y[order], np.concatenate(held_preds), classes), folds


def run(prof: dict, config: dict, submission_path: str) -> float:
    """Print the validation score, refit on all of train and write the submission; returns the score."""
    started = time.time()
    family = config["family"]
    params = settings(prof, family, config.get("params", {}))
    train, test, sample = load(prof)
    if params["train_fraction"] < 1.0:
        train = train.sample(frac=params["train_fraction"], random_state=params["seed"])
    y = targets_of(prof, train)
    x = features(prof, train, "train", params)
    value, folds = validate(prof, family, params, train, x, y)
    print(f"{SCORE_PREFIX} {value:.6f}", flush=True)
    if len(folds) > 1:
        print(f"{FOLDS_PREFIX} {json.dumps([round(f, 6) for f in folds])}", flush=True)
    model = _fit(prof, family, params, train, x, y)
    pred = _predict(prof, model, features(prof, test, "test", params))
    write_submission(prof, test, sample, pred, getattr(model, "classes_", None), submission_path)
    print(f"wrote {submission_path} in {time.time() - started:.1f} s", flush=True)
    return value


def write_submission(prof: dict, test: pd.DataFrame, sample: pd.DataFrame, pred, classes, path: str) -> None:
    """Columns in the sample submission's order: the id, predicted targets, other columns copied from test."""
    out = pd.DataFrame({prof["id_column"]: test[prof["id_column"]].to_numpy()})
    targets = prof["targets"]
    if prof["task"] == "multiclass_proba":
        order = [list(map(str, classes)).index(t) for t in targets]
        for t, j in zip(targets, order, strict=True):
            out[t] = pred[:, j]
    elif np.ndim(pred) == 2:
        values = _inverse_target(prof, pred) if prof["task"] == "regression" else pred
        for j, t in enumerate(targets):
            out[t] = values[:, j]
    else:
        out[targets[0]] = _inverse_target(prof, pred) if prof["task"] == "regression" else pred
    for column in prof["header"]:
        if column not in out.columns and column in test.columns:
            out[column] = test[column].to_numpy()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    out[[c for c in prof["header"] if c in out.columns]].to_csv(path, index=False)


def main(argv: list[str]) -> None:
    """``python code/mlkit.py profile INFO_JSON`` prints the profile as JSON."""
    if argv[:1] == ["profile"]:
        print(json.dumps(profile(json.loads(argv[1]))))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
