"""A fill-in program for one competition: the harness writes the lines every solution needs (imports,
reading the data, the hold-out split, fitting, the competition's metric, the submission file) and the
model writes only the middle: features and an estimator.

Small models (Qwen2.5-Coder-1.5B) given only an outline write plausible programs that use names they never
defined (``X_valid``, ``y_train``), print another metric than the competition's, or write the submission
in the wrong shape; with the fixed lines in place they only have to get the features and the model right.
The fixed lines also turn what small models most often leave as text into numbers: raw texts (X one
text per row) become TF-IDF features; DataFrames keep the columns X and X_test share, with text columns of
at most :data:`MAX_ONE_HOT` values one-hot encoded (pandas.get_dummies over both), other text columns
dropped and gaps filled with 0. The validation score is the metric's plain call (no per-competition
parameters: metrics that need some, such as f1's average, have no template). A reply that copies the fixed
lines or does the harness's work itself has those lines taken out (:meth:`ProgramTemplate.cleaned`).

The template exists where the harness knows how to score the metric and the submission has one target
column (:func:`program_template` returns None otherwise: then the model writes the whole program).

The model's part must define these names:

- ``X``: the features of the training rows (DataFrame, numpy array or sparse matrix);
- ``y``: their target (set by the fixed lines when the data preview shows it is a column of train.csv);
- ``X_test``: the features of the test rows, in the order of ``sub``, with the same columns as ``X``;
- ``model``: an unfitted estimator with scikit-learn's ``fit`` and ``predict`` (``predict_proba`` for
  probability metrics, when it has one).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

BEGIN = "# ---- your part: begin ----"
END = "# ---- your part: end ----"

# metric -> (import, how predictions are made from fitted ``model`` on ``X``, the score expression, a check
# of the model before it is fitted). Metrics with parameters a plain call would get wrong (f1's average, a
# scored-rows mask) have no template.
_PROBABILITY = ("model.predict_proba(X)[:, 1] if hasattr(model, 'predict_proba') else model.decision_function(X) "
                "if hasattr(model, 'decision_function') else model.predict(X)")
_METRICS = {
    "auc": ("from sklearn.metrics import roc_auc_score", _PROBABILITY, "roc_auc_score(y_valid, predict(X_valid))", ""),
    "log_loss": ("from sklearn.metrics import log_loss", "np.clip(model.predict_proba(X)[:, 1], 1e-6, 1 - 1e-6)",
                 "log_loss(y_valid, predict(X_valid))",
                 "assert hasattr(model, 'predict_proba'), 'log loss needs probabilities: use a model with "
                 "predict_proba (e.g. LogisticRegression)'"),
    "accuracy": ("from sklearn.metrics import accuracy_score", "model.predict(X)",
                 "accuracy_score(y_valid, predict(X_valid))", ""),
    "rmsle": ("from sklearn.metrics import mean_squared_log_error", "np.clip(model.predict(X), 0, None)",
              "mean_squared_log_error(y_valid, predict(X_valid)) ** 0.5", ""),
    "rmse": ("from sklearn.metrics import mean_squared_error", "model.predict(X)",
             "mean_squared_error(y_valid, predict(X_valid)) ** 0.5", ""),
    "mae": ("from sklearn.metrics import mean_absolute_error", "model.predict(X)",
            "mean_absolute_error(y_valid, predict(X_valid))", ""),
}

# Text columns with more distinct values than this are dropped from a DataFrame X rather than one-hot encoded.
MAX_ONE_HOT = 50

# Imported for the model's part: small models often use these without importing them.
COMMON_IMPORTS = (
    "from sklearn.model_selection import train_test_split",
    "from sklearn.feature_extraction.text import TfidfVectorizer",
    "from sklearn.linear_model import LogisticRegression, Ridge",
    "from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, "
    "RandomForestClassifier, RandomForestRegressor",
)

_SLOTS = {
    "X": "the features of the rows of train, all numeric (DataFrame, numpy array or sparse matrix)",
    "y": "the target of the rows of train",
    "X_test": "the features of the rows of test (in the order of sub), with the same columns as X",
    "model": "an unfitted scikit-learn estimator",
}


_SPLIT_NAMES = {"X_train", "X_valid", "y_train", "y_valid"}


def _harness_work(node: ast.stmt) -> bool:
    """Whether a top-level statement of a part does what the fixed lines do (see ProgramTemplate.cleaned)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in _SPLIT_NAMES:
            return True
        on_model = isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "model"
        if on_model and (n.attr in ("fit", "score") or n.attr.startswith("predict")):  # type: ignore[union-attr]
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("to_csv", "makedirs"):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "VALIDATION_SCORE" in n.value:
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) \
                and n.value.id == "sub":
            return True
    return False


