"""Whole driving logs go to train or test, as MLE-bench splits them: the tokens of ``train_data/log.json``
split 80/20 (scikit-learn, random_state 0), and every table follows (nuScenes layout, one JSON list per
table): samples by their scene (whose token is its log's), ``train.csv`` rows and ``sample_data`` by
sample, calibrations and ego poses by sample data, scenes by log, annotations and instances by sample
(train only); ``attribute``, ``category``, ``sensor`` and ``visibility`` are copied to both, ``map.json``
gets each part's logs. Camera images and lidar sweeps follow their sample data into
``{train,test}_images/`` and ``{train,test}_lidar/``; the map raster goes to both map folders. The answers
(``private/test.csv``) are the test rows of ``train.csv`` with a confidence of 1.0 before every box."""

import json
from pathlib import Path
from typing import Any

import pandas as pd

from mle_env.prepare.helpers import (
    PrepareContext,
    copy_files,
    find_raw,
    place_files,
    raw_folder,
    read_csv,
    split,
    write_csv,
)

SHARED_TABLES = ("attribute", "category", "sensor", "visibility")
MAP_RASTER = "map_raster_palo_alto.png"


def _dump(data: Any, path: Path) -> None:
    """JSON as MLE-bench writes its tables: ``json.dump`` with its defaults (one line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f)


def _with_confidence(boxes: str) -> str:
    """"x y z w l h yaw class ..." -> "1.0 x y z w l h yaw class ..."."""
    tokens = boxes.split(" ")
    return " ".join(" ".join(["1.0", *tokens[k:k + 8]]) for k in range(0, len(tokens), 8))


def _unique_by_token(tokens: list[str], table: dict[str, dict]) -> list[dict]:
    """The records of ``tokens`` in order of first use, each once."""
    return [table[t] for t in dict.fromkeys(tokens)]


def prepare(ctx: PrepareContext) -> None:
    data = raw_folder(ctx, "train_data")

    def table(name: str) -> list[dict]:
        return json.loads((data / f"{name}.json").read_text())

    logs = table("log")
    train_logs, test_logs = split([log["token"] for log in logs], 0.2, random_state=0)
    parts = {"train": set(train_logs), "test": set(test_logs)}
    samples = table("sample")
    tokens = {part: {s["token"] for s in samples if s["scene_token"] in logs_} for part, logs_ in parts.items()}

    rows = read_csv(find_raw(ctx, "train.csv"))
    write_csv(rows[rows["Id"].isin(tokens["train"])], ctx.public / "train.csv")
    test_rows = rows[rows["Id"].isin(tokens["test"])]
    write_csv(test_rows.assign(PredictionString=test_rows["PredictionString"].map(_with_confidence)),
              ctx.private / "test.csv")
    write_csv(pd.DataFrame({"Id": test_rows["Id"], "PredictionString": ""}), ctx.public / "sample_submission.csv")

    sample_data, annotations = table("sample_data"), table("sample_annotation")
    calibrations = {c["token"]: c for c in table("calibrated_sensor")}
    poses = {p["token"]: p for p in table("ego_pose")}
    instances, maps, scenes = table("instance"), table("map"), table("scene")
    for part, logs_ in (("train", train_logs), ("test", test_logs)):
        out = ctx.public / f"{part}_data"
        data_part = [d for d in sample_data if d["sample_token"] in tokens[part]]
        _dump([log for log in logs if log["token"] in parts[part]], out / "log.json")
        _dump([s for s in samples if s["token"] in tokens[part]], out / "sample.json")
        _dump(data_part, out / "sample_data.json")
        _dump(_unique_by_token([d["calibrated_sensor_token"] for d in data_part], calibrations),
              out / "calibrated_sensor.json")
        _dump([poses[d["ego_pose_token"]] for d in data_part], out / "ego_pose.json")
        _dump([{**maps[0], "log_tokens": list(logs_)}, *maps[1:]], out / "map.json")
        _dump([s for s in scenes if s["log_token"] in parts[part]], out / "scene.json")
        for name in SHARED_TABLES:
            place_files([(data / f"{name}.json", out / f"{name}.json")], link=False)
        if part == "train":  # the test set has no annotations
            annotated = [a for a in annotations if a["sample_token"] in tokens[part]]
            _dump(annotated, out / "sample_annotation.json")
            used = {a["instance_token"] for a in annotated}
            _dump([i for i in instances if i["token"] in used], out / "instance.json")
        for kind, folder in (("jpeg", "images"), ("bin", "lidar")):
            source = raw_folder(ctx, f"train_{folder}")
            names = sorted({Path(d["filename"]).name for d in data_part if d["fileformat"] == kind})
            copy_files(names, source, ctx.public / f"{part}_{folder}", ctx.may_link(source))
        maps_folder = raw_folder(ctx, "train_maps")
        copy_files([MAP_RASTER], maps_folder, ctx.public / f"{part}_maps", ctx.may_link(maps_folder))
