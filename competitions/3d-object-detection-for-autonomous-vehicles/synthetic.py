"""Synthetic raw data for 3d-object-detection-for-autonomous-vehicles (see mle_env.competition.synthetic).

Kaggle ships ``train.csv`` (``Id`` = sample token, ``PredictionString`` = "x y z width length height yaw
class" per annotated object), ``train_data/`` (13 nuScenes-style JSON tables: attribute, calibrated_sensor,
category, ego_pose, instance, log, map, sample, sample_annotation, sample_data, scene, sensor, visibility;
a scene's token is its log's), ``train_images/*.jpeg``, ``train_lidar/*.bin``,
``train_maps/map_raster_palo_alto.png``, the same ``test_*`` folders without annotation tables, and
``sample_submission.csv``.
"""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, hex_ids, image_bytes, write_csv

PUBLIC = frozenset({"sample_submission.csv", "train.csv", "train_data", "test_data", "train_images", "test_images",
                    "train_lidar", "test_lidar", "train_maps", "test_maps"})
PRIVATE = frozenset({"test.csv"})
CLASSES = ["car", "pedestrian", "truck", "bicycle", "other_vehicle", "bus", "motorcycle", "emergency_vehicle",
           "animal"]
SIZES = {"car": (1.9, 4.7, 1.7), "pedestrian": (0.7, 0.8, 1.8), "truck": (2.8, 9.5, 3.4), "bicycle": (0.6, 1.8, 1.4),
         "other_vehicle": (2.7, 8.0, 3.2), "bus": (2.9, 12.0, 3.4), "motorcycle": (0.9, 2.3, 1.5),
         "emergency_vehicle": (2.3, 6.4, 2.4), "animal": (0.4, 0.7, 0.5)}


def _dump(data: object, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _log_tables(rng: np.random.Generator, log: str, tokens: list[str], annotate: bool) -> dict[str, list]:
    """The records of one log (one scene with its log's token, three samples, a camera image and a lidar
    sweep per sample, two or three tracked objects): table name -> records."""
    t: dict[str, list] = {k: [] for k in ("log", "scene", "sample", "sample_data", "calibrated_sensor", "ego_pose",
                                          "instance", "sample_annotation")}
    take = iter(tokens)
    samples = [next(take) for _ in range(3)]
    t["log"].append({"token": log, "vehicle": "a101", "date_captured": "2019-05-24", "location": "Palo Alto",
                     "logfile": f"host-a101_lidar1_{log[:6]}"})
    t["scene"].append({"token": log, "log_token": log, "nbr_samples": 3, "first_sample_token": samples[0],
                       "last_sample_token": samples[-1], "name": f"host-a101-{log[:6]}", "description": ""})
    calibrations = {s: next(take) for s in ("cam0", "lidar1")}
    for sensor, token in calibrations.items():
        t["calibrated_sensor"].append({"token": token, "sensor_token": f"sensor-{sensor}",
                                       "translation": [1.0, 0.0, 1.5], "rotation": [1.0, 0.0, 0.0, 0.0],
                                       "camera_intrinsic": []})
    objects = [(next(take), CLASSES[int(rng.integers(len(CLASSES)))]) for _ in range(int(rng.integers(2, 4)))]
    origin = rng.uniform([900, 600, -22], [2500, 2000, -18])
    for n, sample in enumerate(samples):
        stamp = 1557000000000000 + int(rng.integers(10**9))
        t["sample"].append({"token": sample, "timestamp": stamp, "scene_token": log,
                            "prev": samples[n - 1] if n else "", "next": samples[n + 1] if n < 2 else ""})
        for sensor, kind in (("cam0", "jpeg"), ("lidar1", "bin")):
            folder = "images" if kind == "jpeg" else "lidar"
            data, pose = next(take), next(take)
            t["sample_data"].append({"token": data, "sample_token": sample, "ego_pose_token": pose,
                                     "calibrated_sensor_token": calibrations[sensor], "timestamp": stamp,
                                     "fileformat": kind, "is_key_frame": True, "prev": "", "next": "",
                                     "filename": f"{folder}/host-a101_{sensor}_{stamp}.{kind}"})
            t["ego_pose"].append({"token": pose, "timestamp": stamp, "rotation": [1.0, 0.0, 0.0, 0.0],
                                  "translation": [float(v) for v in origin]})
        for instance, name in objects if annotate else ():
            w, length, h = (round(float(v * rng.uniform(0.9, 1.1)), 3) for v in SIZES[name])
            x, y, z = (float(v) for v in origin + rng.uniform([-40, -40, -1], [40, 40, 1]))
            yaw = float(rng.uniform(-math.pi, math.pi))
            t["sample_annotation"].append({"token": next(take), "sample_token": sample, "instance_token": instance,
                                           "translation": [x, y, z], "size": [w, length, h],
                                           "rotation": [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)],
                                           "attribute_tokens": [], "visibility_token": "4", "num_lidar_pts": 12,
                                           "category_name": name, "yaw": yaw})
    for instance, name in objects if annotate else ():
        t["instance"].append({"token": instance, "category_token": f"category-{name}", "nbr_annotations": 3,
                              "first_annotation_token": "", "last_annotation_token": ""})
    return t


