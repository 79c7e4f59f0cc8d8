"""5,000 digits become PNG files: ids are a seeded shuffle (the raw file is sorted by label), then
train_test_split(test_size=0.2, random_state=0) as MLE-bench splits."""

import numpy as np
import pandas as pd

from mle_env.errors import PrerequisiteError
from mle_env.prepare.helpers import PrepareContext, split, write_csv


def prepare(ctx: PrepareContext) -> None:
    try:
        from PIL import Image
    except ImportError as e:
        raise PrerequisiteError("writing the digit images needs Pillow: pip install 'mle-env[images]'") from e
    raw = pd.read_csv(ctx.raw_file("mnist_5k.csv.gz"), header=None)
    pixels = raw.iloc[:, :-1].to_numpy(dtype=np.uint8).reshape(-1, 28, 28)
    labels = raw.iloc[:, -1].to_numpy()
    ids = np.array([f"{n:05d}" for n in np.random.default_rng(0).permutation(len(raw))])
    frame = pd.DataFrame({"id": ids, "label": labels, "row": np.arange(len(raw))})
    train, test = split(frame, test_size=0.2)
    for part, rows in (("train", train), ("test", test)):
        folder = ctx.public / part
        folder.mkdir()
        for image_id, row in zip(rows["id"], rows["row"], strict=True):
            Image.fromarray(pixels[row], mode="L").save(folder / f"{image_id}.png", optimize=False)
    write_csv(train[["id", "label"]], ctx.public / "train.csv")
    write_csv(test[["id", "label"]], ctx.private / "test.csv")
    write_csv(test[["id"]].assign(label=0), ctx.public / "sample_submission.csv")
