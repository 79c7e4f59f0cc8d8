"""Synthetic raw data for rsna-2022-cervical-spine-fracture-detection (see mle_env.competition.synthetic)."""

import random
import struct
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import dicom_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "segmentations", "test.csv", "test_images", "train.csv",
                    "train_bounding_boxes.csv", "train_images"})
PRIVATE = frozenset({"answers.csv"})
TYPES = ["patient_overall", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]


def nifti_bytes(seed: int) -> bytes:
    """A NIfTI-1 file (348-byte header, 4 bytes of extension flags, uint8 voxels) of a 4 x 4 x 2 label volume."""
    dims = struct.pack("<8h", 3, 4, 4, 2, 1, 1, 1, 1)
    header = bytearray(348)
    header[0:4] = struct.pack("<i", 348)
    header[40:56] = dims
    header[70:74] = struct.pack("<hh", 2, 8)  # datatype uint8, 8 bits per voxel
    header[76:108] = struct.pack("<8f", 1, 1, 1, 1, 1, 1, 1, 1)
    header[108:112] = struct.pack("<f", 352.0)  # voxel data offset
    header[344:348] = b"n+1\0"
    voxels = np.random.default_rng(seed).integers(0, 8, 32, dtype=np.uint8)
    return bytes(header) + b"\0\0\0\0" + voxels.tobytes()


def generate(raw: Path) -> None:
    rng = np.random.default_rng(73)
    uids = [f"1.2.826.0.1.3680043.{int(n)}" for n in rng.choice(32_000, 64, replace=False)]
    labels = (rng.random((60, 7)) < 0.15).astype(int)
    train = pd.DataFrame(labels, columns=TYPES[1:])
    train.insert(0, "patient_overall", labels.max(axis=1))
    train.insert(0, "StudyInstanceUID", uids[:60])
    write_csv(train, raw / "train.csv")
    boxed = [uids[k] for k in range(0, 60, 3)]  # 20 studies with boxes, 15 with segmentations, 6 with both
    boxes = pd.DataFrame([{"StudyInstanceUID": u, "x": float(rng.integers(100, 300)),
                           "y": float(rng.integers(100, 300)), "width": float(rng.integers(20, 80)),
                           "height": float(rng.integers(20, 80)), "slice_number": int(s)}
                          for u in boxed for s in sorted(rng.choice(200, 2, replace=False))])
    write_csv(boxes, raw / "train_bounding_boxes.csv")
    for n, k in enumerate(list(range(0, 36, 6)) + [1, 5, 7, 11, 13, 17, 19, 23, 25]):
        (raw / "segmentations").mkdir(exist_ok=True)
        (raw / "segmentations" / f"{uids[k]}.nii").write_bytes(nifti_bytes(n))
    test = pd.DataFrame([(u, t, f"{u}_{t}") for u in uids[60:] for t in TYPES[1:] + TYPES[:1]],
                        columns=["StudyInstanceUID", "prediction_type", "row_id"])
    write_csv(test, raw / "test.csv")
    write_csv(test[["row_id"]].assign(fractured=0.5), raw / "sample_submission.csv")
    for folder, studies in (("train_images", uids[:60]), ("test_images", uids[60:])):
        for k, uid in enumerate(studies):
            (raw / folder / uid).mkdir(parents=True)
            for s in range(1, 3 + k % 2):
                (raw / folder / uid / f"{s}.dcm").write_bytes(dicom_bytes(f"{uid}.{s}"))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["row_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """MLE-bench's draw (random.Random(0): overlap, segmentation-only, box-only, then others, 10 % of each);
    the rest melted type by type, studies in raw order."""
    studies = list(pd.read_csv(raw / "train.csv")["StudyInstanceUID"])
    boxed = sorted(set(pd.read_csv(raw / "train_bounding_boxes.csv")["StudyInstanceUID"]))
    segmented = sorted(p.name[:-4] for p in (raw / "segmentations").iterdir())
    rng = random.Random(0)
    both = [u for u in boxed if u in segmented]
    train = rng.sample(both, round(len(both) * 0.1))
    first = len(train)
    train += rng.sample([u for u in segmented if u not in both], round(len(segmented) * 0.1) - first)
    train += rng.sample([u for u in boxed if u not in both], round(len(boxed) * 0.1) - first)
    train += rng.sample([u for u in studies if u not in train], round(len(studies) * 0.1) - len(train))
    test = [u for u in studies if u not in train]
    return [f"{u}_{t}" for t in TYPES for u in test]
