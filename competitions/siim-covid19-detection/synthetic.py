"""Synthetic raw data for siim-covid19-detection (see mle_env.competition.synthetic).

Kaggle ships ``train_study_level.csv`` (``id`` = "<study>_study" and four 0/1 class columns),
``train_image_level.csv`` (``id`` = "<image>_image", ``boxes`` as a Python-literal list of dicts or empty,
``label`` = "opacity 1 x_min y_min x_max y_max ..." or "none 1 0 0 1 1", ``StudyInstanceUID``),
``train/<study>/<series>/<image>.dcm``, ``test/`` in the same layout and ``sample_submission.csv``.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import dicom_bytes, held_out, hex_ids, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "train", "train_image_level.csv", "train_study_level.csv"})
PRIVATE = frozenset({"test.csv"})
CLASS_COLUMNS = ["Negative for Pneumonia", "Typical Appearance", "Indeterminate Appearance", "Atypical Appearance"]
STUDY_CLASSES = ["negative", "typical", "indeterminate", "atypical"]


def _image_label(rng: np.random.Generator, negative: bool) -> tuple[object, str]:
    """(boxes, label) of one image: no box for a negative study, else one to three opacity boxes."""
    if negative:
        return np.nan, "none 1 0 0 1 1"
    boxes, groups = [], []
    for _ in range(int(rng.integers(1, 4))):
        x, y = (float(v) for v in np.round(rng.uniform(100, 2000, 2), 5))
        w, h = (float(v) for v in np.round(rng.uniform(200, 900, 2), 5))
        boxes.append({"x": x, "y": y, "width": w, "height": h})
        groups.append(f"opacity 1 {x} {y} {round(x + w, 5)} {round(y + h, 5)}")
    return str(boxes), " ".join(groups)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    ids = hex_ids(rng, 160, 12)
    studies, series, images = ids[:44], ids[44:88], ids[88:]
    classes = rng.integers(0, 4, 40)
    study_rows, image_rows, files = [], [], []
    image_ids = iter(images)
    for n, study in enumerate(studies[:40]):
        study_rows.append({"id": f"{study}_study", **{c: int(classes[n] == k) for k, c in enumerate(CLASS_COLUMNS)}})
        for _ in range(1 + n % 3 // 2):
            image = next(image_ids)
            boxes, label = _image_label(rng, classes[n] == 0)
            image_rows.append({"id": f"{image}_image", "boxes": boxes, "label": label, "StudyInstanceUID": study})
            files.append(("train", study, series[n], image))
    write_csv(pd.DataFrame(study_rows), raw / "train_study_level.csv")
    write_csv(pd.DataFrame(image_rows), raw / "train_image_level.csv")
    for n, study in enumerate(studies[40:]):  # Kaggle's own unlabelled test studies
        files.append(("test", study, series[40 + n], next(image_ids)))
    for k, (part, study, serie, image) in enumerate(files):
        path = raw / part / study / serie / f"{image}.dcm"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(dicom_bytes(f"1.2.826.0.1.{k}"))
    test_ids = [f"{s}_study" for s in studies[40:]] + [f"{i}_image" for _, _, _, i in files[-4:]]
    guesses = ["negative 1 0 0 1 1"] * 4 + ["none 1 0 0 1 1"] * 4
    write_csv(pd.DataFrame({"id": test_ids, "PredictionString": guesses}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["id"])


def expected_test_ids(raw: Path) -> list[str]:
    """The held-out studies (rows of the study table, sorted by id), then their images sorted by id."""
    studies = sorted(held_out(pd.read_csv(raw / "train_study_level.csv"), 0.1)["id"])
    images = pd.read_csv(raw / "train_image_level.csv")
    return studies + sorted(images.loc[(images["StudyInstanceUID"] + "_study").isin(studies), "id"])


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Study rows: the true class or another, sometimes two classes, random confidences. Image rows: true
    boxes jittered (some beyond the IoU threshold), some dropped, spurious boxes and "none" guesses added."""
    rows = []
    for cell in answers["PredictionString"]:
        tokens = cell.split()
        groups = [tokens[k:k + 6] for k in range(0, len(tokens), 6)]
        out = []
        for label, _, *box in groups:
            conf = round(float(rng.uniform(0.05, 1)), 3)
            if label in STUDY_CLASSES:
                if rng.random() < 0.4:
                    label = STUDY_CLASSES[int(rng.integers(4))]
                out.append(f"{label} {conf} 0 0 1 1")
                if rng.random() < 0.3:
                    out.append(f"{STUDY_CLASSES[int(rng.integers(4))]} {round(conf / 2, 3)} 0 0 1 1")
            elif label == "none":
                out.append(f"none {conf} 0 0 1 1" if rng.random() < 0.7 else f"opacity {conf} 10 20 300 400")
            elif rng.random() < 0.8:
                x1, y1, x2, y2 = (float(v) for v in box)
                shift = float(rng.choice([0.05, 0.4])) * (x2 - x1)
                out.append(f"opacity {conf} {x1 + shift:.2f} {y1:.2f} {x2 + shift:.2f} {y2:.2f}")
        if groups[0][0] not in STUDY_CLASSES and rng.random() < 0.3:
            out.append(f"opacity {round(float(rng.uniform(0, 0.5)), 3)} 50 60 500 700")
        rows.append(" ".join(out))
    return pd.DataFrame({"id": answers["id"], "PredictionString": rows})
