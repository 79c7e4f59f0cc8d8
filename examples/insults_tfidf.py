"""Write a TF-IDF + logistic-regression submission for detecting-insults-in-social-commentary.

    mle-env prepare insults && python examples/insults_tfidf.py && mle-env grade insults submission.csv
"""

import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from mle_env.paths import CompetitionPaths

public = CompetitionPaths("detecting-insults-in-social-commentary").public
train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
model = make_pipeline(TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), sublinear_tf=True, min_df=2),
                      LogisticRegression(C=4, max_iter=2000))
model.fit(train["Comment"], train["Insult"])
test.insert(0, "Insult", model.predict_proba(test["Comment"])[:, 1])
test.to_csv("submission.csv", index=False)
print(f"wrote submission.csv ({len(test)} rows)")
