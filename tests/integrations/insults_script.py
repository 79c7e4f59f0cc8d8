"""A model-free script that medals detecting-insults-in-social-commentary, for the adapter tests: the
actions a competent agent would take, as tool calls (name, arguments) and as environment actions."""

from __future__ import annotations

from typing import Any

COMPETITION = "detecting-insults-in-social-commentary"

TRAIN_CODE = """\
import os
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

train, test = pd.read_csv("data/train.csv"), pd.read_csv("data/test.csv")
model = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), sublinear_tf=True, min_df=2),
                      LogisticRegression(C=4, max_iter=2000))
model.fit(train["Comment"], train["Insult"])
test.insert(0, "Insult", model.predict_proba(test["Comment"])[:, 1])
os.makedirs("submission", exist_ok=True)
test.to_csv("submission/submission.csv", index=False)
print("wrote", len(test), "rows")
"""

TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("shell", {"code": "ls data && head -c 300 data/train.csv"}),
    ("python", {"code": TRAIN_CODE}),
    ("validate", {}),
    ("submit", {}),
]

ACTIONS: list[dict[str, Any]] = [{"type": name, **arguments} for name, arguments in TOOL_CALLS]
