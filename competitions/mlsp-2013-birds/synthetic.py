"""Synthetic raw data for mlsp-2013-birds (see mle_env.competition.synthetic)."""

from pathlib import Path
from zipfile import ZipFile

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, csv_text, image_bytes, wav_bytes, write_zip

PUBLIC = frozenset({"essential_data", "sample_submission.csv", "supplemental_data"})
PRIVATE = frozenset({"answers.csv"})
BASE = "mlsp_contest_dataset/"


def generate(raw: Path) -> None:
    rng = np.random.default_rng(10)
    n = 40
    filenames = [f"PC{1 + i % 4}_2009060{1 + i % 9}_0500{i:02d}_0010" for i in range(n)]
    folds = np.array([0] * 30 + [1] * 10)
    rng.shuffle(folds)
    label_lines = ["rec_id,[labels]"]
    for rec, fold in enumerate(folds):
        heard = sorted(rng.choice(19, rng.integers(0, 4), replace=False)) if fold == 0 else None
        label_lines.append(f"{rec},?" if heard is None else ",".join(map(str, [rec, *heard])))
    histogram = ["rec_id,[histogram of segment features]"] + [
        ",".join([str(rec), *(f"{v:.6f}" for v in rng.random(5))]) for rec in range(n)]
    segments = ["rec_id,segment_id,[feature vector]"] + [
        ",".join([str(rec), str(s), *(f"{v:.4f}" for v in rng.random(4))]) for rec in range(0, n, 2) for s in range(2)]
    rectangles = ["rec_id,[segment_id,min_x,max_x,min_y,max_y]"] + [f"{rec},0,1,9,2,30," for rec in range(0, n, 3)]
    members: dict[str, bytes | str] = {
        f"{BASE}essential_data/CVfolds_2.txt": csv_text(pd.DataFrame({"rec_id": range(n), "fold": folds})),
        f"{BASE}essential_data/rec_id2filename.txt": csv_text(pd.DataFrame({"rec_id": range(n),
                                                                            "filename": filenames})),
        f"{BASE}essential_data/rec_labels_test_hidden.txt": "\n".join(label_lines) + "\n",
        f"{BASE}essential_data/species_list.txt": "class_id,code,species\n"
        + "".join(f"{i},SP{i:02d},Species {i}\n" for i in range(19)),
        f"{BASE}supplemental_data/histogram_of_segments.txt": "\n".join(histogram) + "\n",
        f"{BASE}supplemental_data/segment_features.txt": "\n".join(segments) + "\n",
        f"{BASE}supplemental_data/segment_rectangles.txt": "\n".join(rectangles) + "\n",
        f"{BASE}supplemental_data/segment_clusters.bmp": image_bytes("BMP", (6, 6)),
        f"{BASE}supplemental_data/segment_mosaic.bmp": image_bytes("BMP", (6, 6)),
    }
    bmp = image_bytes("BMP", (8, 4), "L")
    for i, name in enumerate(filenames):
        members[f"{BASE}essential_data/src_wavs/{name}.wav"] = wav_bytes()
        for folder in ("filtered_spectrograms", "spectrograms", "supervised_segmentation"):
            members[f"{BASE}supplemental_data/{folder}/{name}.bmp"] = bmp
        if i % 7 == 0:
            members[f"{BASE}supplemental_data/segmentation_examples/{name}.bmp"] = bmp
    write_zip(raw / "mlsp_contest_dataset.zip", members)


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "Id")


def expected_test_ids(raw: Path) -> list[str]:
    """A 20 % sample (pandas, seed 0) of the labelled fold's recordings, each with its 19 species: rec * 100 + s."""
    with ZipFile(raw / "mlsp_contest_dataset.zip") as zf:
        folds = pd.read_csv(zf.open(f"{BASE}essential_data/CVfolds_2.txt"))
    folds = folds[folds["fold"] == 0].reset_index(drop=True)
    picked = sorted(folds.sample(frac=0.2, random_state=0).index)
    return [str(rec * 100 + s) for rec in picked for s in range(19)]
