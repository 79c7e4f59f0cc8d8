"""Facts about a competition for LLM prompts, shared by the react agent and AIDE's LLM proposer: a program
that previews the data, the submission's exact rules, how to compute each metric with scikit-learn, a first
approach per domain, and the task text without the sections that only distract a small model."""

from __future__ import annotations

import re
from typing import Any

# A Python program the policy runs once to show the data: each file of ./data with its size; for a CSV its
# row count, columns with their types and two rows; for a folder the count and a few names.
PREVIEW = r'''
import os, csv
csv.field_size_limit(1 << 30)
def cut(v, n=60):
    v = str(v).replace("\n", " ")
    return v if len(v) <= n else v[:n] + "..."
seen = {}
for name in sorted(os.listdir("data"), key=lambda n: (not n.startswith("train"), n)):
    path = os.path.join("data", name)
    if os.path.isdir(path):
        files = sorted(os.listdir(path))
        print(f"./data/{name}/: folder of {len(files)} files, e.g. {', '.join(files[:3])}")
        continue
    size = os.path.getsize(path)
    if not name.endswith(".csv"):
        print(f"./data/{name}: {size} bytes")
        continue
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        rows = [r for _, r in zip(range(2), reader)]
        count = len(rows) + sum(1 for _ in reader)
    base = next((k for k, cols in seen.items() if len(header) > 10 and set(header) <= set(cols)), None)
    seen[name] = header
    if base is not None:
        gone = [c for c in seen[base] if c not in header]
        print(f"./data/{name}: {count} rows, the columns of ./data/{base} without {', '.join(gone) or 'none'}")
        for r in rows:
            print("   row: " + ", ".join(cut(v) for v in r[:12]) + (" ..." if len(r) > 12 else ""))
        continue
    kinds = []
    shown = list(range(len(header)))
    if len(header) > 24:
        shown = shown[:16] + shown[-4:]
    for i in shown:
        values = [r[i] for r in rows if i < len(r) and r[i] != ""]
        try:
            [float(v) for v in values]
            kind = "number" if values else "empty"
        except ValueError:
            kind = "text"
        kinds.append(f"{header[i]} ({kind})")
    if len(header) > 24:  # wide tables: a long list of names only tempts a model to copy it
        kinds.insert(16, f"... {len(header) - 20} more ...")
    print(f"./data/{name}: {count} rows, {len(header)} columns: {', '.join(kinds)}")
    for r in rows:
        print("   row: " + ", ".join(cut(v) for v in r[:12]) + (" ..." if len(r) > 12 else ""))
'''

METRIC_HINTS = {
    "auc": "from sklearn.metrics import roc_auc_score; score = roc_auc_score(y_valid, model.predict_proba(X_valid)"
           "[:, 1]). Submit probabilities (predict_proba(...)[:, 1]), not 0/1 labels.",
    "accuracy": "from sklearn.metrics import accuracy_score; score = accuracy_score(y_valid, model.predict(X_valid)). "
                "Submit class labels.",
    "rmsle": "from sklearn.metrics import mean_squared_log_error; score = mean_squared_log_error(y_valid, pred) ** 0.5"
             " with pred clipped to >= 0. Fitting on numpy.log1p(y) and predicting numpy.expm1(...) helps.",
    "rmse": "from sklearn.metrics import mean_squared_error; score = mean_squared_error(y_valid, pred) ** 0.5.",
    "mae": "from sklearn.metrics import mean_absolute_error; score = mean_absolute_error(y_valid, pred).",
    "log_loss": "from sklearn.metrics import log_loss; score = log_loss(y_valid, model.predict_proba(X_valid)). "
                "Submit probabilities.",
    "multiclass_log_loss": "from sklearn.metrics import log_loss; score = log_loss(y_valid, "
                           "model.predict_proba(X_valid)). Submit one probability column per class.",
    "f1": "from sklearn.metrics import f1_score; score = f1_score(y_valid, model.predict(X_valid)).",
    "quadratic_weighted_kappa": "from sklearn.metrics import cohen_kappa_score; score = cohen_kappa_score(y_valid, "
                                "pred, weights='quadratic').",
}

# A first approach per domain (the competition's ``domain``), in words: small models pick better from one.
APPROACHES = {
    "tabular": "Features: the columns of test.csv but the id, selected with code: cols = [c for c in test.columns "
               "if c != ID]. Encode train and test together: both = pd.get_dummies(pd.concat([train[cols], "
               "test[cols]])).fillna(0) (get_dummies first: with pandas 3 text columns cannot be filled with 0), "
               "X = both[:len(train)], X_test = both[len(train):], y = train[TARGET]. Then fit "
               "sklearn.ensemble.HistGradientBoostingRegressor (or ...Classifier).",
    "text": "Turn the text column into features with sklearn.feature_extraction.text.TfidfVectorizer(ngram_range="
            "(1, 2), min_df=2, sublinear_tf=True), fitted on the training text, then fit "
            "sklearn.linear_model.LogisticRegression(C=4, max_iter=1000) (Ridge for a numeric target).",
    "image": "Load each image as np.asarray(PIL.Image.open(path).convert('L'), dtype=np.float32).ravel() / 255 "
             "(training images by the ids in train.csv, read as str), stack them into X, then fit "
             "sklearn.linear_model.LogisticRegression(max_iter=300) or sklearn.svm.SVC.",
}

_DISTRACTING = re.compile(r"\n## (Medals|Version history)\n.*?(?=\n#{1,2} |\Z)", re.S)


def without_sections(task: str) -> str:
    """The task text without its "Medals" and "Version history" sections: how medals are computed and how
    the data was made, which only distract a small model (it runs the commands they quote)."""
    return _DISTRACTING.sub("\n", task)


def submission_facts(submission: dict[str, Any] | None) -> str:
    """The submission's exact requirements, from the competition's submission spec."""
    if not submission:
        return "Write ./submission/submission.csv with the sample submission's header, one row per test row."
    header = ",".join(submission.get("header") or [])
    sample = submission.get("sample") or "sample_submission.csv"
    id_column, targets = submission.get("id_column"), submission.get("targets") or []
    lines = ["- Write exactly ./submission/submission.csv (create ./submission first: "
             "os.makedirs('./submission', exist_ok=True)).",
             f"- Its header must be exactly `{header}` (as in ./data/{sample}), one row per row of ./data/{sample}, "
             f"in the same order."]
    if id_column:
        lines.append(f"- Read ./data/{sample} with dtype={{'{id_column}': str}} and keep its `{id_column}` column "
                     "unchanged; fill in " + ", ".join(f"`{t}`" for t in targets) + ".")
    elif targets:
        lines.append(f"- Start from ./data/{sample} and fill in " + ", ".join(f"`{t}`" for t in targets) + ".")
    kind = submission.get("kind")
    if kind:
        lines.append(f"- Target values: {kind}.")
    return "\n".join(lines)


def approach(domain: str, submission: dict[str, Any] | None) -> str:
    """The first approach for ``domain`` with the id and target column names filled in."""
    submission = submission or {}
    ident = submission.get("id_column")
    target = (submission.get("targets") or ["target"])[0]
    return APPROACHES[domain].replace("ID", repr(ident) if ident else "None").replace("TARGET", repr(target))
