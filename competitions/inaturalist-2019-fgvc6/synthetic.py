"""Synthetic raw data for inaturalist-2019-fgvc6 (see mle_env.competition.synthetic).

Kaggle ships ``train_val2019.tar.gz`` (gzip tar of ``train_val2019/<supercategory>/<category>/<hash>.jpg``,
the training and the validation images), ``train2019.json`` and ``val2019.json`` (COCO-style: annotations,
categories, images, info, licenses), ``test2019.json`` (images, info, licenses), ``test2019.tar.gz``
(``test2019/<hash>.jpg``) and ``kaggle_sample_submission.csv`` (id, predicted).
"""

import hashlib
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, image_bytes, write_csv
from mle_env.competition.synthetic_coco import labelled_items, test_items

PUBLIC = frozenset({"kaggle_sample_submission.csv", "test2019.json", "test2019.tar.gz", "train2019.json",
                    "train_val2019.tar.gz", "val2019.json"})
PRIVATE = frozenset({"answers.csv"})
SUPER = ["Plants", "Insects", "Birds", "Fungi"]
LICENSES = [{"id": 1, "name": "Attribution-NonCommercial License", "url": "http://creativecommons.org/licenses/by-nc/4.0/"}]
INFO = {"contributor": "iNaturalist 2019", "date_created": "2019-03-01", "version": "1.0", "year": 2019}


def _image(image_id: int, name: str) -> dict:
    return {"file_name": name, "height": 800, "id": image_id, "license": 1, "rights_holder": "someone",
            "width": 600}


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1551398400
            tar.addfile(info, io.BytesIO(data))


def generate(raw: Path) -> None:
    sizes = {400: 7, 3: 1, 220: 2, 1: 4, 46: 5, 901: 3, 12: 14, 7: 6}
    items = labelled_items(19, sizes)
    categories = sorted(sizes)
    members, images, annotations = {}, [], []
    for n, (category, k) in enumerate(items):
        image_id = 2000 + 3 * k  # ids in raw order (iNaturalist numbers its images 0.. in file order)
        digest = hashlib.md5(f"train{k}".encode()).hexdigest()
        name = f"train_val2019/{SUPER[category % 4]}/{category}/{digest}.jpg"
        members[name] = image_bytes("JPEG", (8, 6), seed=n)
        images.append(_image(image_id, name))
        annotations.append({"category_id": category, "id": image_id, "image_id": image_id})
    val_images, val_annotations = [], []
    for k, category in enumerate(categories[:3]):
        name = f"train_val2019/{SUPER[category % 4]}/{category}/{hashlib.md5(f'val{k}'.encode()).hexdigest()}.jpg"
        members[name] = image_bytes("JPEG", (8, 6), seed=100 + k)
        val_images.append(_image(9000 + k, name))
        val_annotations.append({"category_id": category, "id": 9000 + k, "image_id": 9000 + k})
    order = np.random.default_rng(5).permutation(len(members))  # the archive lists files in its own order
    names = list(members)
    _tar(raw / "train_val2019.tar.gz", {names[i]: members[names[i]] for i in order})
    cats = [{"class": "c", "family": "f", "genus": "g", "id": c, "kingdom": SUPER[c % 4], "name": str(c),
             "order": "o", "phylum": "p"} for c in categories]
    for name, imgs, anns in (("train2019", images, annotations), ("val2019", val_images, val_annotations)):
        data = {"annotations": anns, "categories": cats, "images": imgs, "info": INFO, "licenses": LICENSES}
        (raw / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    test_names = [f"test2019/{hashlib.md5(f'test{k}'.encode()).hexdigest()}.jpg" for k in range(3)]
    (raw / "test2019.json").write_text(json.dumps({"images": [_image(k, n) for k, n in enumerate(test_names)],
                                                   "info": INFO, "licenses": LICENSES}), encoding="utf-8")
    _tar(raw / "test2019.tar.gz", {n: image_bytes("JPEG", (8, 6), seed=200 + k) for k, n in enumerate(test_names)})
    write_csv(pd.DataFrame({"id": range(3), "predicted": "1 2 3 4 5"}), raw / "kaggle_sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "id")


def expected_test_ids(raw: Path) -> list[str]:
    """12 % of each category (1 image: none; 2-4: the last), shuffled; image ids kept."""
    metadata = json.loads((raw / "train2019.json").read_text(encoding="utf-8"))
    return [str(image["id"]) for _, image in test_items(metadata, "id", 0.12, small_rule=True)]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Top-5 style cells: the true label first in most rows, another label first in about a third."""
    labels = sorted({int(v) for v in answers["predicted"]})
    rows = []
    for truth in answers["predicted"]:
        first = int(truth) if rng.random() > 0.35 else int(rng.choice(labels))
        rest = rng.choice(labels, 3)
        rows.append(" ".join(str(v) for v in [first, *rest]))
    return pd.DataFrame({"id": answers["id"], "predicted": rows})
