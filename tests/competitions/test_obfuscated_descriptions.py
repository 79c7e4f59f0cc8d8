"""Every competition ships an obfuscated task description (``description_obfuscated.md``, for contamination
studies): the same data, submission format and metric, with nothing that names the competition."""

from __future__ import annotations

import re

import pytest

from mle_env.competition.registry import get_spec, list_competitions

OBFUSCATED = "description_obfuscated.md"
#: words that point at the source, whatever the competition
GIVEAWAYS = ("kaggle", "mle-bench", "mlebench", "leaderboard", "medal")


@pytest.mark.parametrize("cid", list_competitions())
def test_the_obfuscated_description_names_nothing(cid: str) -> None:
    spec = get_spec(cid)
    path = spec.folder / OBFUSCATED
    assert path.is_file(), f"{cid} has no {OBFUSCATED}"
    text = path.read_text(encoding="utf-8").lower()
    for name in (cid, spec.title, *GIVEAWAYS):
        assert name.lower() not in text, f"{cid}'s {OBFUSCATED} says {name!r}"
    # an alias may live on inside a column or file name the task needs (`is_iceberg`), never in the prose
    prose = re.sub(r"`[^`]*`", "", text)
    for alias in spec.aliases:
        assert alias.lower() not in prose, f"{cid}'s {OBFUSCATED} says {alias!r}"
    assert not re.search(r"https?://", text), f"{cid}'s {OBFUSCATED} holds a link"


@pytest.mark.parametrize("cid", list_competitions())
def test_the_obfuscated_description_keeps_the_submission_header(cid: str) -> None:
    """What an agent needs stays: the submission's columns are named (all of them up to 10; past that, as
    dog-breed's 120, the sample submission lists them)."""
    spec = get_spec(cid)
    text = (spec.folder / OBFUSCATED).read_text(encoding="utf-8")
    sub = spec.submission
    targets = sub.target_columns if sub.target_columns and len(sub.target_columns) <= 10 else ()  # None: the sample's
    for column in (sub.id_column, *targets):
        if column:
            assert column in text, f"{cid}'s {OBFUSCATED} does not name the submission column {column!r}"
