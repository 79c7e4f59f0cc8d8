"""Small synthetic raw data in the exact layout Kaggle ships for each MLE-bench Lite competition.

One generator per competition writes into an empty folder what the outer Kaggle zip unpacks to: the same
file and folder names, the same nesting of inner zips, the same CSV columns and dtypes, and real file
formats (JPEG/PNG/TIFF/BMP via Pillow, WAV via ``wave``, AIFF and TFRecord written by hand). Sizes are
tiny (tens of rows) except where a recipe takes a fixed number of test rows (taxi: 9,914; tps-may:
100,000). Values are random but seeded, so every run writes the same files.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import struct
import wave
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec

Generator = Callable[[Path], None]
GENERATORS: dict[str, Generator] = {}


def generator(cid: str) -> Callable[[Generator], Generator]:
    def register(fn: Generator) -> Generator:
        GENERATORS[cid] = fn
        return fn

    return register


# --- file formats ------------------------------------------------------------------------------------
def image_bytes(fmt: str, size: tuple[int, int] = (8, 8), mode: str = "RGB", seed: int = 0) -> bytes:
    """A small random image in ``fmt`` (JPEG, PNG, TIFF, BMP)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    shape = (size[1], size[0]) + ((3,) if mode == "RGB" else ())
    out = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode).save(out, fmt)
    return out.getvalue()


def wav_bytes(seconds: float = 0.05, rate: int = 16000) -> bytes:
    """Mono 16-bit PCM WAV of a quiet tone."""
    samples = (1000 * np.sin(np.arange(int(seconds * rate)) / 5)).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    return out.getvalue()


def _extended(value: float) -> bytes:
    """An IEEE 754 80-bit extended float (AIFF's sample rate field)."""
    exponent = math.frexp(value)[1]
    mantissa = int(value * 2 ** (64 - exponent))
    return struct.pack(">HQ", exponent - 1 + 16383, mantissa)


