"""Kaggle's labelled phrases (tab-separated train.tsv, inside train.tsv.zip) split 70/30 into a new train
and test, row by row, as MLE-bench splits them (``split_csv`` reads and writes only comma-separated tables).

Public: ``train.tsv.zip`` (every column) and ``test.tsv.zip`` (without Sentiment), each holding one
tab-separated table named like the archive, and ``sampleSubmission.csv`` (every test PhraseId with
Sentiment 2). Private: ``answers.csv``, comma-separated, every column of the test rows.
"""

from mle_env.errors import PrepareError
from mle_env.prepare.helpers import PrepareContext, find_raw, read_csv, split, write_csv, write_zipped_csv

TARGET = "Sentiment"
COLUMNS = ["PhraseId", "SentenceId", "Phrase", TARGET]


def prepare(ctx: PrepareContext) -> None:
    old = read_csv(find_raw(ctx, "train.tsv"), sep="\t")
    if list(old.columns) != COLUMNS:
        raise PrepareError(f"train.tsv has columns {list(old.columns)}, not {COLUMNS}: is it Kaggle's file?")
    train, test = split(old, 0.3, 0)
    write_zipped_csv(train, ctx.public / "train.tsv.zip", ctx.scratch, sep="\t")
    write_zipped_csv(test.drop(columns=[TARGET]), ctx.public / "test.tsv.zip", ctx.scratch, sep="\t")
    write_csv(test[["PhraseId"]].assign(**{TARGET: 2}), ctx.public / "sampleSubmission.csv")
    write_csv(test, ctx.private / "answers.csv")