def _write_part(raw: Path, part: str, rng: np.random.Generator, logs: list[str], annotate: bool) -> pd.DataFrame:
    tables: dict[str, list] = {}
    for log in logs:
        for name, records in _log_tables(rng, log, hex_ids(rng, 40, 64), annotate).items():
            tables.setdefault(name, []).extend(records)
    rows = []
    for sample in tables["sample"]:
        boxes = [a for a in tables["sample_annotation"] if a["sample_token"] == sample["token"]]
        rows.append({"Id": sample["token"], "PredictionString": " ".join(
            f"{a['translation'][0]} {a['translation'][1]} {a['translation'][2]} {a['size'][0]} {a['size'][1]} "
            f"{a['size'][2]} {a.pop('yaw')} {a.pop('category_name')}" for a in boxes)})
    folder = raw / f"{part}_data"
    if not annotate:
        del tables["instance"], tables["sample_annotation"]
    for name, records in tables.items():
        _dump(records, folder / f"{name}.json")
    _dump([{"token": f"sensor-{s}", "channel": s.upper(), "modality": m} for s, m in (("cam0", "camera"),
                                                                                       ("lidar1", "lidar"))],
          folder / "sensor.json")
    _dump([{"token": f"category-{c}", "name": c, "description": ""} for c in CLASSES], folder / "category.json")
    _dump([{"token": f"attribute-{a}", "name": f"object_action_{a}", "description": ""}
           for a in ("parked", "driving_straight_forward", "walking")], folder / "attribute.json")
    _dump([{"token": str(v), "level": level, "description": ""} for v, level in
           ((1, "v0-40"), (2, "v40-60"), (3, "v60-80"), (4, "v80-100"))], folder / "visibility.json")
    _dump([{"log_tokens": logs, "category": "semantic_prior", "filename": "maps/map_raster_palo_alto.png",
            "token": "53992ee3023e5494b90c316c183be829"}], folder / "map.json")
    for k, datum in enumerate(tables["sample_data"]):
        target = raw / f"{part}_{'images' if datum['fileformat'] == 'jpeg' else 'lidar'}" / Path(datum["filename"]).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(image_bytes("JPEG", (8, 6), seed=k) if datum["fileformat"] == "jpeg"
                           else rng.normal(0, 10, 20).astype("<f4").tobytes())
    (raw / f"{part}_maps").mkdir(parents=True, exist_ok=True)
    (raw / f"{part}_maps" / "map_raster_palo_alto.png").write_bytes(image_bytes("PNG", (16, 16), seed=99))
    return pd.DataFrame(rows)


def generate(raw: Path) -> None:
    rng = np.random.default_rng(53)
    logs = hex_ids(rng, 12, 64)
    write_csv(_write_part(raw, "train", rng, logs[:10], annotate=True), raw / "train.csv")
    test = _write_part(raw, "test", rng, logs[10:], annotate=False)
    write_csv(test.assign(PredictionString=""), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return list(answers["Id"])


def expected_test_ids(raw: Path) -> list[str]:
    """The train.csv rows (in file order) of the samples whose scene (= log) token is a held-out log's."""
    logs = json.loads((raw / "train_data" / "log.json").read_text())
    test_logs = set(held_out([log["token"] for log in logs], 0.2))
    samples = json.loads((raw / "train_data" / "sample.json").read_text())
    test_samples = {s["token"] for s in samples if s["scene_token"] in test_logs}
    return [i for i in pd.read_csv(raw / "train.csv")["Id"] if i in test_samples]


def noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """True boxes with random confidences, moved by up to a metre and resized by up to 20 % (so each is found
    at some IoU thresholds only), a few dropped or relabelled, and a spurious box in some samples."""
    rows = []
    for cell in answers["PredictionString"]:
        tokens = cell.split(" ")
        out = []
        for k in range(0, len(tokens), 9):
            x, y, z, w, length, h, yaw = (float(v) for v in tokens[k + 1:k + 8])
            name = tokens[k + 8]
            roll = rng.random()
            if roll < 0.1:
                continue
            if roll < 0.2:
                name = CLASSES[int(rng.integers(len(CLASSES)))]
            x, y = x + float(rng.normal(0, 0.3)), y + float(rng.normal(0, 0.3))
            w, length = w * float(rng.uniform(0.85, 1.15)), length * float(rng.uniform(0.85, 1.15))
            out.append(f"{round(float(rng.uniform(0.05, 1)), 3)} {x:.4f} {y:.4f} {z:.4f} {w:.3f} {length:.3f} {h:.3f} "
                       f"{yaw + float(rng.normal(0, 0.05)):.4f} {name}")
        if rng.random() < 0.4:
            out.append(f"{round(float(rng.uniform(0, 0.5)), 3)} 1000.0 1000.0 -20.0 1.9 4.6 1.7 0.3 car")
        rows.append(" ".join(out))
    return pd.DataFrame({"Id": answers["Id"], "PredictionString": rows})
