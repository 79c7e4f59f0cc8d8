"""google-quest-challenge: MLE-bench's swap of one test row, done only when question_type_spelling is
constant in the plain split's test part."""

from pathlib import Path

import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from mle_env.competition.synthetic import load_synthetic, write_csv
from mle_env.paths import CompetitionPaths
from mle_env.prepare.runner import prepare

ID = "google-quest-challenge"


def prepared(tmp_path: Path, spelling_in_test: bool) -> tuple[pd.DataFrame, CompetitionPaths]:
    module = load_synthetic(ID)
    assert module is not None
    raw = tmp_path / "raw"
    module.generate(raw)
    frame = module.raw_train(spelling_in_test=spelling_in_test)
    write_csv(frame, raw / "train.csv")
    prepare(ID, raw_dir=raw, home=tmp_path / "home", verify=False)
    return frame, CompetitionPaths(ID, tmp_path / "home")


@pytest.mark.parametrize("spelling_in_test", [False, True])
def test_first_test_row_is_swapped_only_when_spelling_is_constant(tmp_path: Path, spelling_in_test: bool) -> None:
    frame, paths = prepared(tmp_path, spelling_in_test)
    plain_train, plain_test = train_test_split(frame, test_size=0.1, random_state=0)
    answers = pd.read_csv(paths.private / "test.csv")
    train = pd.read_csv(paths.public / "train.csv")
    assert answers["question_type_spelling"].nunique() > 1
    if spelling_in_test:
        assert list(answers["qa_id"]) == list(plain_test["qa_id"])
        assert list(train["qa_id"]) == list(plain_train["qa_id"])
        return
    donor = plain_train[plain_train["question_type_spelling"] != 0].iloc[0]
    first = plain_test.iloc[0]
    assert list(answers["qa_id"]) == [donor["qa_id"], *plain_test["qa_id"].iloc[1:]]
    assert answers.iloc[0]["question_type_spelling"] == donor["question_type_spelling"]
    # the train row takes the test row's contents in the donor's position; qa_id stays an integer column
    position = list(plain_train.index).index(donor.name)
    assert train.iloc[position]["qa_id"] == first["qa_id"] and train.iloc[position]["answer"] == first["answer"]
    assert pd.api.types.is_integer_dtype(train["qa_id"]) and pd.api.types.is_integer_dtype(answers["qa_id"])
    public_test = pd.read_csv(paths.public / "test.csv")
    assert public_test.shape[1] == 11 and public_test.iloc[0]["answer"] == donor["answer"]
