"""Competition-specific behaviour of six MLE-bench competitions that the registry test cannot see: the
label leaks removed (multi-modal-gesture's test .mat labels, smartphone-decimeter's span_log.nmea), the
labels fixed (tensorflow-speech: Kaggle's 12 classes, speakers disjoint), MLE-bench's quirks reproduced
on hand-made cases (h-and-m's ids without the leading zero and eight-day window, smartphone's positional
matching), and the shared pieces added for them (chunked.partition_csv, synthetic.mp4_bytes)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic, mp4_bytes
from mle_env.grading.grader import Grader
from mle_env.paths import CompetitionPaths
from mle_env.prepare.chunked import partition_csv
from mle_env.prepare.runner import prepare


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def prepared(cid: str, home: Path) -> tuple[Path, CompetitionPaths]:
    """The competition's synthetic raw folder and its prepared paths (prepared once per module)."""
    raw = home.parent / f"raw-{cid}"
    if not raw.exists():
        raw.mkdir()
        module = load_synthetic(cid)
        assert module is not None
        module.generate(raw)
        prepare(cid, raw_dir=raw, home=home, verify=False)
    return raw, CompetitionPaths(cid, home)


# --- multi-modal-gesture-recognition: Video.Labels removed from the test .mat files ------------------
def _samples(archive: Path) -> dict[str, dict[str, bytes]]:
    out = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                out[member.name] = {n: zf.read(n) for n in zf.namelist()}
    return out


def test_gesture_labels_are_gone_from_the_public_test_archive(home: Path) -> None:
    raw, paths = prepared("multi-modal-gesture-recognition", home)
    public, original = _samples(paths.public / "test.tar.gz"), _samples(raw / "training4.tar.gz")
    assert sorted(public) == sorted(original)
    for sample, members in public.items():
        assert sorted(members) == sorted(original[sample])
        for name, data in members.items():
            if not name.endswith("_data.mat"):
                assert data == original[sample][name], name
                continue
            before = scipy.io.loadmat(io.BytesIO(original[sample][name]))["Video"]
            after = scipy.io.loadmat(io.BytesIO(data))["Video"]
            assert "Labels" in before.dtype.names and "Labels" not in after.dtype.names
            assert set(after.dtype.names) == set(before.dtype.names) - {"Labels"}
            assert after["NumFrames"][0, 0].item() == before["NumFrames"][0, 0].item()
            assert np.array_equal(after["Frames"][0, 0][0, 1]["Skeleton"][0, 0]["WorldPosition"],
                                  before["Frames"][0, 0][0, 1]["Skeleton"][0, 0]["WorldPosition"])
    for kept in ("training1.tar.gz", "validation2.tar.gz", "devel01-40.7z"):  # training data keeps its labels
        assert (paths.public / kept).read_bytes() == (raw / kept).read_bytes()


def test_gesture_sample_is_mlebench_s_seeded_permutations(home: Path) -> None:
    import random

    _, paths = prepared("multi-modal-gesture-recognition", home)
    sample = pd.read_csv(paths.public / "randomPredictions.csv", dtype=str)
    random.seed(0)
    assert list(sample["Sequence"]) == [" ".join(str(x) for x in random.sample(range(1, 21), 20)) for _ in sample.index]
    assert list(sample["Id"]) == sorted(sample["Id"]) and all(len(i) == 4 for i in sample["Id"])


# --- smartphone-decimeter-2022: span_log.nmea withheld, rows matched by position ----------------------
def test_smartphone_test_drives_hold_neither_truth_nor_span_log(home: Path) -> None:
    raw, paths = prepared("smartphone-decimeter-2022", home)
    test_files = [p for p in (paths.public / "test").rglob("*") if p.is_file()]
    assert test_files and not {"ground_truth.csv", "span_log.nmea"} & {p.name for p in test_files}
    assert {p.name for p in test_files} >= {"device_gnss.csv", "device_imu.csv", "gnss_log.txt"}
    train = list((paths.public / "train").rglob("span_log.nmea"))
    assert len(train) == len(list((paths.public / "train").rglob("ground_truth.csv"))) > 0
    for path in test_files:  # everything else is the raw file, unchanged
        assert path.read_bytes() == (raw / "train" / path.relative_to(paths.public / "test")).read_bytes()


def test_smartphone_rows_of_a_trip_are_matched_by_position(home: Path, tmp_path: Path) -> None:
    _, paths = prepared("smartphone-decimeter-2022", home)
    grader = Grader(get_spec("smartphone-decimeter-2022"), home)
    answers = pd.read_csv(paths.private / "test.csv", dtype=str)
    answers.to_csv(tmp_path / "perfect.csv", index=False)
    assert grader.grade(tmp_path / "perfect.csv").score == 0.0
    first = answers["tripId"] == answers["tripId"].iloc[0]
    reversed_trip = answers.copy()
    reversed_trip.loc[first] = answers.loc[first].iloc[::-1].to_numpy()  # right epochs, other order
    reversed_trip.to_csv(tmp_path / "reversed.csv", index=False)
    assert grader.grade(tmp_path / "reversed.csv").score > 0  # MLE-bench ignores UnixTimeMillis too
    answers.drop(columns=["UnixTimeMillis"]).to_csv(tmp_path / "no-time.csv", index=False)
    assert grader.grade(tmp_path / "no-time.csv").score == 0.0


