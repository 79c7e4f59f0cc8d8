"""240 test sequences (10 % of train, ``int`` rounded down) are drawn with pandas ``sample(random_state=0)``
among the sequences with ``SN_filter`` > 0, as MLE-bench draws them; both parts keep the raw order. The
answers list every position of every test sequence: the five targets and ``keep`` = True for the first
``seq_scored`` positions, 0.0 and False after."""

from pathlib import Path

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, find_raw, write_csv

TARGETS = ["reactivity", "deg_Mg_pH10", "deg_pH10", "deg_Mg_50C", "deg_50C"]
FLOATS = {"float_format": "%.10f"}


def answers_of(test: pd.DataFrame) -> pd.DataFrame:
    """One row per position of each test sequence (``id_seqpos`` = ``<id>_<position>``)."""
    rows = []
    for seq in test.itertuples(index=False):
        scored, length = seq.seq_scored, seq.seq_length
        for j in range(length):
            values = [getattr(seq, t)[j] if j < scored else 0.0 for t in TARGETS]
            rows.append([f"{seq.id}_{j}", *values, j < scored])
    return pd.DataFrame(rows, columns=["id_seqpos", *TARGETS, "keep"])


def write_json_lines(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` as JSON lines, one record per row, as MLE-bench writes it."""
    frame.to_json(path, orient="records", lines=True)


def prepare(ctx: PrepareContext) -> None:
    train = pd.read_json(find_raw(ctx, "train.json"), lines=True)
    test_columns = pd.read_json(find_raw(ctx, "test.json"), lines=True).columns
    picked = train[train["SN_filter"] > 0].sample(n=int(len(train) * 0.1), random_state=0).index
    in_test = train.index.isin(picked)
    new_train, new_test = train[~in_test].copy(), train[in_test].copy()
    answers = answers_of(new_test)
    write_csv(answers, ctx.private / "test.csv", **FLOATS)
    write_json_lines(new_train.assign(index=range(len(new_train))), ctx.public / "train.json")
    write_json_lines(new_test[test_columns].assign(index=range(len(new_test))), ctx.public / "test.json")
    write_csv(answers[["id_seqpos"]].assign(**dict.fromkeys(TARGETS, 0.0)), ctx.public / "sample_submission.csv",
              **FLOATS)
