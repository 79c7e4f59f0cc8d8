"""The fgvc group: herbarium 2020/2021/2022 and iNaturalist 2019. What the registry-wide test cannot see: the
per-category split rules of the shared COCO helper, public images as hard links of the raw ones, each public
test image being the raw image its answer says, MLE-bench's quirks kept (latin-1 metadata, the one-value
sample, uncompressed "tar.gz" archives) and the new classification_error metric."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mle_env.competition.registry import get_spec
from mle_env.competition.synthetic import load_synthetic
from mle_env.errors import PrepareError
from mle_env.grading.grader import Grader
from mle_env.grading.metrics import InvalidPrediction, classification_error
from mle_env.paths import CompetitionPaths
from mle_env.prepare.coco_split import coco_split, herbarium_folders
from mle_env.prepare.helpers import PrepareContext
from mle_env.prepare.runner import prepare

H2020, H2021, H2022 = "herbarium-2020-fgvc7", "herbarium-2021-fgvc8", "herbarium-2022-fgvc9"
INAT = "inaturalist-2019-fgvc6"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(home, raws): the four competitions prepared from their synthetic raw data."""
    home, raws = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("raw")
    for cid in (H2020, H2021, H2022, INAT):
        (raws / cid).mkdir()
        load_synthetic(cid).generate(raws / cid)
        prepare(cid, raw_dir=raws / cid, home=home, verify=False)
    return home, raws


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def metadata(n_per_category: dict[int, int], image_key: str = "id") -> dict:
    """COCO metadata with categories interleaved (first appearance 5, 2, 9, ...), image ids 0.. in order."""
    cats = [c for c, n in n_per_category.items() for _ in range(n)]
    cats = cats[::2] + cats[1::2]
    return {"annotations": [{"category_id": c, "image_id": k} for k, c in enumerate(cats)],
            "images": [{image_key: k, "file_name": f"{k}.jpg"} for k, _ in enumerate(cats)], "info": {}}


# --- the shared per-category split ---------------------------------------------------------------------
def test_small_categories_follow_mlebench_rule() -> None:
    data = metadata({5: 1, 2: 2, 9: 3, 4: 4, 7: 5, 1: 10})
    parts = coco_split(data, test_size=0.2, shuffle_seed=0)
    test_by_cat: dict[int, list[int]] = {}
    for item in parts.test:
        test_by_cat.setdefault(item.category, []).append(item.image["id"])
    own = {c: [i["id"] for a, i in zip(data["annotations"], data["images"], strict=True) if a["category_id"] == c]
           for c in (5, 2, 9, 4, 7, 1)}
    assert 5 not in test_by_cat  # one image: train only
    for c in (2, 9, 4):  # 2-4 images: the last one
        assert test_by_cat[c] == [own[c][-1]]
    assert len(test_by_cat[7]) == 1 and len(test_by_cat[1]) == 2  # ceil(0.2 n) by train_test_split
    assert len(parts.train) + len(parts.test) == 25
    # train lists the categories in order of first appearance
    assert list(dict.fromkeys(item.category for item in parts.train)) == list(dict.fromkeys(
        a["category_id"] for a in data["annotations"]))


def test_test_list_is_shuffled_with_python_random_and_order_options_differ() -> None:
    from sklearn.model_selection import train_test_split

    data = metadata({3: 6, 1: 6, 2: 7})
    parts = coco_split(data, test_size=0.2, shuffle_seed=0)
    expected = []
    for c in dict.fromkeys(a["category_id"] for a in data["annotations"]):  # 3, 2, 1 in this metadata
        ids = [i["id"] for a, i in zip(data["annotations"], data["images"], strict=True) if a["category_id"] == c]
        expected += train_test_split(ids, test_size=0.2, random_state=0)[1]
    random.Random(0).shuffle(expected)
    assert [i.image["id"] for i in parts.test] == expected
    by_sorted = coco_split(data, test_size=0.2, category_order="sorted")
    assert [i.category for i in by_sorted.train][0] == 1 != [i.category for i in parts.train][0]


def test_split_rule_refuses_a_category_it_cannot_split_and_misaligned_records() -> None:
    with pytest.raises(PrepareError, match="category 5"):
        coco_split(metadata({5: 1, 2: 6}), test_size=0.2, small="split")
    assert len(coco_split(metadata({5: 2, 2: 6}), test_size=0.2, small="split").test) == 3
    bad = metadata({1: 3})
    bad["annotations"][1]["image_id"] = 99
    with pytest.raises(PrepareError, match="not aligned"):
        coco_split(bad, test_size=0.2)