def aiff_bytes(seconds: float = 0.05, rate: int = 2000) -> bytes:
    """Mono 16-bit AIFF: a FORM container with COMM and SSND chunks, big-endian samples."""
    samples = (1000 * np.sin(np.arange(int(seconds * rate)) / 3)).astype(">i2").tobytes()
    comm = struct.pack(">hLh", 1, len(samples) // 2, 16) + _extended(rate)
    ssnd = struct.pack(">LL", 0, 0) + samples
    body = b"AIFF" + b"COMM" + struct.pack(">L", len(comm)) + comm + b"SSND" + struct.pack(">L", len(ssnd)) + ssnd
    return b"FORM" + struct.pack(">L", len(body)) + body


def dicom_bytes(name: str) -> bytes:
    """A minimal DICOM Part 10 file: preamble, 'DICM', and a file meta group naming the instance."""
    uid = name.encode("ascii") + (b"\0" if len(name) % 2 else b"")

    def element(group: int, elem: int, vr: bytes, value: bytes) -> bytes:
        return struct.pack("<HH", group, elem) + vr + struct.pack("<H", len(value)) + value

    meta = element(2, 0x10, b"UI", b"1.2.840.10008.1.2.1\0") + element(2, 0x3, b"UI", uid)
    return b"\0" * 128 + b"DICM" + element(2, 0, b"UL", struct.pack("<I", len(meta))) + meta


def write_zip(path: Path, members: dict[str, bytes | str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def csv_text(frame: pd.DataFrame, **kwargs: object) -> str:
    return frame.to_csv(index=False, **kwargs)


def write_csv(frame: pd.DataFrame, path: Path, **kwargs: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(csv_text(frame, **kwargs), encoding="utf-8")


def write_images(folder: Path, names: list[str], fmt: str, size: tuple[int, int], mode: str = "RGB") -> None:
    """One small image per name, ``<folder>/<name>.<extension of fmt>``."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = {"JPEG": ".jpg", "PNG": ".png", "TIFF": ".tif"}[fmt]
    for n, name in enumerate(names):
        (folder / f"{name}{suffix}").write_bytes(image_bytes(fmt, size, mode, seed=n))


def hex_ids(rng: np.random.Generator, n: int, length: int) -> list[str]:
    ids: list[str] = []
    while len(ids) < n:
        candidate = "".join(rng.choice(list("0123456789abcdef"), length))
        if candidate not in ids:
            ids.append(candidate)
    return ids


def siim_tfrecord() -> ModuleType:
    """The TFRecord module shipped with siim-isic-melanoma-classification."""
    path = get_spec("siim-isic-melanoma-classification").folder / "tfrecord.py"
    spec = importlib.util.spec_from_file_location("siim_tfrecord_for_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _binary(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2, n)


SENTENCES = ["the quick brown fox, said \"hello\"", "a line\nwith a break", "plain words here", "ünïcödé text",
             "numbers 12 and 3.5", "what? why!", "semi;colon", "it's fine"]


def _texts(rng: np.random.Generator, n: int) -> list[str]:
    return [f"{SENTENCES[i % len(SENTENCES)]} #{rng.integers(1000)}" for i in range(n)]


# --- competitions ------------------------------------------------------------------------------------
@generator("aerial-cactus-identification")
def aerial_cactus(raw: Path) -> None:
    rng = np.random.default_rng(1)
    ids = [f"{h}.jpg" for h in hex_ids(rng, 57, 32)]
    train, test = ids[:47], ids[47:]  # 47 rows: a test share of 0.19 and of 0.2 give different test sizes
    write_csv(pd.DataFrame({"id": train, "has_cactus": _binary(rng, 47)}), raw / "train.csv")
    write_zip(raw / "train.zip", {f"train/{i}": image_bytes("JPEG", (32, 32), seed=n) for n, i in enumerate(train)})
    write_zip(raw / "test.zip", {f"test/{i}": image_bytes("JPEG", (32, 32)) for i in test})
    write_csv(pd.DataFrame({"id": test, "has_cactus": 0.5}), raw / "sample_submission.csv")


@generator("aptos2019-blindness-detection")
def aptos(raw: Path) -> None:
    rng = np.random.default_rng(2)
    ids = hex_ids(rng, 50, 12)
    train, test = ids[:40], ids[40:]
    write_csv(pd.DataFrame({"id_code": train, "diagnosis": rng.integers(0, 5, 40)}), raw / "train.csv")
    write_csv(pd.DataFrame({"id_code": test}), raw / "test.csv")
    write_csv(pd.DataFrame({"id_code": test, "diagnosis": 0}), raw / "sample_submission.csv")
    for folder, names in (("train_images", train), ("test_images", test)):
        write_images(raw / folder, names, "PNG", (12, 10))


@generator("denoising-dirty-documents")
def denoising(raw: Path) -> None:
    stems = [2, 3, 5, 8, 11, 14, 17, 20, 101, 104]
    write_zip(raw / "train.zip", {f"train/{s}.png": image_bytes("PNG", (7, 5), "L", seed=s) for s in stems})
    write_zip(raw / "train_cleaned.zip",
              {f"train_cleaned/{s}.png": image_bytes("PNG", (7, 5), "L", seed=100 + s) for s in stems})
    write_zip(raw / "test.zip", {"test/1.png": image_bytes("PNG", (7, 5), "L")})
    write_zip(raw / "sampleSubmission.csv.zip", {"sampleSubmission.csv": "id,value\n1_1_1,1\n"})


@generator("detecting-insults-in-social-commentary")
def insults(raw: Path) -> None:
    rng = np.random.default_rng(4)
    texts = [f'"{t}\\xa0"' for t in _texts(rng, 60)]
    dates = [f"201206{10 + i % 20:02d}123456Z" if i % 5 else "" for i in range(60)]
    write_csv(pd.DataFrame({"Insult": _binary(rng, 40), "Date": dates[:40], "Comment": texts[:40]}),
              raw / "train.csv")
    test = pd.DataFrame({"Insult": _binary(rng, 20), "Date": dates[40:], "Comment": texts[40:]})
    test.loc[19, "Comment"] = test.loc[18, "Comment"]  # Kaggle's test set repeats a few comments
    write_csv(test.assign(Usage=["PublicTest", "PrivateTest"] * 10), raw / "test_with_solutions.csv")
    write_csv(test.drop(columns=["Insult"]).assign(id=range(1, 21))[["id", "Date", "Comment"]], raw / "test.csv")
    write_csv(test.assign(Insult=0), raw / "sample_submission_null.csv")


@generator("dog-breed-identification")
def dog_breed(raw: Path) -> None:
    rng = np.random.default_rng(5)
    breeds = get_spec("dog-breed-identification").prepare.params["classes"]
    ids = hex_ids(rng, 60, 32)
    train, test = ids[:50], ids[50:]
    write_csv(pd.DataFrame({"id": train, "breed": rng.choice(breeds, 50)}), raw / "labels.csv")
    sample = pd.DataFrame({"id": test, **dict.fromkeys(breeds, 1 / len(breeds))})
    write_csv(sample, raw / "sample_submission.csv")
    for folder, names in (("train", train), ("test", test)):
        write_images(raw / folder, names, "JPEG", (10, 9))


@generator("dogs-vs-cats-redux-kernels-edition")
def dogs_vs_cats(raw: Path) -> None:
    names = [f"{animal}.{n}.jpg" for animal in ("cat", "dog") for n in range(16)]
    write_zip(raw / "train.zip", {f"train/{name}": image_bytes("JPEG", (9, 7), seed=n) for n, name in enumerate(names)})
    write_zip(raw / "test.zip", {f"test/{n}.jpg": image_bytes("JPEG", (9, 7)) for n in range(1, 6)})
    write_csv(pd.DataFrame({"id": range(1, 6), "label": 0.5}), raw / "sample_submission.csv")


@generator("histopathologic-cancer-detection")
def histopathologic(raw: Path) -> None:
    rng = np.random.default_rng(7)
    ids = hex_ids(rng, 50, 40)
    train, test = ids[:40], ids[40:]
    write_csv(pd.DataFrame({"id": train, "label": _binary(rng, 40)}), raw / "train_labels.csv")
    write_csv(pd.DataFrame({"id": test, "label": 0}), raw / "sample_submission.csv")
    for folder, names in (("train", train), ("test", test)):
        write_images(raw / folder, names, "TIFF", (8, 8))


JIGSAW_LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


@generator("jigsaw-toxic-comment-classification-challenge")
def jigsaw(raw: Path) -> None:
    rng = np.random.default_rng(8)
    ids = hex_ids(rng, 60, 16)
    train_ids, test_ids = ids[:40], ids[40:]
    train = pd.DataFrame({"id": train_ids, "comment_text": _texts(rng, 40)})
    for label in JIGSAW_LABELS:
        train[label] = _binary(rng, 40)
    test = pd.DataFrame({"id": test_ids, "comment_text": _texts(rng, 20)})
    labels = pd.DataFrame({"id": test_ids})
    for j, label in enumerate(JIGSAW_LABELS):  # rows 0-3 are not scored (-1); every label has both classes
        labels[label] = [-1] * 4 + [(i + j) % 2 for i in range(16)]
    sample = pd.DataFrame({"id": test_ids}).assign(**dict.fromkeys(JIGSAW_LABELS, 0.5))
    for name, frame in (("train", train), ("test", test), ("test_labels", labels), ("sample_submission", sample)):
        write_zip(raw / f"{name}.csv.zip", {f"{name}.csv": csv_text(frame)})


@generator("leaf-classification")
def leaf(raw: Path) -> None:
    rng = np.random.default_rng(9)
    species = get_spec("leaf-classification").prepare.params["classes"]
    features = [f"{kind}{i}" for kind in ("margin", "shape", "texture") for i in range(1, 65)]
    ids = rng.permutation(np.arange(1, 61))
    train_ids, test_ids = np.sort(ids[:50]), np.sort(ids[50:])
    train = pd.DataFrame({"id": train_ids, "species": rng.choice(species, 50),
                          **dict(zip(features, rng.random((len(features), 50)).round(6), strict=True))})
    test = pd.DataFrame({"id": test_ids, **dict(zip(features, rng.random((len(features), 10)).round(6), strict=True))})
    sample = pd.DataFrame({"id": test_ids, **dict.fromkeys(species, 1 / 99)})
    for name, frame in (("train", train), ("test", test), ("sample_submission", sample)):
        write_zip(raw / f"{name}.csv.zip", {f"{name}.csv": csv_text(frame)})
    write_zip(raw / "images.zip", {f"images/{i}.jpg": image_bytes("JPEG", (10, 8), "L", seed=int(i)) for i in ids})


@generator("mlsp-2013-birds")
def mlsp(raw: Path) -> None:
    rng = np.random.default_rng(10)
    n = 40
    filenames = [f"PC{1 + i % 4}_2009060{1 + i % 9}_0500{i:02d}_0010" for i in range(n)]
    folds = np.array([0] * 30 + [1] * 10)
    rng.shuffle(folds)
    base = "mlsp_contest_dataset/"
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
        f"{base}essential_data/CVfolds_2.txt": csv_text(pd.DataFrame({"rec_id": range(n), "fold": folds})),
        f"{base}essential_data/rec_id2filename.txt": csv_text(pd.DataFrame({"rec_id": range(n),
                                                                            "filename": filenames})),
        f"{base}essential_data/rec_labels_test_hidden.txt": "\n".join(label_lines) + "\n",
        f"{base}essential_data/species_list.txt": "class_id,code,species\n"
        + "".join(f"{i},SP{i:02d},Species {i}\n" for i in range(19)),
        f"{base}supplemental_data/histogram_of_segments.txt": "\n".join(histogram) + "\n",
        f"{base}supplemental_data/segment_features.txt": "\n".join(segments) + "\n",
        f"{base}supplemental_data/segment_rectangles.txt": "\n".join(rectangles) + "\n",
        f"{base}supplemental_data/segment_clusters.bmp": image_bytes("BMP", (6, 6)),
        f"{base}supplemental_data/segment_mosaic.bmp": image_bytes("BMP", (6, 6)),
    }
    bmp = image_bytes("BMP", (8, 4), "L")
    for i, name in enumerate(filenames):
        members[f"{base}essential_data/src_wavs/{name}.wav"] = wav_bytes()
        for folder in ("filtered_spectrograms", "spectrograms", "supervised_segmentation"):
            members[f"{base}supplemental_data/{folder}/{name}.bmp"] = bmp
        if i % 7 == 0:
            members[f"{base}supplemental_data/segmentation_examples/{name}.bmp"] = bmp
    write_zip(raw / "mlsp_contest_dataset.zip", members)


@generator("new-york-city-taxi-fare-prediction")
def taxi(raw: Path) -> None:
    rng = np.random.default_rng(11)
    n = 9914 + 60
    seconds = np.sort(rng.choice(200_000_000, n, replace=False)) + 1_230_000_000
    stamps = pd.to_datetime(seconds, unit="s").strftime("%Y-%m-%d %H:%M:%S")
    frame = pd.DataFrame({
        "key": [f"{s}.{i:07d}" for i, s in enumerate(stamps)],
        "fare_amount": (rng.gamma(2.0, 5.0, n) + 2.5).round(2),
        "pickup_datetime": [f"{s} UTC" for s in stamps],
        "pickup_longitude": (-73.98 + rng.normal(0, 0.03, n)).round(6),
        "pickup_latitude": (40.75 + rng.normal(0, 0.03, n)).round(6),
        "dropoff_longitude": (-73.98 + rng.normal(0, 0.03, n)).round(6),
        "dropoff_latitude": (40.75 + rng.normal(0, 0.03, n)).round(6),
        "passenger_count": rng.integers(1, 7, n),
    })
    frame.loc[3, ["pickup_longitude", "pickup_latitude"]] = 0.0  # the real data has zero coordinates too
    write_csv(frame, raw / "train.csv")
    test = frame.head(5).drop(columns=["fare_amount"])
    test["key"] = [f"2015-01-27 13:08:24.000000{i}" for i in range(5)]
    write_csv(test, raw / "test.csv")
    write_csv(pd.DataFrame({"key": test["key"], "fare_amount": 11.35}), raw / "sample_submission.csv")
    (raw / "GCP-Coupons-Instructions.rtf").write_text("{\\rtf1\\ansi Coupons for cloud credits.}\n")


NOMAD_FEATURES = ["spacegroup", "number_of_total_atoms", "percent_atom_al", "percent_atom_ga", "percent_atom_in",
                  "lattice_vector_1_ang", "lattice_vector_2_ang", "lattice_vector_3_ang", "lattice_angle_alpha_degree",
                  "lattice_angle_beta_degree", "lattice_angle_gamma_degree"]


def _nomad_frame(rng: np.random.Generator, n: int, start: int, targets: bool) -> pd.DataFrame:
    frame = pd.DataFrame({"id": range(start, start + n), "spacegroup": rng.choice([12, 33, 167, 194, 206, 227], n),
                          "number_of_total_atoms": rng.choice([10.0, 20.0, 40.0, 80.0], n)})
    for col in NOMAD_FEATURES[2:]:
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


@generator("nomad2018-predict-transparent-conductors")
def nomad(raw: Path) -> None:
    rng = np.random.default_rng(12)
    train, test = _nomad_frame(rng, 40, 1, True), _nomad_frame(rng, 6, 1, False)
    write_zip(raw / "train.csv.zip", {"train.csv": csv_text(train)})
    write_zip(raw / "test.csv.zip", {"test.csv": csv_text(test)})
    write_zip(raw / "train.zip", {f"train/{i}/geometry.xyz": _geometry(rng) for i in train["id"]})
    write_zip(raw / "test.zip", {f"test/{i}/geometry.xyz": _geometry(rng) for i in test["id"]})
    sample = pd.DataFrame({"id": test["id"], "formation_energy_ev_natom": 0.1779, "bandgap_energy_ev": 1.8892})
    write_zip(raw / "sample_submission.csv.zip", {"sample_submission.csv": csv_text(sample)})


PLANT_CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]


@generator("plant-pathology-2020-fgvc7")
def plant_pathology(raw: Path) -> None:
    rng = np.random.default_rng(13)
    n = 80
    labels = np.eye(4, dtype=int)[rng.integers(0, 4, n)]
    train = pd.DataFrame({"image_id": [f"Train_{i}" for i in range(n)]})
    train[PLANT_CLASSES] = labels
    write_csv(train, raw / "train.csv")
    write_csv(pd.DataFrame({"image_id": [f"Test_{i}" for i in range(5)]}), raw / "test.csv")
    write_csv(pd.DataFrame({"image_id": [f"Test_{i}" for i in range(5)]}).assign(**dict.fromkeys(PLANT_CLASSES, 0.25)),
              raw / "sample_submission.csv")
    write_images(raw / "images", [*train["image_id"], *(f"Test_{i}" for i in range(5))], "JPEG", (8, 6))


def _pizza_request(rng: np.random.Generator, i: int, labelled: bool) -> dict:
    got = bool(rng.integers(0, 2)) if labelled else False
    request = {
        "giver_username_if_known": (f"giver{i}" if got and i % 2 else "N/A"),
        "request_id": f"t3_{i:05x}",
        "request_text_edit_aware": _texts(rng, 1)[0],
        "request_title": f"[Request] pizza please {i}",
        "requester_account_age_in_days_at_request": float(rng.random() * 900),
        "requester_days_since_first_post_on_raop_at_request": float(rng.random() * 10),
        "requester_number_of_comments_at_request": int(rng.integers(0, 500)),
        "requester_number_of_comments_in_raop_at_request": int(rng.integers(0, 5)),
        "requester_number_of_posts_at_request": int(rng.integers(0, 100)),
        "requester_number_of_posts_on_raop_at_request": int(rng.integers(0, 3)),
        "requester_number_of_subreddits_at_request": 2,
        "requester_subreddits_at_request": ["AskReddit", "pizza"],
        "requester_upvotes_minus_downvotes_at_request": int(rng.integers(-10, 1000)),
        "requester_upvotes_plus_downvotes_at_request": int(rng.integers(0, 2000)),
        "requester_username": f"user{i}",
        "unix_timestamp_of_request": 1300000000.0 + i,
        "unix_timestamp_of_request_utc": 1300003600.0 + i,
    }
    if labelled:
        request |= {
            "in_test_set": False,
            "number_of_downvotes_of_request_at_retrieval": int(rng.integers(0, 5)),
            "number_of_upvotes_of_request_at_retrieval": int(rng.integers(0, 20)),
            "post_was_edited": False,
            "request_number_of_comments_at_retrieval": int(rng.integers(0, 20)),
            "request_text": request["request_text_edit_aware"],
            "requester_account_age_in_days_at_retrieval": 1000.5,
            "requester_days_since_first_post_on_raop_at_retrieval": 500.25,
            "requester_number_of_comments_at_retrieval": 600,
            "requester_number_of_comments_in_raop_at_retrieval": 6,
            "requester_number_of_posts_at_retrieval": 120,
            "requester_number_of_posts_on_raop_at_retrieval": 4,
            "requester_received_pizza": got,
            "requester_upvotes_minus_downvotes_at_retrieval": 1200,
            "requester_upvotes_plus_downvotes_at_retrieval": 2400,
            "requester_user_flair": "shroom" if got else None,
        }
    return request


@generator("random-acts-of-pizza")
def pizza(raw: Path) -> None:
    rng = np.random.default_rng(14)
    train = [_pizza_request(rng, i, True) for i in range(40)]
    test = [_pizza_request(rng, 100 + i, False) for i in range(15)]
    (raw / "train.json").write_text(json.dumps(train, indent=4))
    (raw / "test.json").write_text(json.dumps(test, indent=4))
    write_csv(pd.DataFrame({"request_id": [r["request_id"] for r in test], "requester_received_pizza": 0}),
              raw / "sampleSubmission.csv")


def _uid(rng: np.random.Generator) -> str:
    return "1.2.826.0.1.3680043.8.498." + str(rng.integers(10**10, 10**11))


@generator("ranzcr-clip-catheter-line-classification")
def ranzcr(raw: Path) -> None:
    rng = np.random.default_rng(15)
    classes = list(get_spec("ranzcr-clip-catheter-line-classification").submission.target_columns or ())
    n = 100
    uids = list(dict.fromkeys(_uid(rng) for _ in range(n + 10)))
    train_uids, test_uids = uids[:n], uids[n:]
    train = pd.DataFrame({"StudyInstanceUID": train_uids})
    train[classes] = rng.integers(0, 2, (n, len(classes)))
    train["PatientID"] = [f"ec{i % 30:06x}" for i in range(n)]
    write_csv(train, raw / "train.csv")
    rows = [(u, "CVC - Normal", f"[[{i}, {i + 5}], [{i + 1}, {i + 9}]]") for i, u in enumerate(train_uids[::3])]
    write_csv(pd.DataFrame(rows, columns=["StudyInstanceUID", "label", "data"]), raw / "train_annotations.csv")
    write_csv(pd.DataFrame({"StudyInstanceUID": test_uids}).assign(**dict.fromkeys(classes, 0)),
              raw / "sample_submission.csv")
    for folder, names in (("train", train_uids), ("test", test_uids)):
        write_images(raw / folder, names, "JPEG", (8, 8), "L")
    (raw / "train_tfrecords").mkdir()
    (raw / "test_tfrecords").mkdir()


SIIM_SITES = ["torso", "lower extremity", "upper extremity", "head/neck", ""]


@generator("siim-isic-melanoma-classification")
def siim(raw: Path) -> None:
    rng = np.random.default_rng(16)
    tfrecord = siim_tfrecord()
    shards, per_shard = 16, 3
    n = shards * per_shard
    names = [f"ISIC_{i:07d}" for i in rng.choice(10**7, n, replace=False)]
    target = np.array([i % 2 if i // per_shard in (0, 6) else int(rng.random() < 0.2) for i in range(n)])
    train = pd.DataFrame({
        "image_name": names,
        "patient_id": [f"IP_{i % 12:07d}" for i in range(n)],
        "sex": rng.choice(["male", "female", ""], n),
        "age_approx": rng.choice([35.0, 45.0, 60.0, np.nan], n),
        "anatom_site_general_challenge": rng.choice(SIIM_SITES, n),
        "diagnosis": np.where(target == 1, "melanoma", "unknown"),
        "benign_malignant": np.where(target == 1, "malignant", "benign"),
        "target": target,
    })
    order = rng.permutation(n)  # the CSV lists images in another order than the shards
    write_csv(train.iloc[order], raw / "train.csv")
    test_names = [f"ISIC_9{i:06d}" for i in range(4)]
    test = pd.DataFrame({"image_name": test_names, "patient_id": "IP_9999999", "sex": "male", "age_approx": 50.0,
                         "anatom_site_general_challenge": "torso"})
    write_csv(test, raw / "test.csv")
    write_csv(pd.DataFrame({"image_name": test_names, "target": 0}), raw / "sample_submission.csv")
    jpeg = image_bytes("JPEG", (8, 8))
    for folder, image_names in (("train", names), ("test", test_names)):
        for sub, suffix, data in ((Path(folder), ".dcm", None), (Path("jpeg") / folder, ".jpg", jpeg)):
            (raw / sub).mkdir(parents=True, exist_ok=True)
            for name in image_names:
                (raw / sub / f"{name}{suffix}").write_bytes(data if data is not None else dicom_bytes(name))
    (raw / "tfrecords").mkdir()
    for s in range(shards):
        rows = train.iloc[s * per_shard:(s + 1) * per_shard]
        records = [tfrecord.encode_example({
            "image": jpeg, "image_name": r.image_name.encode(), "patient_id": [s], "sex": [1],
            "age_approx": [45], "anatom_site_general_challenge": [2], "diagnosis": [int(r.target) * 3],
            "target": [int(r.target)]}) for r in rows.itertuples()]
        tfrecord.write_records(raw / "tfrecords" / f"train{s:02d}-2071.tfrec", records)
    tfrecord.write_records(raw / "tfrecords" / "test00-687.tfrec",
                           [tfrecord.encode_example({"image": jpeg, "image_name": n.encode()}) for n in test_names])


@generator("spooky-author-identification")
def spooky(raw: Path) -> None:
    rng = np.random.default_rng(17)
    train = pd.DataFrame({"id": [f"id{i:05d}" for i in rng.choice(30000, 60, replace=False)],
                          "text": _texts(rng, 60), "author": rng.choice(["EAP", "HPL", "MWS"], 60)})
    test = pd.DataFrame({"id": ["id90001", "id90002"], "text": _texts(rng, 2)})
    sample = test[["id"]].assign(EAP=0.403493538995863, HPL=0.287808366106543, MWS=0.308698094897594)
    for name, frame in (("train", train), ("test", test), ("sample_submission", sample)):
        write_zip(raw / f"{name}.zip", {f"{name}.csv": csv_text(frame)})


def _cover_frame(rng: np.random.Generator, n: int, start: int) -> pd.DataFrame:
    columns = ["Elevation", "Aspect", "Slope", "Horizontal_Distance_To_Hydrology", "Vertical_Distance_To_Hydrology",
               "Horizontal_Distance_To_Roadways", "Hillshade_9am", "Hillshade_Noon", "Hillshade_3pm",
               "Horizontal_Distance_To_Fire_Points"]
    columns += [f"Wilderness_Area{i}" for i in range(1, 5)] + [f"Soil_Type{i}" for i in range(1, 41)]
    values = np.hstack([rng.integers(-50, 4000, (n, 10)), rng.integers(0, 2, (n, 44))])
    return pd.DataFrame({"Id": range(start, start + n), **dict(zip(columns, values.T, strict=True))})


@generator("tabular-playground-series-dec-2021")
def tps_dec(raw: Path) -> None:
    rng = np.random.default_rng(18)
    write_csv(_cover_frame(rng, 60, 0).assign(Cover_Type=rng.integers(1, 8, 60)), raw / "train.csv")
    write_csv(_cover_frame(rng, 5, 4000000), raw / "test.csv")
    write_csv(pd.DataFrame({"Id": range(4000000, 4000005), "Cover_Type": 2}), raw / "sample_submission.csv")


def _tps_may_frame(rng: np.random.Generator, n: int, start: int) -> pd.DataFrame:
    columns: dict[str, np.ndarray] = {"id": np.arange(start, start + n)}
    for i in range(31):
        if i == 27:
            columns[f"f_{i:02d}"] = rng.integers(65, 75, (n, 10), dtype=np.uint8).view("S10").ravel().astype(str)
        elif 7 <= i <= 18 or i in (29, 30):
            columns[f"f_{i:02d}"] = rng.integers(0, 12, n)
        else:
            columns[f"f_{i:02d}"] = rng.normal(size=n).round(6)
    return pd.DataFrame(columns)


@generator("tabular-playground-series-may-2022")
def tps_may(raw: Path) -> None:
    rng = np.random.default_rng(19)
    n = 100_000 + 60
    write_csv(_tps_may_frame(rng, n, 0).assign(target=_binary(rng, n)), raw / "train.csv")
    write_csv(_tps_may_frame(rng, 5, 900000), raw / "test.csv")
    write_csv(pd.DataFrame({"id": range(900000, 900005), "target": 0.5}), raw / "sample_submission.csv")


TOKENS = {
    "en": [("PLAIN", "Hello", "Hello"), ("PUNCT", ",", ","), ("DATE", "2010", "twenty ten"),
           ("CARDINAL", "12", "twelve"), ("LETTERS", "BBC", "b b c"), ("MEASURE", "5 kg", "five kilograms"),
           ("PLAIN", "NA", "NA"), ("PLAIN", "he said \"no\"", "he said \"no\"")],
    "ru": [("PLAIN", "Привет", "Привет"), ("PUNCT", ".", "."),
           ("DATE", "1999 года", "тысяча девятьсот девяносто девятого года"),
           ("CARDINAL", "12", "двенадцать"), ("LETTERS", "ООН", "о о н"),
           ("PLAIN", "Moscow", "м_trans о_trans с_trans к_trans о_trans у_trans"),
           ("PLAIN", "NA", "NA")],
}


def _text_normalization(raw: Path, language: str) -> None:
    rng = np.random.default_rng(20 if language == "en" else 21)
    tokens = TOKENS[language]
    rows = [(s, t, *tokens[rng.integers(len(tokens))]) for s in range(40) for t in range(int(rng.integers(2, 6)))]
    train = pd.DataFrame(rows, columns=["sentence_id", "token_id", "class", "before", "after"])
    test = train.head(6)[["sentence_id", "token_id", "before"]].assign(sentence_id=lambda f: f["sentence_id"] + 1000)
    sample = pd.DataFrame({"id": test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str),
                           "after": test["before"]})
    for name, frame in (("train", train), ("test", test), ("test_2", test), ("sample_submission", sample),
                        ("sample_submission_2", sample)):
        write_zip(raw / f"{language}_{name}.csv.zip", {f"{language}_{name}.csv": csv_text(frame)})


@generator("text-normalization-challenge-english-language")
def text_normalization_en(raw: Path) -> None:
    _text_normalization(raw, "en")


@generator("text-normalization-challenge-russian-language")
def text_normalization_ru(raw: Path) -> None:
    _text_normalization(raw, "ru")


@generator("the-icml-2013-whale-challenge-right-whale-redux")
def right_whale(raw: Path) -> None:
    rng = np.random.default_rng(22)
    clips, index = {}, 0
    for day in ("20090328", "20090329", "20090330", "20090331"):
        for k in range(6):
            label = k % 2 if day >= "20090330" else int(rng.integers(0, 2))
            name = f"{day}_{k:02d}0000_{rng.integers(100):03d}s{k}ms_TRAIN{index}_{label}.aif"
            clips[f"train2/{name}"] = aiff_bytes()
            index += 1
    write_zip(raw / "train2.zip", clips)
    write_zip(raw / "test2.zip", {f"test2/20090401_000000_00{i}s0ms_Test{i}.aif": aiff_bytes() for i in range(3)})
    write_csv(pd.DataFrame({"clip": [f"20090401_000000_00{i}s0ms_Test{i}.aif" for i in range(3)], "probability": 0}),
              raw / "sampleSubmission.csv")
