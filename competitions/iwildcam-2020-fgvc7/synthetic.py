"""Synthetic raw data for iwildcam-2020-fgvc7 (see mle_env.competition.synthetic)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, write_csv, write_images

PUBLIC = frozenset({"iwildcam2020_megadetector_results.json", "iwildcam2020_test_information.json",
                    "iwildcam2020_train_annotations.json", "sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"answers.csv"})
CATEGORIES = [0, 1, 3, 8, 10, 72, 101, 372]


def _images(rng: np.random.Generator, n: int, locations: list[int], tag: str) -> list[dict]:
    ids = [f"{rng.integers(16**8):08x}-21bc-11ea-a13a-{tag}{i:08d}" for i in range(n)]
    return [{"seq_num_frames": 3, "location": int(rng.choice(locations)),
             "datetime": f"2013-06-0{1 + i % 9} 10:1{i % 10}:00.000", "id": image_id, "frame_num": 1 + i % 3,
             "seq_id": f"30048d32-7d42-11eb-8fb5-0242ac1c{i // 3:04d}",
             "width": 2048, "height": 1536, "file_name": f"{image_id}.jpg"} for i, image_id in enumerate(ids)]


def _dump(data: dict, path: Path) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def generate(raw: Path) -> None:
    rng = np.random.default_rng(2020)
    train = _images(rng, 70, [33, 115, 96, 88, 43, 20, 7, 150, 21, 45, 100, 61, 4, 9], "1373")
    test = _images(rng, 6, [300, 301], "2222")
    categories = [{"count": 5, "id": c, "name": f"species {c}"} for c in CATEGORIES]
    annotations = [{"id": f"a{n:05d}", "image_id": image["id"], "category_id": int(rng.choice(CATEGORIES))}
                   for n, image in enumerate(train)]
    info = {"version": "3.0", "description": "Camera trap data", "year": 2020, "contributor": "synthetic"}
    _dump({"annotations": annotations, "images": train, "categories": categories, "info": info},
          raw / "iwildcam2020_train_annotations.json")
    _dump({"images": test, "categories": categories, "info": {**info, "description": "test"}},
          raw / "iwildcam2020_test_information.json")
    detections = [{"detections": [{"category": "1", "bbox": [0.1, 0.2, 0.3, 0.4], "conf": 0.9}], "id": image["id"],
                   "max_detection_conf": 0.9} for image in train + test]
    _dump({"info": {"detector": "megadetector_v3"}, "images": detections,
           "detection_categories": {"1": "animal", "2": "person", "3": "vehicle"}},
          raw / "iwildcam2020_megadetector_results.json")
    write_images(raw / "train", [image["id"] for image in train], "JPEG", (8, 6))
    write_images(raw / "test", [image["id"] for image in test], "JPEG", (8, 6))
    write_csv(pd.DataFrame({"Id": [image["id"] for image in test], "Category": 0}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "Id")


def expected_test_ids(raw: Path) -> list[str]:
    """22 % of the locations (first-appearance order, seed 0), adjusted on image counts with MLE-bench's
    loops; the annotations of their images, in the annotations' order."""
    from sklearn.model_selection import train_test_split

    data = json.loads((raw / "iwildcam2020_train_annotations.json").read_text(encoding="utf-8"))
    images = pd.DataFrame(data["images"])
    train, test = train_test_split(images["location"].unique(), test_size=0.22, random_state=0)

    def share() -> float:
        held = images["location"].isin(test).sum()
        return held / (len(images) + held)

    while share() < 0.22:
        train, test = train[:-1], np.append(test, train[-1])
    while share() > 0.22:
        test, train = test[:-1], np.append(train, test[-1])
    held_ids = set(images.loc[images["location"].isin(test), "id"])
    return [a["image_id"] for a in data["annotations"] if a["image_id"] in held_ids]
