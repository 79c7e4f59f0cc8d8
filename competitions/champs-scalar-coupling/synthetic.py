"""Synthetic raw data for champs-scalar-coupling (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, write_csv

PUBLIC = frozenset({"dipole_moments.csv", "magnetic_shielding_tensors.csv", "mulliken_charges.csv",
                    "potential_energy.csv", "sample_submission.csv", "scalar_coupling_contributions.csv",
                    "structures", "structures.csv", "test.csv", "train.csv"})
PRIVATE = frozenset({"answers.csv"})
TYPES = ["1JHC", "2JHH", "2JHC", "3JHC"]
TENSOR = ["XX", "YX", "ZX", "XY", "YY", "ZY", "XZ", "YZ", "ZZ"]


def _atoms(rng: np.random.Generator, molecule: str) -> pd.DataFrame:
    n = int(rng.integers(3, 6))
    return pd.DataFrame({"molecule_name": molecule, "atom_index": range(n),
                         "atom": ["C"] + list(rng.choice(["H", "N", "O"], n - 1)),
                         "x": rng.normal(0, 1, n), "y": rng.normal(0, 1, n), "z": rng.normal(0, 1, n)})


def _pairs(rng: np.random.Generator, atoms: pd.DataFrame, first_id: int) -> pd.DataFrame:
    n = len(atoms) - 1
    return pd.DataFrame({"id": range(first_id, first_id + n), "molecule_name": atoms["molecule_name"].iloc[0],
                         "atom_index_0": range(1, n + 1), "atom_index_1": 0, "type": rng.choice(TYPES, n)})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(37)
    names = [f"dsgdb9nsd_{k:06d}" for k in range(1, 45)]
    atoms = {m: _atoms(rng, m) for m in names}
    kaggle_train, kaggle_test = names[:36], names[36:]  # Kaggle's own test molecules have no labels
    pairs, next_id = {}, 0
    for m in names:
        pairs[m] = _pairs(rng, atoms[m], next_id)
        next_id += len(pairs[m])
    train = pd.concat([pairs[m] for m in kaggle_train], ignore_index=True)
    train["scalar_coupling_constant"] = rng.normal(50, 30, len(train))
    test = pd.concat([pairs[m] for m in kaggle_test], ignore_index=True)
    write_csv(train, raw / "train.csv")
    write_csv(test, raw / "test.csv")
    write_csv(test[["id"]].assign(scalar_coupling_constant=0), raw / "sample_submission.csv")
    structures = pd.concat(atoms.values(), ignore_index=True)
    write_csv(structures, raw / "structures.csv")
    for m, frame in atoms.items():
        lines = [str(len(frame)), ""] + [f"{a} {x:.8f} {y:.8f} {z:.8f}" for a, x, y, z in
                                         frame[["atom", "x", "y", "z"]].itertuples(index=False)]
        (raw / "structures").mkdir(exist_ok=True)
        (raw / "structures" / f"{m}.xyz").write_text("\n".join(lines) + "\n")
    labelled = structures[structures["molecule_name"].isin(kaggle_train)]
    n = len(labelled)
    write_csv(pd.DataFrame({"molecule_name": kaggle_train, "X": rng.normal(0, 1, 36), "Y": rng.normal(0, 1, 36),
                            "Z": rng.normal(0, 1, 36)}), raw / "dipole_moments.csv")
    write_csv(labelled[["molecule_name", "atom_index"]].assign(**{t: rng.normal(0, 100, n) for t in TENSOR}),
              raw / "magnetic_shielding_tensors.csv")
    write_csv(labelled[["molecule_name", "atom_index"]].assign(mulliken_charge=rng.normal(0, 0.3, n)),
              raw / "mulliken_charges.csv")
    write_csv(pd.DataFrame({"molecule_name": kaggle_train, "potential_energy": rng.normal(-400, 50, 36)}),
              raw / "potential_energy.csv")
    terms = {t: train["scalar_coupling_constant"] / 4 for t in ("fc", "sd", "pso", "dso")}
    write_csv(train[["molecule_name", "atom_index_0", "atom_index_1", "type"]].assign(**terms),
              raw / "scalar_coupling_contributions.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return [str(v) for v in answers["id"]]


def expected_test_ids(raw: Path) -> list[str]:
    """The pairs of the held-out molecules (of the sorted distinct names), molecule by molecule."""
    train = pd.read_csv(raw / "train.csv")
    by_molecule = {m: list(rows["id"]) for m, rows in train.groupby("molecule_name")}
    return [str(i) for m in held_out(sorted(by_molecule), 0.1) for i in by_molecule[m]]
