"""Synthetic raw data for alaska2-image-steganalysis (see mle_env.competition.synthetic).

Kaggle ships ``Cover/``, ``JMiPOD/``, ``JUNIWARD/`` and ``UERD/`` (the same file names ``00001.jpg``.. in
each: a cover JPEG and its three stego versions), ``Test/`` (``0001.jpg``..) and ``sample_submission.csv``
(``Id``, ``Label``). MLE-bench's test set has exactly 5,000 images, so the covers number a few more.
"""

import random
from pathlib import Path

import pandas as pd

from mle_env.competition.synthetic import image_bytes, write_csv

PUBLIC = frozenset({"Cover", "JMiPOD", "JUNIWARD", "Test", "UERD", "sample_submission.csv"})
PRIVATE = frozenset({"test.csv"})
FOLDERS = ["Cover", "JMiPOD", "JUNIWARD", "UERD"]
N_COVERS = 5_012


def generate(raw: Path) -> None:
    for f, folder in enumerate(FOLDERS):
        (raw / folder).mkdir()
        for n in range(1, N_COVERS + 1):  # every file distinct, so a test image's source can be told
            (raw / folder / f"{n:05d}.jpg").write_bytes(image_bytes("JPEG", (8, 8), seed=4 * n + f))
    (raw / "Test").mkdir()
    for n in range(1, 4):
        (raw / "Test" / f"{n:04d}.jpg").write_bytes(image_bytes("JPEG", (8, 8), seed=-n % 97 + 10**6))
    write_csv(pd.DataFrame({"Id": [f"{n:04d}.jpg" for n in range(1, 4)], "Label": 0}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """"<Id>:<Label>" per test image, in the answers' order."""
    return [f"{i}:{label}" for i, label in zip(answers["Id"], answers["Label"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """"<Id>:<Label>" of the 5,000 test images MLE-bench's recipe draws (see :func:`expected_test_sources`)."""
    return [f"{n:04d}.jpg:{label}" for n, (_, _, label) in enumerate(expected_test_sources(raw), 1)]


def expected_test_sources(raw: Path) -> list[tuple[str, str, int]]:
    """(folder, raw file name, label) of each test image in Id order: the sorted covers split with
    random_state 42, then one Python generator seeded 0 shuffles them and draws cover or stego version."""
    from sklearn.model_selection import train_test_split

    test = train_test_split(sorted(p.name for p in (raw / "Cover").glob("*.jpg")), test_size=5000, random_state=42)[1]
    draw = random.Random(0)
    draw.shuffle(test)
    sources = []
    for name in test:
        sources.append(("Cover", name, 0) if draw.choice([True, False]) else (draw.choice(FOLDERS[1:]), name, 1))
    return sources
