"""Synthetic raw data for facebook-recruiting-iii-keyword-extraction (see mle_env.competition.synthetic)."""

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import csv_text, split_recipe, texts, write_csv, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"test.csv"})
TAGS = ["python", "regex", "linux", "c++", "java", "javascript", "php", "c#", "sql", "html", "css", ".net",
        "android", "iphone", "jquery", "mysql", "asp.net", "windows", "ruby-on-rails", "objective-c"]


def _questions(rng: np.random.Generator, first_id: int, n: int) -> pd.DataFrame:
    bodies = [f"<p>{t}</p>\n\n<pre><code>x = {i}\n</code></pre>\n" for i, t in enumerate(texts(rng, n))]
    return pd.DataFrame({"Id": range(first_id, first_id + n), "Title": [f"How do I fix error {rng.integers(999)}?"
                                                                        for _ in range(n)], "Body": bodies})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    train = _questions(rng, 1, 70)
    train["Tags"] = [" ".join(rng.choice(TAGS, int(rng.integers(1, 6)), replace=False)) for _ in range(70)]
    train.loc[[40, 55], ["Title", "Body", "Tags"]] = train.loc[[3, 8], ["Title", "Body", "Tags"]].to_numpy()
    test = _questions(rng, 6034196, 5)
    quoted = {"quoting": csv.QUOTE_ALL}
    write_zip(raw / "Train.zip", {"Train.csv": csv_text(train, **quoted)})
    write_zip(raw / "Test.zip", {"Test.csv": csv_text(test, **quoted)})
    write_csv(test[["Id"]].assign(Tags="javascript c# python php java"), raw / "SampleSubmission.csv", **quoted)


ids_from_answers, expected_test_ids = split_recipe("Id", 0.1, "Train.zip")
