"""chaii: 10 % of Kaggle's labelled questions become the test set, as MLE-bench splits them.

Public test.csv drops the answer (answer_text, answer_start); the answers file holds id and the answer
text under the submission's column name, PredictionString; the sample answers "dummy text" everywhere.
"""

from mle_env.prepare.helpers import PrepareContext, find_raw, read_csv, split, write_csv

ANSWER_COLUMNS = ["answer_text", "answer_start"]


def prepare(ctx: PrepareContext) -> None:
    train, test = split(read_csv(find_raw(ctx, "train.csv")), 0.1, random_state=0)
    answers = test[["id", "answer_text"]].set_axis(["id", "PredictionString"], axis=1)
    write_csv(train, ctx.public / "train.csv")
    write_csv(test.drop(columns=ANSWER_COLUMNS), ctx.public / "test.csv")
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(PredictionString="dummy text"), ctx.public / "sample_submission.csv")
