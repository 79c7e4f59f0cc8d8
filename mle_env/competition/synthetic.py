"""Small synthetic raw data in the layout Kaggle ships, for testing a competition without its real data.

A competition folder may hold ``synthetic.py``, a module with:

- ``generate(raw: Path) -> None``: writes into the empty folder ``raw`` what the outer Kaggle zip unpacks
  to (the same file and folder names, nesting of inner zips, CSV columns and dtypes, and real file
  formats), tiny but seeded, so every run writes the same bytes;
- ``PUBLIC`` and ``PRIVATE`` (``frozenset[str]``): the top-level names MLE-bench's preparation leaves in
  ``public/`` (besides ``description.md``) and in ``private/``;
- ``ids_from_answers(answers: pd.DataFrame) -> list[str]`` and ``expected_test_ids(raw: Path) -> list[str]``:
  the test set read from the prepared answers (every cell as text, in their row order), and the same
  recomputed independently from the raw files with MLE-bench's split recipe;
- optionally ``noisy_submission(answers: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame``: a
  plausible imperfect submission, where the generic perturbation by submission kind does not fit;
- optionally ``perfect_submission(answers: pd.DataFrame) -> pd.DataFrame``: the best possible submission,
  where the answers' id and target columns are not one as they stand (votes to turn into probabilities,
  unmeasured rows left empty).

A plain split needs no code of its own: ``ids_from_answers, expected_test_ids = split_recipe("id", 0.1)``
(or :func:`unsplit_recipe`). This module holds the file-format writers and split helpers those modules
share, and finds them: :func:`load_synthetic` and :func:`synthetic_generators`. The registry-wide tests
(tests/competitions/test_registry.py) cover every MLE-bench competition that has a ``synthetic.py``.
Pillow is needed only by :func:`image_bytes`.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import math
import struct
import wave
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from mle_env.competition.registry import get_spec, list_competitions

SYNTHETIC_FILE = "synthetic.py"
#: the splits that are MLE-bench's (practice competitions ship real data instead)
MLEBENCH_SPLITS = ("lite", "medium", "high", "dev")

Generator = Callable[[Path], None]
AnswerIds = Callable[[pd.DataFrame], list[str]]
RawIds = Callable[[Path], list[str]]
#: ``(ids_from_answers, expected_test_ids)``, the two halves of a test-set recipe
Recipe = tuple[AnswerIds, RawIds]


# --- finding the modules -----------------------------------------------------------------------------
@functools.cache
def _load_file(path: Path) -> ModuleType:
    name = f"mle_env_{path.stem}_{path.parent.name.replace('-', '_')}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def folder_module(competition_id: str, filename: str) -> ModuleType | None:
    """The module ``filename`` in the competition's folder (imported once per path), or None if absent."""
    path = get_spec(competition_id).folder / filename
    return _load_file(path.resolve()) if path.is_file() else None


def load_synthetic(competition_id: str) -> ModuleType | None:
    """The competition's ``synthetic.py`` module (see the module docstring), or None if it has none."""
    return folder_module(competition_id, SYNTHETIC_FILE)


def synthetic_competitions(splits: tuple[str, ...] = MLEBENCH_SPLITS) -> list[str]:
    """Ids of the registered competitions of ``splits`` whose folder has a ``synthetic.py``, sorted."""
    ids = [cid for split in splits for cid in list_competitions(split)]
    return sorted(cid for cid in ids if (get_spec(cid).folder / SYNTHETIC_FILE).is_file())


def synthetic_generators(splits: tuple[str, ...] = MLEBENCH_SPLITS) -> dict[str, Generator]:
    """Competition id -> its ``generate(raw)``, for every competition of :func:`synthetic_competitions`."""
    generators: dict[str, Generator] = {}
    for cid in synthetic_competitions(splits):
        module = load_synthetic(cid)
        assert module is not None
        generators[cid] = module.generate
    return generators


def siim_tfrecord() -> ModuleType:
    """The TFRecord / tf.train.Example module SIIM's (and cassava's) preparation uses."""
    return importlib.import_module("mle_env.prepare.tfrecord")


# --- file formats ------------------------------------------------------------------------------------
def image_bytes(fmt: str, size: tuple[int, int] = (8, 8), mode: str = "RGB", seed: int = 0) -> bytes:
    """A small random image in ``fmt`` (JPEG, PNG, TIFF, BMP); ``size`` is (width, height)."""
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


