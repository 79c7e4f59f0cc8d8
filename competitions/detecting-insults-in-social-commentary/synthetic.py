"""Synthetic raw data for detecting-insults-in-social-commentary (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import binary, texts, unsplit_recipe, write_csv

PUBLIC = frozenset({"sample_submission_null.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"gold_submission.csv", "test.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(4)
    comments = [f'"{t}\\xa0"' for t in texts(rng, 60)]
    dates = [f"201206{10 + i % 20:02d}123456Z" if i % 5 else "" for i in range(60)]
    write_csv(pd.DataFrame({"Insult": binary(rng, 40), "Date": dates[:40], "Comment": comments[:40]}),
              raw / "train.csv")
    test = pd.DataFrame({"Insult": binary(rng, 20), "Date": dates[40:], "Comment": comments[40:]})
    test.loc[19, "Comment"] = test.loc[18, "Comment"]  # Kaggle's test set repeats a few comments
    write_csv(test.assign(Usage=["PublicTest", "PrivateTest"] * 10), raw / "test_with_solutions.csv")
    write_csv(test.drop(columns=["Insult"]).assign(id=range(1, 21))[["id", "Date", "Comment"]], raw / "test.csv")
    write_csv(test.assign(Insult=0), raw / "sample_submission_null.csv")


ids_from_answers, expected_test_ids = unsplit_recipe("test_with_solutions.csv", "Comment")
