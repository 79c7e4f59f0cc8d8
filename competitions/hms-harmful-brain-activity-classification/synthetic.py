"""Synthetic raw data for hms-harmful-brain-activity-classification (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import folder_module, held_out, image_bytes, write_csv

PUBLIC = frozenset({"example_figures", "sample_submission.csv", "test.csv", "test_eegs", "test_spectrograms",
                    "train.csv", "train_eegs", "train_spectrograms"})
PRIVATE = frozenset({"gold_submission.csv", "test.csv"})
VOTES = ["seizure_vote", "lpd_vote", "gpd_vote", "lrda_vote", "grda_vote", "other_vote"]
CLASSES = ["Seizure", "LPD", "GPD", "LRDA", "GRDA", "Other"]
ELECTRODES = ["Fp1", "F3", "C3", "P3", "F7", "T3", "T5", "O1", "Fz", "Cz", "Pz", "Fp2", "F4", "C4", "P4", "F8",
              "T4", "T6", "O2", "EKG"]
BINS = [f"{region}_{hz}" for region in ("LL", "RL", "LP", "RP") for hz in ("0.59", "0.78", "0.98")]


def _windows(rng: np.random.Generator, eeg: int, spectrogram: int, patient: int, label: int) -> list[dict]:
    rows = []
    for sub in range(int(rng.integers(1, 4))):  # several labelled windows of one EEG, each its own votes
        votes = rng.integers(0, 6, 6) * (rng.random(6) < 0.5)
        votes[int(rng.integers(6))] += 1
        rows.append({"eeg_id": eeg, "eeg_sub_id": sub, "eeg_label_offset_seconds": 2.0 * sub,
                     "spectrogram_id": spectrogram, "spectrogram_sub_id": sub,
                     "spectrogram_label_offset_seconds": 2.0 * sub, "label_id": label + sub, "patient_id": patient,
                     "expert_consensus": CLASSES[int(np.argmax(votes))],
                     **dict(zip(VOTES, votes.tolist(), strict=True))})
    return rows


def _recordings(raw: Path, part: str, eegs: list[int], spectrograms: list[int], seed: int) -> None:
    parquet = folder_module("hms-harmful-brain-activity-classification", "parquet.py")
    rng = np.random.default_rng(seed)
    for folder, ids, columns in ((f"{part}_eegs", eegs, ELECTRODES), (f"{part}_spectrograms", spectrograms, BINS)):
        (raw / folder).mkdir(parents=True, exist_ok=True)
        for i in ids:
            data = {c: rng.normal(0, 30, 8).astype(np.float32) for c in columns}
            if folder.endswith("spectrograms"):
                data = {"time": np.arange(1.0, 17.0, 2.0), **data}
            (raw / folder / f"{i}.parquet").write_bytes(parquet.parquet_bytes(data))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(47)
    rows, eegs, spectrograms = [], [], []
    for s in range(14):
        spectrogram = int(rng.integers(10**6, 2 * 10**9))
        spectrograms.append(spectrogram)
        for _ in range(int(rng.integers(1, 3))):
            eeg = int(rng.integers(10**6, 4 * 10**9))
            eegs.append(eeg)
            rows += _windows(rng, eeg, spectrogram, 10000 + s, int(rng.integers(10**8, 4 * 10**9)))
    write_csv(pd.DataFrame(rows), raw / "train.csv")
    test = pd.DataFrame({"spectrogram_id": [853520], "eeg_id": [3911565283], "patient_id": [6885]})
    write_csv(test, raw / "test.csv")
    write_csv(test[["eeg_id"]].assign(**dict.fromkeys(VOTES, 1 / 6)), raw / "sample_submission.csv")
    _recordings(raw, "train", eegs, spectrograms, 1)
    _recordings(raw, "test", [3911565283], [853520], 2)
    (raw / "example_figures").mkdir()
    for name in CLASSES[:2]:
        (raw / "example_figures" / f"{name}.png").write_bytes(image_bytes("PNG", (6, 4)))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["label_id"])


def expected_test_ids(raw: Path) -> list[str]:
    """The windows of the held-out spectrograms (distinct ids in order of appearance), in raw order."""
    train = pd.read_csv(raw / "train.csv")
    picked = set(held_out(list(dict.fromkeys(train["spectrogram_id"])), 0.1))
    return [str(v) for v in train.loc[train["spectrogram_id"].isin(picked), "label_id"]]


def _votes(answers: pd.DataFrame) -> np.ndarray:
    votes = answers[VOTES].astype(float).to_numpy()
    return votes / votes.sum(axis=1, keepdims=True)


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """The vote fractions of each window, in the answers' order."""
    return pd.DataFrame(_votes(answers), columns=VOTES).assign(eeg_id=answers["eeg_id"].to_numpy())[["eeg_id", *VOTES]]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Vote fractions mixed half and half with random distributions (some exactly 0 where votes are not)."""
    mixed = 0.5 * _votes(answers) + 0.5 * rng.dirichlet(np.ones(6), len(answers))
    mixed[::3, 0] = 0.0
    mixed /= mixed.sum(axis=1, keepdims=True)
    return pd.DataFrame(mixed, columns=VOTES).assign(eeg_id=answers["eeg_id"].to_numpy())[["eeg_id", *VOTES]]
