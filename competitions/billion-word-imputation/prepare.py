"""Billion Word Imputation as MLE-bench prepares it: one pass over Kaggle's 30,301,028 training sentences.

A single ``numpy.random.RandomState(0)`` serves the whole pass, in file order: for each line one uniform
draw; a line goes to the test set when the draw is <= 0.01 and it has more than two words, and then the
same generator picks the interior word to remove (``randint(1, words - 1)``: never the first or last).
Test sentences are stripped, their quotes doubled, and numbered 0.. in order; every other line goes to
the new training file unchanged. The interleaved draws make the pass sequential; it streams the text
(from the raw zip, or an already extracted ``train_v2.txt``) straight into the public zip.

Public: ``train_v2.txt.zip`` (``train_v2.txt``, the remaining lines) and ``test_v2.txt.zip``
(``test_v2.txt``: the CSV ``"id","sentence"`` with the word removed). Private: ``test.csv`` (the original
sentences) and ``sample_submission.csv`` (a copy of ``test_v2.txt``).
"""

import contextlib
import io
import zipfile
from collections.abc import Iterator

import numpy as np

from mle_env.prepare.helpers import PrepareContext, zip_files
from mle_env.prepare.progress import progress

#: the lines of Kaggle's train_v2.txt; MLE-bench stops after this many
TOTAL_LINES = 30_301_028
TEST_FRACTION = 0.01
HEADER = '"id","sentence"\n'


@contextlib.contextmanager
def _raw_lines(ctx: PrepareContext) -> Iterator[io.TextIOBase]:
    """The raw sentences as text read with universal newlines, as Python's ``open`` reads them."""
    extracted = ctx.raw / "train_v2.txt"
    if extracted.is_file():
        with open(extracted, encoding="utf-8") as f:
            yield f
        return
    with zipfile.ZipFile(ctx.raw_file("train_v2.txt.zip")) as zf, zf.open("train_v2.txt") as member:
        yield io.TextIOWrapper(member, encoding="utf-8")


def remove_word(sentence: str, rng: np.random.RandomState) -> str:
    """``sentence`` without one interior whitespace-separated word, drawn from ``rng``."""
    words = sentence.split()
    index = rng.randint(1, len(words) - 1)
    return " ".join(words[:index] + words[index + 1:])


def prepare(ctx: PrepareContext) -> None:
    rng = np.random.RandomState(0)
    uniform = rng.uniform
    public_test = ctx.private / "sample_submission.csv"
    with (_raw_lines(ctx) as lines, zipfile.ZipFile(ctx.public / "train_v2.txt.zip", "w", zipfile.ZIP_DEFLATED) as zf,
          zf.open("train_v2.txt", "w", force_zip64=True) as train_member,
          io.TextIOWrapper(train_member, encoding="utf-8", newline="") as train,
          open(ctx.private / "test.csv", "w", encoding="utf-8", newline="") as answers,
          open(public_test, "w", encoding="utf-8", newline="") as test,
          progress("splitting train_v2.txt", TOTAL_LINES) as advance):
        answers.write(HEADER)
        test.write(HEADER)
        n_test = 0
        for count, line in enumerate(lines):
            if count >= TOTAL_LINES:
                break
            if uniform() <= TEST_FRACTION and len(line.strip().split()) > 2:
                sentence = line.strip().replace('"', '""')
                answers.write(f'{n_test},"{sentence}"\n')
                test.write(f'{n_test},"{remove_word(sentence, rng)}"\n')
                n_test += 1
            else:
                train.write(line)
            if count % 100_000 == 0:
                advance(100_000)
    zip_files([(public_test, "test_v2.txt")], ctx.public / "test_v2.txt.zip")
