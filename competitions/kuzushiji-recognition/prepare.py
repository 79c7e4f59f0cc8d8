"""Kaggle's labelled pages split 90/10 with ``split_csv`` (the page images re-zipped flat into
``train_images.zip`` / ``test_images.zip``), plus MLE-bench's ``private/gold_submission.csv``: each true
box "label x y w h" becomes the point "label x+1 y+1", just inside the box."""

from mle_env.prepare.helpers import PrepareContext, read_csv, split_csv, write_csv


def gold_labels(labels: object) -> str:
    """The gold prediction of one page: "label x+1 y+1" per box (x, y integers); "" for an empty page
    (MLE-bench's script fails there: see the known issue in competition.toml)."""
    if not isinstance(labels, str) or not labels.strip():
        return ""
    tokens = labels.split()
    return " ".join(f"{tokens[k]} {int(tokens[k + 1]) + 1} {int(tokens[k + 2]) + 1}" for k in range(0, len(tokens), 5))


def prepare(ctx: PrepareContext) -> None:
    split_csv(ctx, **ctx.params)
    test = read_csv(ctx.private / "test.csv")
    write_csv(test.assign(labels=[gold_labels(v) for v in test["labels"]]), ctx.private / "gold_submission.csv")
