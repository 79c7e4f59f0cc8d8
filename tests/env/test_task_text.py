"""task_text: the description an episode starts with (original, obfuscated, or MLE-bench's own from a
checkout), in the task and in ./data/description.md alike, recorded in the trajectory's header."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import mle_env
from mle_env.config import EnvConfig
from mle_env.errors import ConfigError

OBFUSCATED = "# Task\n\nPredict the binary target of each row from one numeric feature.\n"


@pytest.fixture
def tiny_with_texts(make_competition: Callable[..., Path], home: Path) -> str:
    from conftest import raw_dir

    from mle_env.prepare.runner import prepare

    folder = make_competition()
    (folder / "description_obfuscated.md").write_text(OBFUSCATED)
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    return "tiny-comp"


def episode_texts(cid: str, **options: object) -> tuple[str, str, dict]:
    """The task of the first observation, ./data/description.md as the agent reads it, and the header."""
    env = mle_env.make(cid, sandbox="local", **options)
    try:
        obs, info = env.reset()
        data, *_ = env.step({"type": "shell", "code": "cat data/description.md"})
        header = json.loads(Path(info["trajectory"]).read_text().splitlines()[0])
        return str(obs["task"]), str(data["stdout"]), header
    finally:
        env.close()


def test_the_original_text_by_default(tiny_with_texts: str) -> None:
    task, data, header = episode_texts(tiny_with_texts)
    assert task.startswith("# tiny-comp") and data.startswith("# tiny-comp")
    assert header["task_text"] == "original"


def test_the_obfuscated_text_everywhere_the_agent_looks(tiny_with_texts: str, home: Path) -> None:
    task, data, header = episode_texts(tiny_with_texts, task_text="obfuscated")
    assert task.startswith(OBFUSCATED.rstrip()) and "tiny-comp" not in task
    assert data == OBFUSCATED  # ./data/description.md too, not the prepared one
    assert header["task_text"] == "obfuscated"
    prepared = home / "tiny-comp" / "prepared" / "public" / "description.md"
    assert prepared.read_text().startswith("# tiny-comp")  # the prepared data is untouched
    views = list((home / "tiny-comp" / "task-views").iterdir())
    episode_texts(tiny_with_texts, task_text="obfuscated")
    assert list((home / "tiny-comp" / "task-views").iterdir()) == views  # built once, then reused
    [view] = views
    train = next((view / "public").glob("train*.csv"))
    assert train.stat().st_ino == (home / "tiny-comp" / "prepared" / "public" / train.name).stat().st_ino


def test_mlebench_s_own_text_from_a_checkout(tiny_with_texts: str, tmp_path: Path) -> None:
    folder = tmp_path / "mle-bench" / "mlebench" / "competitions" / "tiny-comp"
    folder.mkdir(parents=True)
    (folder / "description.md").write_text("MLE-bench's words for the tiny task.\n")
    (folder / "description_obfuscated.md").write_text("MLE-bench's obfuscated words.\n")
    checkout = tmp_path / "mle-bench"
    task, data, header = episode_texts(tiny_with_texts, task_text=f"mlebench:{checkout}")
    assert task.startswith("MLE-bench's words") and data == "MLE-bench's words for the tiny task.\n"
    assert header["task_text"] == f"mlebench:{checkout}"
    task, data, _ = episode_texts(tiny_with_texts, task_text=f"mlebench-obfuscated:{checkout}")
    assert data == "MLE-bench's obfuscated words.\n"


@pytest.mark.parametrize("value, message", [
    ("Obfuscated", "task_text must be 'original', 'obfuscated', 'mlebench:PATH' or"),
    ("mlebench:", "task_text must be"),
    ("other:/tmp", "task_text must be"),
    (3, "task_text must be"),
    ("mlebench:/no/such/folder", "is not a folder; give the root of a checkout of MLE-bench"),
])
def test_bad_task_texts_are_one_line_errors(value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        EnvConfig(task_text=value)  # type: ignore[arg-type]
    assert "\n" not in str(e.value)


def test_a_checkout_without_the_competition_says_so(tiny_with_texts: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no description.md for tiny-comp in .*is .* a checkout of MLE-bench"):
        mle_env.make(tiny_with_texts, sandbox="local", task_text=f"mlebench:{tmp_path}")


def test_every_shipped_competition_has_its_obfuscated_text() -> None:
    from mle_env.competition.registry import get_spec, list_competitions
    from mle_env.competition.task_text import task_description

    for cid in list_competitions():
        spec = get_spec(cid)
        assert task_description(spec, "obfuscated") != spec.description()