def test_herbarium_images_are_hard_links_of_the_raw_ones_in_mle_env_s_cache(tmp_path: Path) -> None:
    raw, public, private, scratch = (tmp_path / n for n in ("raw", "public", "private", "scratch"))
    for folder in (raw, public, private, scratch):
        folder.mkdir()
    load_synthetic(H2021).generate(raw)
    spec = get_spec(H2021)
    herbarium_folders(PrepareContext(spec, raw, public, private, scratch, raw_owned=True), **spec.prepare.params)
    inodes = {p.stat().st_ino for p in (raw / "train" / "images").rglob("*.jpg")}
    placed = [p for folder in ("train", "test") for p in (public / folder / "images").rglob("*.jpg")]
    assert len(placed) == len(inodes) and {p.stat().st_ino for p in placed} == inodes
    shutil.rmtree(public)
    public.mkdir()
    herbarium_folders(PrepareContext(spec, raw, public, private, scratch, raw_owned=False),
                      **spec.prepare.params)  # the user's own folder: copies
    assert not {p.stat().st_ino for p in public.rglob("*.jpg")} & inodes


# --- the prepared competitions ----------------------------------------------------------------------
@pytest.mark.parametrize(("cid", "root"), [(H2020, "nybg2020"), (H2021, "")])
def test_herbarium_test_images_are_the_raw_images_of_their_answers(prepared: tuple[Path, Path], cid: str,
                                                                   root: str) -> None:
    home, raws = prepared
    paths, raw = CompetitionPaths(cid, home), raws / cid / root / "train"
    encoding = "latin-1" if cid == H2020 else "utf-8"
    original = json.loads((raw / "metadata.json").read_text(encoding=encoding))
    label_of = {sha(raw / i["file_name"]): a["category_id"]
                for a, i in zip(original["annotations"], original["images"], strict=True)}
    answers = pd.read_csv(paths.private / "answers.csv")
    test = json.loads((paths.public / root / "test" / "metadata.json").read_text())
    assert sorted(test) == ["images", "info", "licenses"]
    assert [i["id"] for i in test["images"]] == [str(n) for n in range(len(answers))]
    for image, label in zip(test["images"], answers["Predicted"], strict=True):
        assert label_of[sha(paths.public / root / "test" / image["file_name"])] == label
    train = json.loads((paths.public / root / "train" / "metadata.json").read_text())
    assert len(train["images"]) + len(answers) == len(original["images"])
    assert all((paths.public / root / "train" / i["file_name"]).is_file() for i in train["images"])


def test_herbarium_2020_metadata_is_read_as_latin1_as_mlebench_does(prepared: tuple[Path, Path]) -> None:
    home, _ = prepared
    text = (CompetitionPaths(H2020, home).public / "nybg2020" / "train" / "metadata.json").read_text()
    names = [c["name"] for c in json.loads(text)["categories"]]
    assert "C\u00c3\u00a1ssia fistula" in names  # "Cássia" decoded byte by byte
    assert text.isascii() and '\n    "annotations": [' in text  # indent 4, sorted keys, ASCII escapes
    names_2021 = [c["name"] for c in json.loads(
        (CompetitionPaths(H2021, home).public / "train" / "metadata.json").read_text())["categories"]]
    assert "C\u00e1ssia fistula" in names_2021


def test_herbarium_2022_renames_every_image_and_publishes_a_bare_test_list(prepared: tuple[Path, Path]) -> None:
    home, raws = prepared
    paths = CompetitionPaths(H2022, home)
    train = json.loads((paths.public / "train_metadata.json").read_text())
    assert sorted(train) == ["annotations", "categories", "distances", "genera", "images", "institutions", "licenses"]
    for annotation, image in zip(train["annotations"], train["images"], strict=True):
        c = annotation["category_id"]
        assert annotation["image_id"] == image["image_id"] and image["image_id"].startswith(f"{c:05d}__")
        assert (paths.public / "train_images" / image["file_name"]).is_file()
    for c in {a["category_id"] for a in train["annotations"]}:  # numbered 001.. without gaps
        ks = sorted(int(a["image_id"][-3:]) for a in train["annotations"] if a["category_id"] == c)
        assert ks == list(range(1, len(ks) + 1))
    test = json.loads((paths.public / "test_metadata.json").read_text())
    answers = pd.read_csv(paths.private / "answers.csv")
    assert isinstance(test, list) and [r["image_id"] for r in test] == [str(n) for n in range(len(answers))]
    assert {r["file_name"] for r in test} == {f"000/test-{n:06d}.jpg" for n in range(len(answers))}
    assert all(set(r) == {"file_name", "image_id", "license"} for r in test)
    assert set(pd.read_csv(paths.public / "sample_submission.csv")["Predicted"]) == {42}


