"""Synthetic raw data for nomad2018-predict-transparent-conductors (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import csv_text, split_recipe, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test", "test.csv", "train", "train.csv"})
PRIVATE = frozenset({"test.csv"})
FEATURES = ["spacegroup", "number_of_total_atoms", "percent_atom_al", "percent_atom_ga", "percent_atom_in",
            "lattice_vector_1_ang", "lattice_vector_2_ang", "lattice_vector_3_ang", "lattice_angle_alpha_degree",
            "lattice_angle_beta_degree", "lattice_angle_gamma_degree"]


def _frame(rng: np.random.Generator, n: int, start: int, targets: bool) -> pd.DataFrame:
    frame = pd.DataFrame({"id": range(start, start + n), "spacegroup": rng.choice([12, 33, 167, 194, 206, 227], n),
                          "number_of_total_atoms": rng.choice([10.0, 20.0, 40.0, 80.0], n)})
    for col in FEATURES[2:]:
        frame[col] = rng.random(n).round(4) * 10
    if targets:
        frame["formation_energy_ev_natom"] = rng.random(n).round(4) * 0.5
        frame["bandgap_energy_ev"] = rng.random(n).round(4) * 5
    return frame


def _geometry(rng: np.random.Generator) -> str:
    lines = ["#=== geometry", *(f"lattice_vector {v:.6f} 0.0 0.0 " for v in rng.random(3) * 10)]
    lines += [f"atom {x:.6f} {y:.6f} {z:.6f} {el}" for (x, y, z), el in zip(rng.random((4, 3)), ["O", "Al", "Ga", "In"],
                                                                             strict=True)]
    return "\n".join(lines) + "\n"


def generate(raw: Path) -> None:
    rng = np.random.default_rng(12)
    train, test = _frame(rng, 40, 1, True), _frame(rng, 6, 1, False)
    write_zip(raw / "train.csv.zip", {"train.csv": csv_text(train)})
    write_zip(raw / "test.csv.zip", {"test.csv": csv_text(test)})
    write_zip(raw / "train.zip", {f"train/{i}/geometry.xyz": _geometry(rng) for i in train["id"]})
    write_zip(raw / "test.zip", {f"test/{i}/geometry.xyz": _geometry(rng) for i in test["id"]})
    sample = pd.DataFrame({"id": test["id"], "formation_energy_ev_natom": 0.1779, "bandgap_energy_ev": 1.8892})
    write_zip(raw / "sample_submission.csv.zip", {"sample_submission.csv": csv_text(sample)})


# The test ids are renumbered, so a target in answer order identifies the split.
ids_from_answers, expected_test_ids = split_recipe("bandgap_energy_ev", 0.1, "train.csv.zip")