# --- tensorflow-speech-recognition-challenge: 12 classes, speakers disjoint ---------------------------
def test_speech_labels_are_kaggle_s_twelve_classes_and_speakers_disjoint(home: Path) -> None:
    _, paths = prepared("tensorflow-speech-recognition-challenge", home)
    answers = pd.read_csv(paths.private / "test.csv", dtype=str)
    classes = {"yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "unknown", "silence"}
    assert set(answers["label"]) <= classes and "unknown" in set(answers["label"])
    train = list((paths.public / "train" / "audio").rglob("*.wav"))
    train_speakers = {p.name.split("_nohash_")[0] for p in train if p.parent.name != "_background_noise_"}
    test = sorted((paths.public / "test" / "audio").glob("*.wav"))
    assert [p.name for p in test] == list(answers["fname"]) == [f"clip_{i:08d}.wav" for i in range(len(test))]
    # the synthetic clips of one speaker share their bytes (their length is the speaker's): no shared bytes,
    # no shared speaker
    train_bytes = {p.read_bytes() for p in train}
    assert not train_bytes & {p.read_bytes() for p in test}
    assert {p.parent.name for p in train} >= {"bed", "cat", "yes", "_background_noise_"}
    assert len(train_speakers) >= 10


def test_speech_scored_labels_fold_other_words() -> None:
    from mle_env.competition.synthetic import folder_module

    module = folder_module("tensorflow-speech-recognition-challenge", "prepare.py")
    assert module is not None
    assert [module.scored_label(f) for f in ("yes", "go", "bed", "seven", "_background_noise_")] == [
        "yes", "go", "unknown", "unknown", "silence"]
    assert module.speaker("cat", "0a7c2a8d_nohash_1.wav") == "0a7c2a8d"
    assert module.speaker("_background_noise_", "white_noise.wav") == "_background_noise_/white_noise.wav"


# --- h-and-m: MLE-bench's spelling of article ids and its eight-day window ----------------------------
def test_hm_answers_drop_the_leading_zero_and_span_eight_days(home: Path) -> None:
    raw, paths = prepared("h-and-m-personalized-fashion-recommendations", home)
    transactions = pd.read_csv(raw / "transactions_train.csv", dtype=str)
    answers = pd.read_csv(paths.private / "answers.csv", dtype=str)
    public = pd.read_csv(paths.public / "transactions_train.csv", dtype=str)
    assert transactions["article_id"].str.startswith("0").all()
    assert not public["article_id"].str.startswith("0").any()
    assert not any(item.startswith("0") for cell in answers["prediction"] for item in cell.split(" "))
    dates = pd.to_datetime(transactions["t_dat"])
    window = transactions[dates >= dates.max() - pd.Timedelta(days=7)]
    assert window["t_dat"].nunique() == 8 and len(public) + len(window) == len(transactions)
    expected = window.assign(article_id=window["article_id"].str.lstrip("0")).groupby("customer_id")["article_id"]
    assert dict(zip(answers["customer_id"], answers["prediction"], strict=True)) == expected.agg(" ".join).to_dict()


def test_hm_extra_customers_are_ignored(home: Path, tmp_path: Path) -> None:
    _, paths = prepared("h-and-m-personalized-fashion-recommendations", home)
    grader = Grader(get_spec("h-and-m-personalized-fashion-recommendations"), home)
    answers = pd.read_csv(paths.private / "answers.csv", dtype=str)
    sample = pd.read_csv(paths.public / "sample_submission.csv", dtype=str)
    assert len(sample) > len(answers)
    first = answers["prediction"].str.split(" ").str[0]
    guesses = dict(zip(answers["customer_id"], first, strict=True))
    everyone = sample.assign(prediction=sample["customer_id"].map(guesses).fillna("1"))
    everyone.to_csv(tmp_path / "all.csv", index=False)
    only = answers.assign(prediction=first)
    only.to_csv(tmp_path / "only.csv", index=False)
    assert grader.grade(tmp_path / "all.csv").score == grader.grade(tmp_path / "only.csv").score > 0


# --- shared pieces --------------------------------------------------------------------------------------
def test_partition_csv_equals_an_in_memory_filter(tmp_path: Path) -> None:
    frame = pd.DataFrame({"key": list("abcabcabca"), "n": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
                          "x": [1, 2, None, 4, 5, 6, 7, 8, 9, 10], "id": ["0007"] * 10})
    frame.to_csv(tmp_path / "in.csv", index=False)
    whole = pd.read_csv(tmp_path / "in.csv")
    outs = [tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "none.csv"]
    counts = partition_csv(tmp_path / "in.csv", outs, lambda c: c["key"].map({"a": 0, "b": 1, "c": -1}).to_numpy(),
                           chunk_rows=2)
    assert counts == [4, 3, 0]
    for out, key in zip(outs[:2], "ab", strict=True):
        expected = io.StringIO()
        whole[whole["key"] == key].to_csv(expected, index=False)  # "x" is float in the whole file: 1.0, not 1
        assert out.read_text() == expected.getvalue()
    assert outs[2].read_text().strip() == "key,n,x,id"


def test_mp4_bytes_is_an_iso_media_file() -> None:
    data = mp4_bytes("clip")
    assert data[4:8] == b"ftyp" and data[8:12] == b"isom" and b"mdat" in data and data != mp4_bytes("other")
    size = int.from_bytes(data[:4], "big")
    assert int.from_bytes(data[size:size + 4], "big") == len(data) - size
