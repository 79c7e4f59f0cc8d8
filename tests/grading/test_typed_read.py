"""The typed first reading gives no verdict of its own: on every file it either steps aside (None) or
gives exactly what the text path gives, and it does not step aside on plain valid files.

Each file is validated twice, once as usual and once with the typed reading switched off; the aligned
arrays must be equal bit for bit, or the reasons word for word."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_validation import _bare_spec, corpus, csv_text, good_frame, tiny, write  # noqa: F401 - tiny is a fixture

from mle_env.competition.spec import SubmissionSpec
from mle_env.grading import validation
from mle_env.grading.grader import Grader
from mle_env.grading.typed_read import read_typed
from mle_env.grading.validation import InvalidSubmission, validate_submission


def both_ways(path: Path, spec: SubmissionSpec, answers: pd.DataFrame, targets: tuple[str, ...],
              monkeypatch: pytest.MonkeyPatch) -> tuple[object, object, bool]:
    """(outcome with the typed reading, outcome without, whether the typed reading answered); an outcome is
    the aligned (y_true, y_pred) or the reason."""
    answered = []

    def spy(*args, **kwargs):
        result = read_typed(*args, **kwargs)
        answered.append(result is not None)
        return result

    def outcome() -> object:
        try:
            aligned = validate_submission(path, spec, answers, targets, 10**10)
        except InvalidSubmission as e:
            return e.reason
        return aligned.y_true, aligned.y_pred

    with monkeypatch.context() as m:
        m.setattr(validation, "read_typed", spy)
        typed = outcome()
    with monkeypatch.context() as m:
        m.setattr(validation, "read_typed", lambda *a, **k: None)
        text = outcome()
    return typed, text, any(answered)


def assert_same(typed: object, text: object, name: str) -> None:
    if isinstance(text, str) or isinstance(typed, str):
        assert typed == text, name
        return
    for a, b in zip(typed, text, strict=True):  # type: ignore[call-overload]
        assert a.dtype == b.dtype and a.shape == b.shape, name
        if a.dtype.kind == "f":
            assert np.array_equal(a.view(np.int64), b.view(np.int64)), name  # bit for bit
        else:
            assert np.array_equal(a, b), name


def test_every_corpus_file_gets_the_same_reason(tiny: Grader, tmp_path: Path,  # noqa: F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tiny.spec.submission
    for name, (path, _) in corpus(tiny, tmp_path).items():
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 10**8:
            continue  # refused before any reading
        typed, text, _ = both_ways(path, spec, tiny.answers, tiny.targets, monkeypatch)
        assert_same(typed, text, name)


def valid_variants(good: pd.DataFrame) -> dict[str, str]:
    """Well-formed spellings of one valid submission, name -> text."""
    text = csv_text(good)
    return {
        "as-written": text,
        "shuffled": csv_text(good.sample(frac=1.0, random_state=0)),
        "crlf": text.replace("\n", "\r\n"),
        "no-final-newline": text.rstrip("\n"),
        "spaces-around-numbers": "id,target\n" + "".join(
            f"{i}, {t!r} \n" for i, t in zip(good["id"], good["target"], strict=True)),
        "exponents": "id,target\n" + "".join(
            f"{i},{t:.25e}\n" for i, t in zip(good["id"], good["target"], strict=True)),
        "columns-swapped": csv_text(good[["target", "id"]]),
    }


def test_plain_valid_files_are_read_typed_with_the_text_paths_values(
        tiny: Grader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    good = good_frame(tiny)
    for name, text in valid_variants(good).items():
        path = write(tmp_path / f"{name}.csv", text)
        typed, text_outcome, answered = both_ways(path, tiny.spec.submission, tiny.answers, tiny.targets,
                                                  monkeypatch)
        assert not isinstance(typed, str), (name, typed)
        assert_same(typed, text_outcome, name)
        assert answered, name


def hostile_variants(good: pd.DataFrame) -> dict[str, str | bytes]:
    """Valid or nearly valid files the typed reading must leave to the text path, name -> content."""
    text = csv_text(good)
    rows = [f"{i},{t!r}" for i, t in zip(good["id"], good["target"], strict=True)]
    first_id = str(good["id"].iloc[0])
    return {
        "quoted-id": text.replace(f"\n{first_id},", f'\n"{first_id}",', 1),
        "quote-inside": text.replace(f"\n{first_id},", f'\n{first_id}",', 1),
        "byte-order-mark": "\ufeff" + text,
        "lone-carriage-return": text.replace("\n", "\r", 2),
        "negative-zero": "id,target\n" + "\n".join([rows[0].split(",")[0] + ",-0", *rows[1:]]) + "\n",
        "negative-zero-float": "id,target\n" + "\n".join([rows[0].split(",")[0] + ",-0.0", *rows[1:]]) + "\n",
        "nan": "id,target\n" + "\n".join([rows[0].split(",")[0] + ",nan", *rows[1:]]) + "\n",
        "infinity-word": "id,target\n" + "\n".join([rows[0].split(",")[0] + ",Infinity", *rows[1:]]) + "\n",
        "huge-exponent": "id,target\n" + "\n".join([rows[0].split(",")[0] + ",1e400", *rows[1:]]) + "\n",
        "short-row": "id,target\n" + "\n".join([rows[0].split(",")[0], *rows[1:]]) + "\n",
        "whitespace-only-line": "id,target\n  \n" + "\n".join(rows) + "\n",
        "blank-lines": "id,target\n\n" + "\n\n".join(rows) + "\n",
        "blank-line-at-the-end": "id,target\n" + "\n".join(rows) + "\n\n",
        "one-row-short": "id,target\n" + "\n".join(rows[:-1]) + "\n",
        "duplicate-and-missing-id": "id,target\n" + "\n".join([rows[1], *rows[1:]]) + "\n",
        "float-ids": "id,target\n" + "\n".join(f"{r.split(',')[0]}.0,{r.split(',')[1]}" for r in rows) + "\n",
        "padded-id": "id,target\n" + "\n".join([" " + rows[0], *rows[1:]]) + "\n",
        "latin-1-in-id": ("id,target\n" + "\n".join(rows) + "\n\xe9,0.5\n").encode("latin-1"),
    }


def test_hostile_spellings_are_left_to_the_text_path(tiny: Grader, tmp_path: Path,  # noqa: F811
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    good = good_frame(tiny)
    for name, content in hostile_variants(good).items():
        path = write(tmp_path / f"{name}.csv", content)
        typed, text, answered = both_ways(path, tiny.spec.submission, tiny.answers, tiny.targets, monkeypatch)
        assert_same(typed, text, name)
        assert not answered, name


def test_extra_columns_must_be_utf8_too(tiny: Grader, tmp_path: Path,  # noqa: F811
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    spec = dataclasses.replace(tiny.spec.submission, extra_columns=("note",))
    good = good_frame(tiny).assign(note="fine")
    path = write(tmp_path / "ok.csv", csv_text(good))
    typed, text, answered = both_ways(path, spec, tiny.answers, tiny.targets, monkeypatch)
    assert_same(typed, text, "ok")
    assert answered
    bad = csv_text(good).encode().replace(b",fine\n", b",\xe9\n", 1)
    path = write(tmp_path / "bad.csv", bad)
    typed, text, answered = both_ways(path, spec, tiny.answers, tiny.targets, monkeypatch)
    assert typed == text and "UTF-8" in str(text)
    assert not answered


@pytest.mark.parametrize("kind", ["label", "integer", "text"])
def test_other_kinds_and_two_id_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    rng = np.random.default_rng(0)
    answers = pd.DataFrame({"a": [f"s{i // 3}" for i in range(300)], "b": [str(i % 3) for i in range(300)],
                            "y": rng.integers(0, 2, 300).astype(str)}).astype(str)
    allowed = ("0", "1") if kind == "label" else (0, 1) if kind == "integer" else None
    spec = dataclasses.replace(_bare_spec(), id_column="a", id_columns=("a", "b"), kind=kind, allowed_values=allowed,
                               value_range=None, answer_columns=("y",))
    sub = answers.rename(columns={"y": "target"}).sample(frac=1.0, random_state=1)
    for name, frame in {"valid": sub, "bad-value": sub.assign(target=["7", *sub["target"][1:]])}.items():
        path = write(tmp_path / f"{name}.csv", csv_text(frame))
        typed, text, answered = both_ways(path, spec, answers, ("target",), monkeypatch)
        assert_same(typed, text, f"{kind}-{name}")
        assert answered, (kind, name)  # plain text: read typed; a value outside the labels is found after


@pytest.mark.parametrize("kind", ["number", "text"])
def test_a_file_of_several_arrow_blocks_is_read_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          kind: str) -> None:
    """Arrow reads a CSV in blocks of about 1 MiB, each a chunk of every column; the typed reading copies the
    chunks into place (and compares ids chunk by chunk), in the file's order or shuffled, two targets."""
    rng = np.random.default_rng(0)
    rows = 120_000
    answers = pd.DataFrame({"id": [f"event{i:07d}" for i in range(rows)], "a": rng.random(rows),
                            "b": rng.random(rows)})
    if kind == "text":
        answers[["a", "b"]] = answers[["a", "b"]].round(3).astype(str)
    spec = dataclasses.replace(_bare_spec(), kind=kind, value_range=None, answer_columns=("a", "b"))
    for name, frame in {"in-order": answers, "shuffled": answers.sample(frac=1.0, random_state=1)}.items():
        path = write(tmp_path / f"{name}.csv", csv_text(frame))
        assert path.stat().st_size > 2 * 2**20  # Arrow reads blocks of 1 MiB
        typed, text, answered = both_ways(path, spec, answers.astype({"id": str}), ("a", "b"), monkeypatch)
        assert answered, name
        assert_same(typed, text, name)
        assert typed[1].shape == (rows, 2) and np.array_equal(typed[1], frame.set_index("id").loc[answers["id"]]
                                                              .to_numpy()), name


