"""Shared building blocks for turning raw files into public/ and private/.

A competition names one helper in ``[prepare] helper = "..."`` with ``params``, or ships a
``prepare.py`` whose ``prepare(ctx)`` calls these functions. Random splits use scikit-learn's
``train_test_split(..., random_state=0)`` exactly as MLE-bench does, so the same raw files give the
same test set.

Helpers read from ``ctx.raw`` (never write there: it may be the user's own folder), may use
``ctx.scratch`` for temporary files, and write only to ``ctx.public`` and ``ctx.private``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mle_env.competition.spec import CompetitionSpec
from mle_env.errors import PrepareError


@dataclass
class PrepareContext:
    """What a prepare step works with.

    Attributes:
        spec: the competition.
        raw: the raw files (read-only).
        public: output folder for what agents may see.
        private: output folder for answers.
        scratch: a temporary folder, deleted after prepare.
        params: ``[prepare] params`` from competition.toml.
    """

    spec: CompetitionSpec
    raw: Path
    public: Path
    private: Path
    scratch: Path
    params: dict[str, Any] = field(default_factory=dict)

    def raw_file(self, name: str) -> Path:
        """A raw file that must exist; a missing one raises a PrepareError naming it."""
        path = self.raw / name
        if not path.exists():
            present = sorted(p.name for p in self.raw.iterdir())[:10] if self.raw.is_dir() else []
            raise PrepareError(
                f"raw file '{name}' is missing in {self.raw} (found: {', '.join(present) or 'nothing'}); "
                "the raw folder must hold the competition's original files"
            )
        return path


# --- small pieces ------------------------------------------------------------------------------------
def read_csv(path: Path, **kwargs: Any) -> pd.DataFrame:
    """pandas.read_csv with MLE-bench's float_precision="round_trip", so floats survive a rewrite unchanged
    (pandas 3 parses that way by default and deprecates the option)."""
    if int(pd.__version__.split(".")[0]) < 3:
        kwargs.setdefault("float_precision", "round_trip")
    return pd.read_csv(path, **kwargs)


def write_csv(frame: pd.DataFrame, path: Path, **kwargs: Any) -> None:
    """Write without the index, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, **kwargs)


def split(items: Any, test_size: float | int, random_state: int = 0) -> tuple[Any, Any]:
    """scikit-learn ``train_test_split(items, test_size=..., random_state=...)``: (train, test)."""
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(items, test_size=test_size, random_state=random_state)
    return train, test


def extract(ctx: PrepareContext, archive: str, into: Path | None = None) -> Path:
    """Extract raw ``archive`` into ``into`` (default: a scratch folder named after it); returns the folder."""
    from mle_env.prepare.sources import extract_archive

    dest = into or ctx.scratch / Path(archive).name.split(".")[0]
    dest.mkdir(parents=True, exist_ok=True)
    extract_archive(ctx.raw_file(archive), dest)
    return dest


def copy_files(names: Iterable[str], src: Path, dest: Path) -> int:
    """Copy ``src/<name>`` to ``dest/<name>`` for each name (hard links when on one filesystem); returns the count."""
    dest.mkdir(parents=True, exist_ok=True)
    count = 0
    for name in names:
        source = src / name
        if not source.is_file():
            raise PrepareError(f"expected file {source} is missing")
        target = dest / name
        try:
            target.hardlink_to(source)
        except OSError:
            shutil.copyfile(source, target)
        count += 1
    return count


def sample_submission(ids: pd.Series, id_column: str, values: dict[str, Any]) -> pd.DataFrame:
    """A sample submission: the id column, then one column per target with a constant value."""
    frame = pd.DataFrame({id_column: ids.to_numpy()})
    for column, value in values.items():
        frame[column] = value
    return frame


def one_hot(frame: pd.DataFrame, id_column: str, label_column: str, classes: Sequence[str]) -> pd.DataFrame:
    """Id column plus one 0/1 column per class, in ``classes`` order (answers for multi-class log loss)."""
    unknown = sorted(set(frame[label_column]) - set(classes))
    if unknown:
        raise PrepareError(f"labels {unknown[:5]} are not in the class list")
    out = pd.DataFrame({id_column: frame[id_column].to_numpy()})
    labels = frame[label_column].to_numpy()
    for cls in classes:
        out[cls] = (labels == cls).astype(int)
    return out


# --- whole recipes (named in competition.toml) -------------------------------------------------------
def split_csv(
    ctx: PrepareContext,
    *,
    file: str,
    test_size: float | int,
    id_column: str,
    target_columns: Sequence[str],
    sample_values: dict[str, Any],
    random_state: int = 0,
    train_name: str = "train.csv",
    test_name: str = "test.csv",
    answers_name: str = "test.csv",
    sample_name: str = "sample_submission.csv",
    answers_keep: str = "all",
) -> None:
    """One labelled CSV split into a new train and test, as most MLE-bench competitions are.

    Writes public/<train_name> (every column), public/<test_name> (without targets),
    private/<answers_name> (every column, or only id and targets with ``answers_keep="targets"``) and
    public/<sample_name> (ids with ``sample_values``).
    """
    frame = read_csv(ctx.raw_file(file))
    missing = [c for c in [id_column, *target_columns] if c not in frame.columns]
    if missing:
        raise PrepareError(f"{file} lacks column(s) {missing}; is this the competition's original file?")
    train, test = split(frame, test_size, random_state)
    write_csv(train, ctx.public / train_name)
    write_csv(test.drop(columns=list(target_columns)), ctx.public / test_name)
    answers = test if answers_keep == "all" else test[[id_column, *target_columns]]
    write_csv(answers, ctx.private / answers_name)
    write_csv(sample_submission(test[id_column], id_column, sample_values), ctx.public / sample_name)


HELPERS: dict[str, Callable[..., None]] = {
    "split_csv": split_csv,
}
