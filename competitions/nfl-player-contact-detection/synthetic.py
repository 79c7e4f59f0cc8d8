"""Synthetic raw data for nfl-player-contact-detection (see mle_env.competition.synthetic)."""

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, mp4_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "test", "test_baseline_helmets.csv", "test_player_tracking.csv",
                    "test_video_metadata.csv", "train", "train_baseline_helmets.csv", "train_labels.csv",
                    "train_player_tracking.csv", "train_video_metadata.csv"})
PRIVATE = frozenset({"test.csv"})
VIEWS = ("All29", "Endzone", "Sideline")


def _play_tables(rng: np.random.Generator, play: str) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    game_key, play_id = (int(x) for x in play.split("_"))
    players = [int(p) for p in rng.choice(np.arange(40000, 49999), 3, replace=False)]
    labels, tracking, helmets = [], [], []
    for step in range(3):
        when = f"2021-09-1{step}T20:0{step}:00.{step}00Z"
        for p1, p2 in [*combinations(players, 2), *((p, "G") for p in players)]:
            labels.append({"contact_id": f"{play}_{step}_{p1}_{p2}", "game_play": play, "datetime": when,
                           "step": step, "nfl_player_id_1": p1, "nfl_player_id_2": p2,
                           "contact": int(rng.random() < 0.3)})
        for p in players:
            tracking.append({"game_play": play, "game_key": game_key, "play_id": play_id, "nfl_player_id": p,
                             "datetime": when, "step": step, "team": rng.choice(["home", "away"]),
                             "position": rng.choice(["CB", "WR", "QB"]), "jersey_number": int(rng.integers(1, 99)),
                             "x_position": round(float(rng.uniform(0, 120)), 2),
                             "y_position": round(float(rng.uniform(0, 53)), 2),
                             "speed": round(float(rng.uniform(0, 9)), 2), "distance": round(float(rng.random()), 2),
                             "direction": round(float(rng.uniform(0, 360)), 2),
                             "orientation": round(float(rng.uniform(0, 360)), 2),
                             "acceleration": round(float(rng.uniform(0, 5)), 2),
                             "sa": round(float(rng.uniform(-5, 5)), 2)})
            for view in VIEWS[1:]:
                helmets.append({"game_play": play, "game_key": game_key, "play_id": play_id, "view": view,
                                "video_frame": f"{play}_{view}_{step}", "frame": step, "nfl_player_id": p,
                                "player_label": f"H{p % 100}", "left": int(rng.integers(0, 1200)),
                                "width": 20, "top": int(rng.integers(0, 700)), "height": 22})
    meta = [{"game_play": play, "game_key": game_key, "play_id": play_id, "view": view,
             "start_time": "2021-09-10T20:00:00.000Z", "end_time": "2021-09-10T20:00:30.000Z",
             "snap_time": "2021-09-10T20:00:05.000Z"} for view in VIEWS[1:]]
    return labels, tracking, helmets, meta


def generate(raw: Path) -> None:
    rng = np.random.default_rng(31)
    tables: dict[str, list[dict]] = {"labels": [], "player_tracking": [], "baseline_helmets": [],
                                     "video_metadata": []}
    for part, plays in (("train", [f"5{8000 + 17 * i}_00{1000 + 37 * i}" for i in range(12)]),
                        ("test", ["59999_001111"])):
        for play in plays:
            labels, tracking, helmets, meta = _play_tables(rng, play)
            if part == "train":
                for name, rows in zip(tables, (labels, tracking, helmets, meta), strict=True):
                    tables[name] += rows
            for view in VIEWS:
                (raw / part).mkdir(exist_ok=True)
                (raw / part / f"{play}_{view}.mp4").write_bytes(mp4_bytes(f"{play} {view}"))
        if part == "test":
            write_csv(pd.DataFrame(labels)[["contact_id"]].assign(contact=0), raw / "sample_submission.csv")
            for name, rows in (("player_tracking", tracking), ("baseline_helmets", helmets),
                               ("video_metadata", meta)):
                write_csv(pd.DataFrame(rows), raw / f"test_{name}.csv")
    for name, rows in tables.items():
        write_csv(pd.DataFrame(rows), raw / f"train_{name}.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "contact_id")


def expected_test_ids(raw: Path) -> list[str]:
    """Plays split 10 % in order of first appearance; the test plays' label rows in raw order."""
    labels = pd.read_csv(raw / "train_labels.csv", dtype=str)
    test_plays = set(held_out(list(dict.fromkeys(labels["game_play"])), 0.1))
    return list(labels.loc[labels["game_play"].isin(test_plays), "contact_id"])
