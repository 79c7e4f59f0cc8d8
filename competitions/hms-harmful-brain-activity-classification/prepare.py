"""Whole spectrograms (with their EEGs and windows) go to train or test: a split over the distinct
``spectrogram_id`` in order of appearance, rows in raw order, as MLE-bench splits them. The public test
keeps only ``spectrogram_id``, ``eeg_id``, ``patient_id``; the EEG and spectrogram files follow their
rows; ``private/gold_submission.csv`` holds the votes divided by their row sums."""

from mle_env.prepare.helpers import PrepareContext, copy_files, find_raw, raw_folder, read_csv, write_csv
from mle_env.prepare.splits import group_split

VOTES = ["seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote"]


def prepare(ctx: PrepareContext) -> None:
    train, test = group_split(read_csv(find_raw(ctx, "train.csv")), "spectrogram_id", 0.1, random_state=0,
                              key_order="appearance", row_order="raw")
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(test[["spectrogram_id", "eeg_id", "patient_id"]], ctx.public / "test.csv")
    gold = test[["eeg_id", *VOTES]].copy()
    gold[VOTES] = gold[VOTES].div(gold[VOTES].sum(axis=1), axis=0)
    write_csv(gold, ctx.private / "gold_submission.csv")
    write_csv(gold.assign(**dict.fromkeys(VOTES, 1 / len(VOTES))), ctx.public / "sample_submission.csv")
    copy_files(["example_figures"], ctx.raw, ctx.public, ctx.may_link(ctx.raw))
    for kind, key in (("eegs", "eeg_id"), ("spectrograms", "spectrogram_id")):
        source = raw_folder(ctx, f"train_{kind}")
        for part, name in ((train, "train"), (test, "test")):
            files = [f"{v}.parquet" for v in part[key].unique()]
            copy_files(files, source, ctx.public / f"{name}_{kind}", ctx.may_link(source))