def random_number_text(rng: random.Random) -> str:
    """Decimal text of every shape a writer produces: repr, fixed and long exponents, 30-digit mantissas,
    integers beyond 2**63, denormals, overflows."""
    x = rng.uniform(-1e6, 1e6) * 10.0 ** rng.randint(-30, 30)
    return rng.choice([
        repr(x), f"{x:.17g}", f"{x:.25e}", f"{x:.6f}", str(rng.randint(-2**64, 2**64)),
        f"{rng.randint(0, 10**30)}.{rng.randint(0, 10**30)}",
        f"{rng.randint(-10**25, 10**25)}e{rng.randint(-340, 300)}",
        f"-0.{'0' * rng.randint(0, 5)}{rng.randint(1, 10**9)}",
    ])


def test_numbers_are_read_bit_for_bit_as_the_text_path_reads_them(
        tiny: Grader, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    rng = random.Random(0)
    spec = dataclasses.replace(tiny.spec.submission, value_range=None, kind="number")
    ids = list(tiny.answers["id"])
    checked = 0
    for trial in range(40):
        values = [random_number_text(rng) for _ in ids]
        path = write(tmp_path / f"n{trial}.csv", "id,target\n" + "".join(
            f"{i},{v}\n" for i, v in zip(ids, values, strict=True)))
        typed, text, answered = both_ways(path, spec, tiny.answers, tiny.targets, monkeypatch)
        assert_same(typed, text, values)
        checked += answered
    assert checked >= 20  # most draws have no overflow, so most were read typed
