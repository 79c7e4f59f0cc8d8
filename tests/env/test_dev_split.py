"""Dev splits (issue 14): a hidden dev set carved from the public training data, ``score_dev`` and the
``dev_improvement`` reward.

Plan: the dev split is the competition's own recipe applied to public/ and never reads the test answers
(garbage answers change no observation before the end); the dev answers are nowhere in the sandbox;
``score_dev`` equals an independent computation; the reward is the scaled gain of the best dev score;
unsupported competitions and bad options fail clearly; the cache is reused and rebuilt when the public
data changes; bad ``score_dev`` inputs are observations.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import raw_dir
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

import mle_env
from mle_env.competition.registry import get_spec, register_competition
from mle_env.errors import ConfigError
from mle_env.paths import sha256_file
from mle_env.prepare.dev import DevSplitUnsupported, dev_support
from mle_env.prepare.runner import prepare, remove_tree

FRACTION = 0.3


@pytest.fixture
def local(bwrap_ready: None) -> str:
    return "local"


def dev_root(home: Path, cid: str = "tiny-comp") -> Path:
    return home / cid / f"dev-{FRACTION:g}" / cid / "prepared"


def csv_code(path: str, frame: pd.DataFrame) -> str:
    """A shell action writing ``frame`` to ``path`` in the sandbox (the test plays the agent)."""
    return f"mkdir -p $(dirname {path}) && cat > {path} <<'EOF'\n{frame.to_csv(index=False)}EOF"


def dev_answers(home: Path) -> pd.DataFrame:
    return pd.read_csv(dev_root(home) / "private" / "test.csv")


def open_dev_env(cid: str, sandbox: str, **options: Any) -> Any:
    env = mle_env.make(cid, sandbox=sandbox, dev_split=FRACTION, **options)
    env.reset(seed=0)
    return env


# --- the split itself -------------------------------------------------------------------------------------
def test_dev_split_is_the_recipe_applied_to_public_train(tiny_prepared: str, home: Path, local: str) -> None:
    env = open_dev_env(tiny_prepared, local)
    env.close()
    public_train = pd.read_csv(home / "tiny-comp" / "prepared" / "public" / "train.csv")
    expected_train, expected_dev = train_test_split(public_train, test_size=FRACTION, random_state=0)
    dev = dev_root(home)
    assert pd.read_csv(dev / "public" / "train.csv").equals(expected_train.reset_index(drop=True))
    assert list(pd.read_csv(dev / "public" / "dev" / "dev.csv").columns) == ["id", "x"]  # no target
    assert list(dev_answers(home)["id"]) == list(expected_dev["id"])
    assert list(dev_answers(home).columns) == ["id", "target"]  # answers_keep = "targets", as for the test
    for name in ("test.csv", "sample_submission.csv", "description.md"):  # the test files, unchanged
        assert sha256_file(dev / "public" / name) == sha256_file(home / "tiny-comp" / "prepared" / "public" / name)


def _episode(cid: str, sandbox: str, perfect_dev: pd.DataFrame) -> tuple[list[dict[str, Any]], float, Any]:
    """A fixed episode; every observation before the end (without time_left) and the final grade."""
    env = mle_env.make(cid, sandbox=sandbox, dev_split=FRACTION, reward="dev_improvement")
    obs, _ = env.reset(seed=0)
    seen, total = [obs], 0.0
    actions: list[Any] = [
        "ls -R data && cat data/train.csv data/dev/dev.csv data/dev/sample_submission.csv data/test.csv",
        {"type": "score_dev", "path": "data/dev/sample_submission.csv"},
        {"type": "python", "code": "import pandas as pd\nd = pd.read_csv('data/dev/dev.csv')\n"
                                   "d.assign(target=d['x'].rank(pct=True))[['id', 'target']]"
                                   ".to_csv('code/dev.csv', index=False)\nprint(len(d))"},
        {"type": "score_dev", "path": "code/dev.csv"},
        csv_code("code/perfect.csv", perfect_dev),
        {"type": "score_dev", "path": "code/perfect.csv"},
        {"type": "python", "code": "t = pd.read_csv('data/test.csv')\nt.assign(target=t['x'].rank(pct=True))"
                                   "[['id', 'target']].to_csv('submission/submission.csv', index=False)"},
        {"type": "validate"},
    ]
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        assert not (terminated or truncated)
        seen.append(obs)
        total += reward
    *_, info = env.step({"type": "submit"})
    env.close()
    return [{k: v for k, v in o.items() if k != "time_left"} for o in seen], total, info["grade"]


@pytest.mark.slow
def test_test_answers_never_reach_an_observation(tiny_prepared: str, home: Path, local: str) -> None:
    """Garbage test answers (with a manifest that vouches for them) change nothing before the end."""
    env = open_dev_env(tiny_prepared, local)  # builds the dev split, so the test can read its answers
    env.close()
    perfect = dev_answers(home)
    before, reward_before, grade_before = _episode(tiny_prepared, local, perfect)
    dev_files = {p.relative_to(dev_root(home)): sha256_file(p) for p in dev_root(home).rglob("*") if p.is_file()}

    prepared = home / "tiny-comp" / "prepared"
    answers = pd.read_csv(prepared / "private" / "test.csv")
    answers["target"] = 1 - answers["target"]  # every answer wrong
    answers.to_csv(prepared / "private" / "test.csv", index=False)
    manifest = json.loads((prepared / "manifest.json").read_text())
    manifest["sha256"]["private/test.csv"] = sha256_file(prepared / "private" / "test.csv")
    st = (prepared / "private" / "test.csv").stat()
    manifest["stat"]["private/test.csv"] = [st.st_size, st.st_mtime_ns]
    (prepared / "manifest.json").write_text(json.dumps(manifest))
    remove_tree(home / "tiny-comp" / f"dev-{FRACTION:g}")  # rebuilt from scratch with the garbage in place

    after, reward_after, grade_after = _episode(tiny_prepared, local, perfect)
    assert {p.relative_to(dev_root(home)): sha256_file(p) for p in dev_root(home).rglob("*")
            if p.is_file() and p.name != "manifest.json"} == {k: v for k, v in dev_files.items()
                                                              if k.name != "manifest.json"}
    assert after == before and reward_after == reward_before > 0
    assert grade_before["score"] != grade_after["score"]  # the end did see the new answers


def test_dev_answers_are_nowhere_in_the_sandbox(tiny_prepared: str, home: Path, local: str) -> None:
    env = open_dev_env(tiny_prepared, local)
    public_train = pd.read_csv(home / "tiny-comp" / "prepared" / "public" / "train.csv", dtype=str)
    answers = dev_answers(home).astype(str)
    labelled = public_train[public_train["id"].isin(answers["id"])]
    # whole lines of the dev answers and of the labelled dev rows, as any file would hold them
    lines = [",".join(r) for r in answers.itertuples(index=False)] + [
        ",".join(r) for r in labelled.itertuples(index=False)]
    patterns = "\n".join(lines)
    on_host = set((dev_root(home) / "private" / "test.csv").read_text().splitlines()) | set(
        (home / "tiny-comp" / "prepared" / "public" / "train.csv").read_text().splitlines())
    assert set(lines) <= on_host and len(lines) == 2 * len(answers)  # the patterns find them where they are
    obs, *_ = env.step(f"cat > /tmp/patterns <<'EOF'\n{patterns}\nEOF\n"
                       "grep -rlxF -f /tmp/patterns . /tmp --exclude=patterns 2>/dev/null; echo found=$?")
    assert obs["stdout"].strip().splitlines() == ["found=1"]  # grep found nothing
    private = dev_root(home) / "private"
    obs, *_ = env.step(f"ls {private} {home}; tail -n +2 data/train.csv | cut -d, -f1 | sort > /tmp/t; "
                       "tail -n +2 data/dev/dev.csv | cut -d, -f1 | sort > /tmp/d; comm -12 /tmp/t /tmp/d | wc -l")
    assert obs["stdout"].strip() == "0" and "No such file" in obs["stderr"]  # host folders are not there
    env.close()


# --- score_dev and the reward ----------------------------------------------------------------------------
def test_score_dev_matches_an_independent_computation(tiny_prepared: str, home: Path, local: str) -> None:
    env = open_dev_env(tiny_prepared, local)
    dev = pd.read_csv(dev_root(home) / "public" / "dev" / "dev.csv")
    preds = pd.DataFrame({"id": dev["id"], "target": (dev["x"] - dev["x"].min()) / (dev["x"].max() - dev["x"].min())})
    env.step(csv_code("code/p.csv", preds.sample(frac=1, random_state=1)))  # any row order
    obs, reward, *_ = env.step({"type": "score_dev", "path": "code/p.csv"})
    truth = dev_answers(home).merge(preds, on="id", suffixes=("", "_pred"))
    expected = round(roc_auc_score(truth["target"], truth["target_pred"]), 5)
    assert obs["action"] == "score_dev" and int(obs["exit_code"]) == 0
    assert float(obs["stdout"]) == expected and reward == 0.0  # reward="medal": no shaping
    obs, *_ = env.step({"type": "validate", "path": "code/p.csv"})  # validate keeps its meaning: the test set
    assert int(obs["exit_code"]) == 1 and "test" in obs["stdout"]
    env.close()


def test_dev_improvement_rewards(tiny_prepared: str, home: Path, local: str) -> None:
    env = open_dev_env(tiny_prepared, local, reward="dev_improvement")
    answers = dev_answers(home)
    scale = 0.9 - 0.7  # the tiny leaderboard [0.9 ... 0.5]: |gold - median|
    inverted = answers.assign(target=1 - answers["target"])
    rewards = []
    for frame in (inverted, answers, inverted, answers):
        env.step(csv_code("code/p.csv", frame))
        obs, reward, *_ = env.step({"type": "score_dev", "path": "code/p.csv"})
        rewards.append(reward)
    # the sample (constant 0.5) scores 0.5; AUC 0 is no gain; AUC 1 gains 0.5; nothing gains after
    assert rewards == pytest.approx([0.0, 0.5 / scale, 0.0, 0.0])
    env.step("cp data/sample_submission.csv submission/submission.csv")
    *_, reward, terminated, _, info = env.step({"type": "submit"})
    assert terminated and reward == 0.0 and info["grade"]["status"] == "scored" and "medal" in info["grade"]
    env.reset()  # a new episode starts from the sample's score again
    env.step(csv_code("code/p.csv", answers))
    assert env.step({"type": "score_dev", "path": "code/p.csv"})[1] == pytest.approx(0.5 / scale)
    env.close()


def test_bad_score_dev_inputs_are_observations(tiny_prepared: str, home: Path, local: str) -> None:
    env = open_dev_env(tiny_prepared, local, step_limit=50)
    answers = dev_answers(home)
    cases: list[tuple[Any, str]] = [
        ({"type": "score_dev", "path": "code/missing.csv"}, "there is no ./code/missing.csv"),
        ({"type": "score_dev", "path": "data/sample_submission.csv"}, "one row per id of data/dev/dev.csv"),
        ({"type": "score_dev", "path": "../etc/passwd"}, "malformed action"),
        ({"type": "score_dev"}, "malformed action"),
    ]
    env.step(csv_code("code/wrong_ids.csv", answers.assign(id=[f"zz{i}" for i in range(len(answers))])))
    env.step(csv_code("code/no_target.csv", answers[["id"]]))
    cases += [({"type": "score_dev", "path": "code/wrong_ids.csv"}, "not a valid dev prediction"),
              ({"type": "score_dev", "path": "code/no_target.csv"}, "not a valid dev prediction")]
    for action, expected in cases:
        obs, reward, terminated, truncated, info = env.step(action)
        assert int(obs["exit_code"]) == 1 and expected in obs["message"], (action, obs["message"])
        assert reward == 0.0 and not terminated and not truncated and info["status"] == "running"
    env.close()


def test_score_dev_without_a_dev_split_is_an_observation(tiny_prepared: str, local: str) -> None:
    env = mle_env.make(tiny_prepared, sandbox=local)
    env.reset()
    obs, reward, terminated, truncated, _ = env.step({"type": "score_dev", "path": "data/sample_submission.csv"})
    assert obs["action"] == "score_dev" and int(obs["exit_code"]) == 1 and "dev_split=0.1" in obs["message"]
    assert reward == 0.0 and not terminated and not truncated
    assert "score_dev" not in obs["task"] and "data/dev/" not in obs["files"]
    env.close()


# --- options and support ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [0, 1, 1.5, -0.1, float("nan"), "0.1", True])
def test_bad_dev_split_values(tiny_prepared: str, value: object) -> None:
    with pytest.raises(ConfigError, match="dev_split must be a fraction"):
        mle_env.make(tiny_prepared, dev_split=value)


def test_dev_improvement_needs_a_dev_split(tiny_prepared: str) -> None:
    with pytest.raises(ConfigError, match="needs a dev split"):
        mle_env.make(tiny_prepared, reward="dev_improvement")


def test_unsupported_competition_raises_naming_why(make_competition: Callable[..., Path], home: Path) -> None:
    folder = make_competition(register=False)
    toml = (folder / "competition.toml").read_text()
    (folder / "competition.toml").write_text(toml.split("[prepare]")[0] + '[prepare]\nscript = "prepare.py"\n\n'
                                             + "[[sources]]" + toml.split("[[sources]]")[1])
    (folder / "prepare.py").write_text(
        "from mle_env.prepare.helpers import split_csv\n\n\ndef prepare(ctx):\n"
        "    split_csv(ctx, file='data.csv', test_size=0.25, id_column='id', target_columns=['target'],\n"
        "              sample_values={'target': 0.5}, answers_keep='targets')\n")
    register_competition(folder)
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    with pytest.raises(DevSplitUnsupported, match=r"tiny-comp has no dev split: it is prepared by its own prepare\.py"):
        mle_env.make("tiny-comp", dev_split=0.1)
    assert not (home / "tiny-comp" / "dev-0.1").exists()


def test_supported_competitions() -> None:
    for cid in ("practice-house-prices", "practice-fine-food-reviews", "practice-mnist-digits",
                "spooky-author-identification", "aerial-cactus-identification"):
        assert dev_support(get_spec(cid)) is None, cid
    for cid in ("text-normalization-challenge-english-language", "denoising-dirty-documents"):
        assert "has no dev split" in (dev_support(get_spec(cid)) or ""), cid


# --- the cache -------------------------------------------------------------------------------------------
def test_dev_split_is_cached_and_rebuilt_when_public_data_changes(
    make_competition: Callable[..., Path], home: Path, local: str
) -> None:
    folder = make_competition()
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    manifest = dev_root(home) / "manifest.json"

    def built() -> tuple[int, int, dict[str, int]]:
        mle_env.make("tiny-comp", dev_split=FRACTION, sandbox=local).close()
        st = manifest.stat()
        return st.st_ino, st.st_mtime_ns, json.loads(manifest.read_text())["dev"]["rows"]

    first = built()
    assert built() == first  # reused, not rebuilt
    (dev_root(home) / "private" / "test.csv").chmod(0o644)
    with open(dev_root(home) / "private" / "test.csv", "a") as f:  # damaged: rebuilt
        f.write("r999,1\n")
    second = built()
    assert second[:2] != first[:2] and second[2] == first[2]
    assert "r999" not in (dev_root(home) / "private" / "test.csv").read_text()

    raw = pd.read_csv(raw_dir(folder) / "data.csv")  # a new prepare with more rows changes public/
    more = pd.concat([raw, raw.assign(id=[f"s{i:03d}" for i in range(len(raw))])])
    more.to_csv(raw_dir(folder) / "data.csv", index=False)
    prepare("tiny-comp", raw_dir=raw_dir(folder), force=True)
    third = built()
    assert third[2]["train"] + third[2]["dev"] == 60 and first[2]["train"] + first[2]["dev"] == 30
    assert not [p for p in dev_root(home).parents[1].iterdir() if p.name.startswith(".staging")]
    assert os.access(dev_root(home) / "public", os.W_OK) is False or os.geteuid() == 0  # read-only (but for root)


@pytest.mark.parametrize("cid", ["practice-house-prices", "practice-fine-food-reviews", "practice-mnist-digits"])
def test_practice_dev_splits_keep_every_row_as_written(practice_home: Path, cid: str) -> None:
    """The public training rows, as text, are exactly the dev split's training rows plus its dev rows."""
    env = mle_env.make(cid, dev_split=0.1, sandbox="unisolated")  # no sandbox starts: make builds the split
    dev = env.unwrapped.dev
    original = (practice_home / cid / "prepared" / "public" / "train.csv").read_text().splitlines()
    train = (dev.public / "train.csv").read_text().splitlines()
    answers = pd.read_csv(dev.grader.paths.private / "test.csv", dtype=str)
    dev_ids = (dev.public / "dev" / "dev.csv").read_text().splitlines()[1:]
    assert train[0] == original[0] and len(dev_ids) == len(answers) == dev.rows["dev"] > 0
    assert sorted(train[1:] + [r for r in original[1:] if r.split(",")[0] in set(answers.iloc[:, 0])]) == sorted(
        original[1:])
    assert [line.split(",")[0] for line in dev_ids] == list(answers.iloc[:, 0])
    assert dev.baseline is not None
    env.close()
