"""Synthetic raw data for herbarium-2022-fgvc9 (see mle_env.competition.synthetic).

Kaggle ships ``train_metadata.json`` (annotations, categories, distances, genera, images, institutions,
licenses; an image's id is ``image_id``, "<category:05d>__<n:03d>"), ``train_images/<category // 100>/
<category % 100>/<image_id>.jpg``, ``test_metadata.json`` (a list of image records), ``test_images/<n //
1000>/test-<n:06d>.jpg`` and ``sample_submission.csv`` (Id, Predicted).
"""

import json
from pathlib import Path

import pandas as pd

from mle_env.competition.synthetic import image_bytes, write_csv
from mle_env.competition.synthetic_coco import NAMES, labelled_items, test_items

PUBLIC = frozenset({"sample_submission.csv", "test_images", "test_metadata.json", "train_images",
                    "train_metadata.json"})
PRIVATE = frozenset({"answers.csv"})
#: every category needs an image on both sides of an 80/20 split: two or more images
SIZES = {15504: 7, 3: 2, 220: 2, 1: 4, 46: 5, 9021: 3, 12: 11, 7: 6}


def generate(raw: Path) -> None:
    annotations, images, counts = [], [], {}
    for category, n in labelled_items(22, SIZES):
        counts[category] = counts.get(category, 0) + 1
        image_id = f"{category:05d}__{counts[category]:03d}"
        name = f"{category // 100:03d}/{category % 100:02d}/{image_id}.jpg"
        annotations.append({"category_id": category, "genus_id": n % 4, "image_id": image_id,
                            "institution_id": n % 3})
        images.append({"file_name": name, "image_id": image_id, "license": 0})
        (raw / "train_images" / name).parent.mkdir(parents=True, exist_ok=True)
        (raw / "train_images" / name).write_bytes(image_bytes("JPEG", (6, 9), seed=n))
    categories = [{"authors": "L.", "category_id": c, "family": "Fabaceae", "genus": NAMES[k].split()[0],
                   "species": NAMES[k].split()[1]} for k, c in enumerate(sorted(SIZES))]
    metadata = {"annotations": annotations, "categories": categories,
                "distances": [{"distance": 0.5, "genus_id_x": 0, "genus_id_y": 1}],
                "genera": [{"genus": NAMES[k].split()[0], "genus_id": k} for k in range(4)], "images": images,
                "institutions": [{"collection_code": f"I{k}", "institution_id": k} for k in range(3)],
                "licenses": [{"id": 0, "name": "CC BY", "url": "https://creativecommons.org/licenses/by/4.0/"}]}
    (raw / "train_metadata.json").write_text(json.dumps(metadata, ensure_ascii=False), encoding="utf-8")
    test = [{"file_name": f"000/test-{n:06d}.jpg", "image_id": str(n), "license": 0} for n in range(4)]
    for n, record in enumerate(test):
        (raw / "test_images" / record["file_name"]).parent.mkdir(parents=True, exist_ok=True)
        (raw / "test_images" / record["file_name"]).write_bytes(image_bytes("JPEG", (6, 9), seed=60 + n))
    (raw / "test_metadata.json").write_text(json.dumps(test), encoding="utf-8")
    write_csv(pd.DataFrame({"Id": range(4), "Predicted": 42}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """``<Id>:<category>`` per answer row (the ids alone are just 0, 1, ...)."""
    return [f"{i}:{c}" for i, c in zip(answers["Id"], answers["Predicted"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """Every category split 80/20 (no small-category rule), the held-out images shuffled and renumbered."""
    metadata = json.loads((raw / "train_metadata.json").read_text(encoding="utf-8"))
    held = test_items(metadata, "image_id", 0.2, small_rule=False)
    return [f"{n}:{annotation['category_id']}" for n, (annotation, _) in enumerate(held)]
