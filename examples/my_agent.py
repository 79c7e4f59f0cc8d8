"""Your own agent: a policy in a file of yours, run and evaluated like the bundled ones.

    mle-env run practice-house-prices --agent examples/my_agent.py:MyPolicy
    mle-env eval --agent examples/my_agent.py:MyPolicy --competitions practice --seeds 3 --out runs/mine
    mle-env eval --agent examples/my_agent.py:MyPolicy -o max_text_features=20000 ...   # constructor options

A policy is any class with ``reset(obs, info)`` and ``act(obs, info) -> action``; the constructor's keyword
arguments are its ``-o key=value`` options, and a ``seed`` argument receives the episode's seed. This one
writes a small scikit-learn program into ./code, runs it, checks the submission with ``validate`` and
submits; if its model cannot handle the data (images, say) it submits a copy of the sample submission, so
every episode ends with a valid file. Nothing here imports mle_env: a policy only speaks actions.
"""

from __future__ import annotations

import json

TRAIN = r'''
import json, sys
import numpy as np, pandas as pd
from scipy import sparse
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge

task = json.loads(sys.argv[1])
train, test = pd.read_csv("data/train.csv"), pd.read_csv("data/test.csv")
sample = pd.read_csv("data/" + task["sample"])
idc, targets = task["id_column"], task["targets"]
features = [c for c in test.columns if c != idc and c in train.columns]
numbers = [c for c in features if pd.api.types.is_numeric_dtype(train[c])]
text = [c for c in features if c not in numbers and train[c].astype(str).str.len().mean() > 30]
if text:  # words of every text column, a linear model
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=task["max_text_features"], sublinear_tf=True)
    joined = lambda frame: frame[text].fillna("").astype(str).agg(" ".join, axis=1)
    x_train, x_test = vec.fit_transform(joined(train)), vec.transform(joined(test))
    classify = lambda: LogisticRegression(C=4.0, max_iter=2000, random_state=task["seed"])
    regress = lambda: Ridge(alpha=1.0, random_state=task["seed"])
elif numbers:  # the numeric columns, gradient boosting
    x_train, x_test = train[numbers].to_numpy(float), test[numbers].to_numpy(float)
    classify = lambda: HistGradientBoostingClassifier(random_state=task["seed"])
    regress = lambda: HistGradientBoostingRegressor(random_state=task["seed"])
else:
    sys.exit("no features this program understands")
out = pd.DataFrame({idc: test[idc]})
for target in targets:
    y = train[target]
    if task["kind"] == "probability":
        out[target] = classify().fit(x_train, y).predict_proba(x_test)[:, 1]
    elif task["kind"] in ("label", "integer") and y.nunique() <= 50:
        out[target] = classify().fit(x_train, y).predict(x_test)
    else:  # a positive regression target is fitted on log1p (RMSLE-friendly), else as it is
        log = bool((y >= 0).all())
        pred = regress().fit(x_train, np.log1p(y) if log else y).predict(x_test)
        out[target] = np.expm1(pred) if log else pred
out = out.set_index(idc).loc[sample[idc]].reset_index()  # the sample's row order
out.to_csv("submission/submission.csv", index=False)
print(f"wrote submission/submission.csv: {len(out)} rows")
'''


class MyPolicy:
    """Train a small model, validate, fall back to the sample submission, submit."""

    def __init__(self, seed: int = 0, max_text_features: int = 50_000) -> None:
        self.seed = seed
        self.max_text_features = max_text_features
        self.plan: list = []

    def reset(self, obs: dict, info: dict) -> None:
        sub = info["submission"]
        task = {"id_column": sub["id_column"], "targets": sub["targets"], "kind": sub["kind"],
                "sample": sub["sample"], "seed": self.seed, "max_text_features": self.max_text_features}
        self.sample = sub["sample"]
        self.plan = [
            {"type": "shell", "code": f"mkdir -p code && cat > code/train.py <<'EOF'\n{TRAIN}EOF"},
            {"type": "shell", "code": f"python3 code/train.py {_quote(json.dumps(task))}", "timeout": 600},
            {"type": "validate"},
        ]

    def act(self, obs: dict, info: dict) -> dict:
        if obs["action"] == "validate" and obs["stdout"] != "valid":  # the fallback: always a valid file
            self.plan = [{"type": "shell", "code": f"cp data/{self.sample} submission/submission.csv"}]
        return self.plan.pop(0) if self.plan else {"type": "submit"}


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
