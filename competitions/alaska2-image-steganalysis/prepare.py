"""ALASKA2 as MLE-bench prepares it: 5,000 of Kaggle's cover images (with their three stego versions) are
set aside, the rest renumbered, and each test image is drawn at random from one version.

Split: the cover file paths, sorted, through ``train_test_split(test_size=5000, random_state=42)``. Train
images are renumbered ``00001.jpg``.. in the split's order, the same number in ``Cover/`` and each stego
folder. Test: ``random.seed(0)``, the test covers shuffled, then per image a fair coin (``random.choice
([True, False])``) keeps the cover (label 0) or ``random.choice`` picks one stego version (label 1); saved
as ``Test/0001.jpg``.. in shuffled order. Kaggle's own ``Test/`` and sample are not used.
"""

import random

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, place_files, raw_folder, split, write_csv

ALGORITHMS = ["JMiPOD", "JUNIWARD", "UERD"]


def prepare(ctx: PrepareContext) -> None:
    covers = sorted(raw_folder(ctx, "Cover").glob("*.jpg"))
    stego = {alg: raw_folder(ctx, alg) for alg in ALGORITHMS}
    train, test = split(covers, ctx.params["test_size"], ctx.params["random_state"])
    pairs = []
    for n, cover in enumerate(train, 1):
        pairs.append((cover, ctx.public / "Cover" / f"{n:05d}.jpg"))
        pairs += [(stego[alg] / cover.name, ctx.public / alg / f"{n:05d}.jpg") for alg in ALGORITHMS]
    draw = random.Random(ctx.params["test_seed"])  # the same sequence as MLE-bench's random.seed(0)
    draw.shuffle(test)
    ids, labels = [], []
    for n, cover in enumerate(test, 1):
        ids.append(f"{n:04d}.jpg")
        if draw.choice([True, False]):
            source, label = cover, 0
        else:
            source, label = stego[draw.choice(ALGORITHMS)] / cover.name, 1
        pairs.append((source, ctx.public / "Test" / ids[-1]))
        labels.append(label)
    for folder in ["Cover", "Test", *ALGORITHMS]:
        (ctx.public / folder).mkdir(parents=True, exist_ok=True)
    place_files(pairs, ctx.may_link(ctx.raw))
    answers = pd.DataFrame({"Id": ids, "Label": labels})
    write_csv(answers, ctx.private / "test.csv")
    write_csv(answers.assign(Label=0), ctx.public / "sample_submission.csv")
