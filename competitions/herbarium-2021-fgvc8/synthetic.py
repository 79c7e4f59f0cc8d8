"""Synthetic raw data for herbarium-2021-fgvc8 (see mle_env.competition.synthetic).

Kaggle ships ``train/metadata.json`` (COCO-style: annotations, categories, images, info, licenses,
institutions), ``train/images/<category // 100>/<category % 100>/<image id>.jpg``, the unlabelled ``test/``
(metadata.json, images/) and ``sample_submission.csv``.
"""

import json
from pathlib import Path

import pandas as pd

from mle_env.competition.synthetic_coco import herbarium_raw, test_items

PUBLIC = frozenset({"sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"answers.csv"})


def generate(raw: Path) -> None:
    herbarium_raw(raw, "", "institutions", seed=21)


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """``<Id>:<category>`` per answer row (the ids alone are just 0, 1, ...)."""
    return [f"{i}:{c}" for i, c in zip(answers["Id"], answers["Predicted"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """The held-out images renumbered 0, 1, ... in their shuffled order, with their categories."""
    metadata = json.loads((raw / "train" / "metadata.json").read_text(encoding="utf-8"))
    held = test_items(metadata, "id", 0.2, small_rule=True)
    return [f"{n}:{annotation['category_id']}" for n, (annotation, _) in enumerate(held)]