def test_inaturalist_archives_ids_and_sample(prepared: tuple[Path, Path], tmp_path: Path) -> None:
    home, raws = prepared
    paths = CompetitionPaths(INAT, home)
    answers = pd.read_csv(paths.private / "answers.csv")
    original = json.loads((raws / INAT / "train2019.json").read_text())
    label_of = {i["id"]: a["category_id"] for a, i in zip(original["annotations"], original["images"], strict=True)}
    assert [label_of[i] for i in answers["id"]] == list(answers["predicted"])  # ids are the raw image ids
    test = json.loads((paths.public / "test2019.json").read_text())
    assert sorted(test) == ["images", "info", "licenses"]
    names = [i["file_name"] for i in test["images"]]
    assert all(n.startswith("test2019/") for n in names)
    for name, stored in (("test2019.tar.gz", [n.split("/")[1] for n in names]),
                         ("train_val2019.tar.gz", None)):
        with open(paths.public / name, "rb") as f:
            assert f.read(2) != b"\x1f\x8b"  # not gzip: a plain tar, as MLE-bench writes it
        with tarfile.open(paths.public / name) as tar:
            members = tar.getnames()
        if stored is not None:
            assert sorted(members) == sorted(stored)
        else:
            train = json.loads((paths.public / "train2019.json").read_text())
            assert sorted(members) == sorted(i["file_name"].removeprefix("train_val2019/") for i in train["images"])
    sample = pd.read_csv(paths.public / "kaggle_sample_submission.csv")
    assert list(sample["id"]) == list(answers["id"])
    assert set(sample["predicted"]) == {random.Random(42).randint(0, 1009)}
    assert sha(paths.public / "val2019.json") == sha(raws / INAT / "val2019.json")


def test_inaturalist_reads_an_unpacked_image_folder_the_same_way(prepared: tuple[Path, Path], tmp_path: Path) -> None:
    home, raws = prepared
    raw = tmp_path / "raw"
    shutil.copytree(raws / INAT, raw)
    with tarfile.open(raw / "train_val2019.tar.gz") as tar:
        tar.extractall(raw, filter="data")
    (raw / "train_val2019.tar.gz").write_bytes(b"")  # only the folder can be read now
    prepare(INAT, raw_dir=raw, home=tmp_path / "home", verify=False)
    for name in ("train_val2019.tar.gz", "test2019.tar.gz"):
        contents = []
        for public in (CompetitionPaths(INAT, home).public, CompetitionPaths(INAT, tmp_path / "home").public):
            with tarfile.open(public / name) as tar:
                contents.append(sorted((m.name, hashlib.sha256(tar.extractfile(m).read()).hexdigest())
                                       for m in tar if m.isfile()))
        assert contents[0] == contents[1]


def test_inaturalist_scores_the_first_token_and_rejects_floats(prepared: tuple[Path, Path], tmp_path: Path) -> None:
    home, _ = prepared
    answers = pd.read_csv(CompetitionPaths(INAT, home).private / "answers.csv")
    grader = Grader(get_spec(INAT), home)
    wrong = [f"{v + 1} {v}" if k < 2 else f"{v} 0 1 2 3" for k, v in enumerate(answers["predicted"])]
    top5 = tmp_path / "top5.csv"
    answers.assign(predicted=wrong).to_csv(top5, index=False)
    assert grader.grade(top5).score == round(2 / len(answers), 5)
    floats = tmp_path / "floats.csv"
    answers.assign(predicted=answers["predicted"].astype(float)).to_csv(floats, index=False)
    report = grader.grade(floats)
    assert report.status == "invalid" and "integer label" in report.invalid_reason


# --- the metric --------------------------------------------------------------------------------------
def test_classification_error_by_hand() -> None:
    truth = np.array(["3", "7", "7", "12"])
    assert classification_error(truth, np.array(["3", "7", "7", "12"])) == 0.0
    assert classification_error(truth, np.array(["3 7", "1 7", " 7\t9", "12"])) == 0.25
    assert classification_error(truth, np.array(["+3", "007", "8", "-12"])) == 0.5
    assert classification_error(np.array([3.0, 7.0]), np.array(["3", "3"])) == 0.5
    assert classification_error(np.array([3, 7]), np.array([3, 7])) == 0.0
    for cell in ("", "   ", "3.0", "cat 3", "nan"):
        with pytest.raises(InvalidPrediction, match="integer label"):
            classification_error(truth, np.array(["3", "7", "7", cell], dtype=object))