def mp4_bytes(tag: str = "") -> bytes:
    """A tiny ISO base media (MP4) file: an ``ftyp`` box (brand isom) and an ``mdat`` box holding ``tag``
    (so files differ); no video track, which is enough for copying, listing and checksumming."""
    ftyp = b"isom" + struct.pack(">I", 512) + b"isomiso2mp41"
    payload = tag.encode("utf-8")
    return (struct.pack(">I", 8 + len(ftyp)) + b"ftyp" + ftyp
            + struct.pack(">I", 8 + len(payload)) + b"mdat" + payload)


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
    """A deflated zip at ``path`` holding ``members`` (name -> content), in that order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def csv_text(frame: pd.DataFrame, **kwargs: object) -> str:
    """``frame`` as CSV text without the index."""
    return frame.to_csv(index=False, **kwargs)


def write_csv(frame: pd.DataFrame, path: Path, **kwargs: object) -> None:
    """``frame`` as a UTF-8 CSV file without the index (parent folders created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(csv_text(frame, **kwargs), encoding="utf-8")


def write_images(folder: Path, names: list[str], fmt: str, size: tuple[int, int], mode: str = "RGB") -> None:
    """One small image per name, ``<folder>/<name>.<extension of fmt>``, the n-th seeded with n."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = {"JPEG": ".jpg", "PNG": ".png", "TIFF": ".tif"}[fmt]
    for n, name in enumerate(names):
        (folder / f"{name}{suffix}").write_bytes(image_bytes(fmt, size, mode, seed=n))


# --- values ------------------------------------------------------------------------------------------
def hex_ids(rng: np.random.Generator, n: int, length: int) -> list[str]:
    """``n`` distinct random lower-case hex strings of ``length`` digits."""
    ids: list[str] = []
    while len(ids) < n:
        candidate = "".join(rng.choice(list("0123456789abcdef"), length))
        if candidate not in ids:
            ids.append(candidate)
    return ids


def binary(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random 0/1 labels."""
    return rng.integers(0, 2, n)


SENTENCES = ["the quick brown fox, said \"hello\"", "a line\nwith a break", "plain words here", "ünïcödé text",
             "numbers 12 and 3.5", "what? why!", "semi;colon", "it's fine"]


def texts(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` short texts with quotes, line breaks, non-ASCII letters and separators CSV must escape."""
    return [f"{SENTENCES[i % len(SENTENCES)]} #{rng.integers(1000)}" for i in range(n)]


# --- MLE-bench's split recipes, recomputed ------------------------------------------------------------
def held_out(items: object, size: float | int) -> object:
    """The test part of scikit-learn's ``train_test_split(items, test_size=size, random_state=0)``."""
    from sklearn.model_selection import train_test_split

    return train_test_split(items, test_size=size, random_state=0)[1]


def split_ids(raw: Path, column: str, size: float | int, file: str = "train.csv") -> list[str]:
    """The ``column`` values of the rows a plain split of one (possibly zipped) raw CSV puts in the test set."""
    return [str(v) for v in held_out(pd.read_csv(raw / file), size)[column]]


def column_ids(answers: pd.DataFrame, column: str) -> list[str]:
    """The answers' ``column``, in their row order."""
    return list(answers[column])


def unsplit_ids(raw: Path, file: str, column: str) -> list[str]:
    """The ``column`` of Kaggle's own labelled test set ``file``, reused as is (every cell as text)."""
    return list(pd.read_csv(raw / file, dtype=str, keep_default_na=False)[column])


def split_recipe(column: str, size: float | int, file: str = "train.csv") -> Recipe:
    """A plain split of one raw CSV: the answers' ``column``, and :func:`split_ids` of the raw files."""
    return (lambda answers: column_ids(answers, column)), (lambda raw: split_ids(raw, column, size, file))


def unsplit_recipe(file: str, column: str) -> Recipe:
    """Kaggle's labelled test set reused: the answers' ``column``, and :func:`unsplit_ids` of the raw files."""
    return (lambda answers: column_ids(answers, column)), (lambda raw: unsplit_ids(raw, file, column))


def sorted_member_names(archive: Path, suffix: str) -> list[str]:
    """Base names of the members of the zip ``archive`` that end with ``suffix``, sorted."""
    with zipfile.ZipFile(archive) as zf:
        return sorted(Path(n).name for n in zf.namelist() if n.endswith(suffix))


# --- text normalization (English and Russian share a layout) ------------------------------------------
def token_normalization(
    language: str, tokens: list[tuple[str, str, str]], seed: int
) -> tuple[Generator, AnswerIds, RawIds]:
    """``(generate, ids_from_answers, expected_test_ids)`` of the text normalization competition in ``language``."""
    return (lambda raw: _token_normalization_raw(raw, language, tokens, seed),
            lambda answers: column_ids(answers, "id"), lambda raw: _token_normalization_ids(raw, language))


def _token_normalization_raw(raw: Path, language: str, tokens: list[tuple[str, str, str]], seed: int) -> None:
    """Kaggle's text normalization layout for ``language``: ``<language>_{train,test,test_2,sample_submission,
    sample_submission_2}.csv.zip``, 40 training sentences of 2-5 (class, before, after) ``tokens``."""
    rng = np.random.default_rng(seed)
    rows = [(s, t, *tokens[rng.integers(len(tokens))]) for s in range(40) for t in range(int(rng.integers(2, 6)))]
    train = pd.DataFrame(rows, columns=["sentence_id", "token_id", "class", "before", "after"])
    test = train.head(6)[["sentence_id", "token_id", "before"]].assign(sentence_id=lambda f: f["sentence_id"] + 1000)
    sample = pd.DataFrame({"id": test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str),
                           "after": test["before"]})
    for name, frame in (("train", train), ("test", test), ("test_2", test), ("sample_submission", sample),
                        ("sample_submission_2", sample)):
        write_zip(raw / f"{language}_{name}.csv.zip", {f"{language}_{name}.csv": csv_text(frame)})


def _token_normalization_ids(raw: Path, language: str) -> list[str]:
    """Text normalization's test ids: whole sentences split 10 %, renumbered 0.. in order, "<sentence>_<token>"."""
    train = pd.read_csv(raw / f"{language}_train.csv.zip")
    picked = set(held_out(train["sentence_id"].unique(), 0.1))
    test = train[train["sentence_id"].isin(picked)]
    new = {old: n for n, old in enumerate(test["sentence_id"].unique())}
    return [f"{new[s]}_{t}" for s, t in zip(test["sentence_id"], test["token_id"], strict=True)]