@dataclass(frozen=True)
class ProgramTemplate:
    """The fixed lines before (``head``) and after (``tail``) the model's part, and the names the part must
    define (``slots``: X, X_test and model, and y unless the head sets it)."""

    head: str
    tail: str
    slots: tuple[str, ...] = ("X", "y", "X_test", "model")
    target: str = ""
    """The target column (what ``y`` holds and the submission's column the predictions fill)."""
    notes: dict[str, str] = field(default_factory=dict)
    """What the outline says of a name, where this competition's data calls for more than the general words."""

    def assemble(self, part: str, truncated: bool = False) -> str:
        """The whole program with ``part`` (the model's code) between the markers. Small models often copy
        the fixed lines into their part, or do the harness's work there (fit, score, write the file): those
        lines are taken out (see :meth:`cleaned`; ``truncated``: the reply was cut off at the token limit)."""
        return f"{self.head}\n{BEGIN}\n{self.cleaned(part, truncated)}\n{END}\n{self.tail}\n"

    def cleaned(self, part: str, truncated: bool = False) -> str:
        """``part`` without the top-level statements that copy a fixed one (comments aside) or do the
        harness's work: use the hold-out split's names, fit or predict with ``model``, print the score, write
        files or fill ``sub``; and without the statements that then use what those defined. When what is left
        no longer defines every name the part must (or ``part`` is not valid Python), ``part`` as it is. A
        reply cut off at the token limit loses its unfinished last lines first."""
        tree, lines = _parsed(part, truncated)
        if tree is None:
            return part.strip()
        fixed = {ast.unparse(node) for node in ast.parse(self.head + "\n" + self.tail).body}
        dropped: set[str] = set()  # names assigned by dropped statements
        keep: list[ast.stmt] = []
        for node in tree.body:
            loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            stores = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if ast.unparse(node) in fixed:  # a copy: the fixed lines define the same names
                continue
            if _harness_work(node) or loads & dropped:
                dropped |= stores - set(self.slots)
                continue
            dropped -= stores
            keep.append(node)
        text = "\n".join("\n".join(lines[n.lineno - 1 - len(getattr(n, "decorator_list", [])):n.end_lineno])
                         for n in keep).strip()
        assigned = {n.id for node in keep for n in ast.walk(node) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
        return text if set(self.slots) <= assigned else part.strip()

    def outline(self) -> str:
        """The program as the model is shown it: the fixed lines around one line per name to define."""
        notes = {**_SLOTS, **self.notes}
        slots = "\n".join(f"{name} = ...  # {notes[name]}" for name in self.slots)
        return (f"{self.head}\n# >>> YOUR PART: replace each ... (add any code these need) <<<\n{slots}\n"
                f"# >>> end of your part <<<\n{self.tail}")


def _parsed(part: str, truncated: bool) -> tuple[ast.Module | None, list[str]]:
    """The part's syntax tree and lines, or (None, lines) when it is not Python; for a ``truncated`` reply
    (cut off at the token limit), its longest start of whole lines that is."""
    lines = part.splitlines()
    for end in range(len(lines), 0, -1) if truncated else (len(lines),):
        try:
            return ast.parse("\n".join(lines[:end])), lines[:end]
        except SyntaxError:
            continue
    return None, lines


def part_of(program: str) -> str:
    """The model's part of an assembled program (the whole text when it has no markers)."""
    if BEGIN in program and END in program:
        return program.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    return program.strip()


def program_template(submission: dict[str, Any] | None, metric: str, domain: str | None = None,
                     data_preview: str = "") -> ProgramTemplate | None:
    """The template for a competition (its submission spec, metric name, domain, and a data preview or file
    listing that shows whether there is a data/train.csv and whether the test rows are data/test.csv or files
    of a folder), or None when the metric, the submission's shape or the data's layout has no template."""
    submission = submission or {}
    targets = submission.get("targets") or []
    if metric not in _METRICS or len(targets) != 1:
        return None
    if data_preview and not re.search(r"(^|[\s/])data/train\.csv\b", data_preview):
        return None  # the training rows are not one table the fixed lines can read
    target = targets[0]
    sample = submission.get("sample") or "sample_submission.csv"
    id_column = submission.get("id_column")
    header = submission.get("header") or ([id_column] if id_column else []) + targets
    ids = f", dtype={{'{id_column}': str}}" if id_column else ""
    metric_import, prediction, score, check = _METRICS[metric]
    lines = ["import os", "import numpy as np", "import pandas as pd", *COMMON_IMPORTS, metric_import]
    if domain == "image":
        lines += ["from PIL import Image",
                  "def load_image(path, size=None):  # one image as a flat array of gray levels in [0, 1]",
                  "    image = Image.open(path).convert('L')",
                  "    return np.asarray(image.resize(size) if size else image, dtype=np.float32).ravel() / 255"]
    files_by_id = ids if domain == "image" else ""  # ids name files (keep their leading zeros)
    lines.append(f"train = pd.read_csv('./data/train.csv'{files_by_id})  # the training rows")
    reads_test = "data/test.csv" in data_preview or not data_preview
    if reads_test:
        lines.append(f"test = pd.read_csv('./data/test.csv'{files_by_id})  # the rows to predict, in the order of sub")
    else:
        folder = re.search(r"data/(test[^/\s]*)/", data_preview)
        where = f"./data/{folder.group(1)}/" if folder else "./data/"
        lines.append(f"# the test items are the files in {where}, one per row of sub, named by sub['{id_column}']"
                     if id_column else f"# the test items are the files in {where}, one per row of sub")
    lines.append(f"sub = pd.read_csv('./data/{sample}'{ids})  # the submission's rows and columns, to fill in")
    slots, notes = ("X", "y", "X_test", "model"), {}
    if domain == "image":
        notes["X"] = _SLOTS["X"] + ("; images: stack load_image(path) of each image (size=(64, 64) when their "
                                    "sizes differ)")
    if not reads_test:
        notes["X_test"] = _SLOTS["X_test"].replace("the rows of test (in the order of sub)", "the test items of sub")
    if re.search(rf"(?m)^(\./)?data/train\.csv:.*\b{re.escape(target)} \(", data_preview):  # a column of train
        lines.append(f"y = train['{target}']  # the target")
        slots = ("X", "X_test", "model")
    tail = [
        "def is_text(values):",
        "    return np.ndim(values) == 1 and pd.api.types.infer_dtype(np.asarray(values, dtype=object), "
        "skipna=True) == 'string'",
        "if is_text(X):  # raw texts: TF-IDF features",
        "    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)",
        "    X = vectorizer.fit_transform(pd.Series(X).fillna('').astype(str))",
        "    X_test = vectorizer.transform(pd.Series(X_test).fillna('').astype(str))",
        "if isinstance(X, pd.Series):  # one feature column",
        "    X, X_test = X.to_frame(), pd.Series(X_test).to_frame(X.name)",
        "if isinstance(X, pd.DataFrame) and isinstance(X_test, pd.DataFrame):  # shared columns, text one-hot",
        "    shared = [c for c in X.columns if c in X_test.columns]",
        "    both = pd.concat([X[shared], X_test[shared]])",
        f"    many = [c for c in shared if not pd.api.types.is_numeric_dtype(both[c]) and both[c].nunique() > "
        f"{MAX_ONE_HOT}]",
        "    both = pd.get_dummies(both.drop(columns=many)).fillna(0)",
        "    X, X_test = both.iloc[:len(X)], both.iloc[len(X):]",
        "assert np.shape(X_test)[0] == len(sub), f'X_test has {np.shape(X_test)[0]} rows, the submission {len(sub)}'",
        "assert np.shape(X)[0] == len(y), f'X has {np.shape(X)[0]} rows, y {len(y)}'",
        *([check] if check else []),
        "X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)",
        "model.fit(X_train, y_train)",
        "def predict(X):",
        f"    return {prediction}",
        f"score = {score}",
        "print(f'VALIDATION_SCORE: {score:.6f}')",
        "model.fit(X, y)  # refit on every training row",
        f"sub['{target}'] = predict(X_test)",
        "os.makedirs('./submission', exist_ok=True)",
        f"sub[{header!r}].to_csv('./submission/submission.csv', index=False)",
    ]
    return ProgramTemplate(head="\n".join(lines), tail="\n".join(tail), slots=slots, target=target, notes=notes)
