"""Competition folders: validation names the file and field at fault; the registry resolves ids and aliases."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from mle_env.competition.registry import (
    builtin_folder,
    get_spec,
    list_competitions,
    register_competition,
    registry,
    reset_registry,
)
from mle_env.competition.spec import CompetitionSpecErrors, load_spec
from mle_env.errors import CompetitionSpecError, RegistrationError, UnknownCompetition


def test_every_shipped_competition_loads() -> None:
    specs = registry().specs()
    assert len(specs) >= 4
    for spec in specs:
        assert spec.folder.name == spec.id
        assert spec.description().startswith("# ")
        assert spec.gym_id == f"mle_env/{spec.id}-v{spec.version}"


def test_practice_competitions_ship_a_leaderboard_and_say_it_is_not_human() -> None:
    practice = registry().specs("practice")
    assert {s.domain for s in practice} >= {"tabular", "image", "text"}
    for spec in practice:
        assert spec.leaderboard.source == "bundled" and spec.bundled_leaderboard.is_file()
        assert "not a human leaderboard" in spec.description().lower()
        # its own population, or the shared one of competitions made with mle-env new
        assert (spec.folder / "reference.py").is_file() or spec.prepare.helper == "table_split"


def test_aliases_and_did_you_mean() -> None:
    assert get_spec("insults").id == "detecting-insults-in-social-commentary"
    with pytest.raises(UnknownCompetition, match="Did you mean: 'detecting-insults'"):
        get_spec("detecting-insult")
    with pytest.raises(UnknownCompetition, match="mle-env list"):
        get_spec("zzzz-nothing")


def test_list_by_split() -> None:
    assert "detecting-insults-in-social-commentary" in list_competitions("lite")
    assert set(list_competitions("practice")) <= set(list_competitions())
    assert "detecting-insults-in-social-commentary" not in list_competitions("practice")


def _copy_insults(tmp_path: Path) -> Path:
    folder = tmp_path / "detecting-insults-in-social-commentary"
    shutil.copytree(builtin_folder() / folder.name, folder)
    return folder


def _edit(folder: Path, old: str, new: str) -> None:
    path = folder / "competition.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "field", "phrase"),
    [
        ("lower_is_better = false", 'lower_is_better = "no"', "metric.lower_is_better", "is not of type 'boolean'"),
        ('name = "auc"', 'name = "aucc"', "metric.name", "unknown metric 'aucc' (did you mean auc"),
        ('split = "lite"', 'split = "easy"', "split", "is not one of"),
        ('domain = "text"', "domain = 3", "domain", "is not one of"),
        ('kind = "probability"', 'kind = "prob"', "submission.kind", "is not one of"),
        ('id_column = "Comment"', "", "submission", "'id_column' is a required property"),
        ('version = 0', 'version = -1', "version", "less than the minimum"),
        ('script = "prepare.py"', 'script = "missing.py"', "prepare.script", "file 'missing.py' is missing"),
        ('script = "prepare.py"', 'helper = "nope"', "prepare.helper", "unknown helper 'nope'"),
        ('sha256 = "1a58', 'sha256 = "XYZ', "sources[0]", ""),
        ('id = "detecting-insults-in-social-commentary"', 'id = "other-id"', "id", "must equal the folder name"),
        ('title = "Detecting', 'colour = "red"\ntitle = "Detecting', "colour", "unknown key 'colour'"),
    ],
)
def test_malformed_folder_names_file_and_field(
    tmp_path: Path, old: str, new: str, field: str | None, phrase: str
) -> None:
    folder = _copy_insults(tmp_path)
    _edit(folder, old, new)
    with pytest.raises(CompetitionSpecError) as info:
        load_spec(folder)
    err = info.value
    assert err.path == str(folder / "competition.toml")
    if field is not None:
        assert err.field is not None and err.field.startswith(field), err
    assert phrase in str(err)


def test_invalid_toml_and_missing_files(tmp_path: Path) -> None:
    folder = _copy_insults(tmp_path)
    (folder / "competition.toml").write_text("id = [unclosed")
    with pytest.raises(CompetitionSpecError, match="not valid TOML"):
        load_spec(folder)
    folder = tmp_path / "x" / "detecting-insults-in-social-commentary"
    shutil.copytree(builtin_folder() / folder.name, folder)
    (folder / "description.md").unlink()
    with pytest.raises(CompetitionSpecError, match="field 'description': file 'description.md' is missing"):
        load_spec(folder)
    with pytest.raises(CompetitionSpecError, match="a competition folder needs a competition.toml"):
        load_spec(tmp_path / "empty")


def test_user_folders_from_environment_and_function(
    make_competition: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_competition("user-comp", aliases=("mine",), register=False)
    with pytest.raises(UnknownCompetition):
        get_spec("user-comp")
    monkeypatch.setenv("MLE_ENV_COMPETITIONS", str(folder.parent))  # a folder of competition folders
    reset_registry()
    assert get_spec("mine").id == "user-comp"
    reset_registry()
    monkeypatch.delenv("MLE_ENV_COMPETITIONS")
    assert register_competition(folder) == ["user-comp"]  # one competition folder
    assert get_spec("user-comp").split == "practice"
    import gymnasium

    assert gymnasium.spec("mle_env/user-comp-v0").kwargs == {"competition_id": "user-comp"}


def test_clashing_ids_and_aliases_are_refused(make_competition: Callable[..., Path], tmp_path: Path) -> None:
    make_competition("one-comp", aliases=("shared-name",))
    with pytest.raises(RegistrationError, match="alias 'shared-name'"):
        make_competition("two-comp", aliases=("shared-name",))
    clash = tmp_path / "elsewhere" / "one-comp"
    shutil.copytree(tmp_path / "competitions" / "one-comp", clash)
    with pytest.raises(RegistrationError, match="defined twice"):
        register_competition(clash)


def test_a_bad_folder_in_the_environment_is_reported_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: one bad folder in MLE_ENV_COMPETITIONS broke `mle-env list` for all."""
    from mle_env.competition.registry import list_competitions, registry, reset_registry

    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "competition.toml").write_text('id = "broken" [\n')
    monkeypatch.setenv("MLE_ENV_COMPETITIONS", f"{tmp_path}{os.pathsep}{tmp_path / 'missing'}")
    reset_registry()
    assert "practice-house-prices" in list_competitions() and "broken" not in list_competitions()
    err = capsys.readouterr().err
    assert "warning: MLE_ENV_COMPETITIONS: skipped" in err and "not valid TOML" in err and "does not exist" in err
    assert set(registry().problems) == {tmp_path / "broken", tmp_path / "missing"}


def test_register_competition_validates_at_once_and_reports_every_problem(
    make_competition: Callable[..., Path],
) -> None:
    """Issue 11: register_competition() accepted an invalid toml and failed only at make()."""
    folder = make_competition("bad-comp", aliases=("bad",), register=False)
    _edit(folder, "lower_is_better = false", 'lower_is_better = "no"')  # 1: wrong type
    _edit(folder, 'kind = "probability"', 'kind = "probabilty"')  # 2: a misspelled value
    _edit(folder, "[submission]\n", "[submission]\nid_colum = \"id\"\n")  # 3: a misspelled key
    _edit(folder, 'helper = "split_csv"', 'helper = "split_cvs"')  # 4: an unknown helper (a semantic check)
    with pytest.raises(CompetitionSpecErrors) as info:
        register_competition(folder)
    err = info.value
    path = str(folder / "competition.toml")
    assert isinstance(err, CompetitionSpecError) and err.path == path
    by_field = {e.field: e.problem for e in err.errors}
    assert set(by_field) == {"metric.lower_is_better", "submission.kind", "submission.id_colum", "prepare.helper"}
    assert all(e.path == path for e in err.errors)
    assert "is not of type 'boolean'" in by_field["metric.lower_is_better"]
    assert "did you mean 'probability'" in by_field["submission.kind"]
    assert by_field["submission.id_colum"] == "unknown key 'id_colum'; did you mean 'id_column'?"
    assert "did you mean 'split_csv'" in by_field["prepare.helper"]
    text = str(err)
    assert text.startswith(f"{path}: 4 problems:") and "field 'submission.id_colum': unknown key" in text
    with pytest.raises(UnknownCompetition):  # nothing was registered
        get_spec("bad-comp")
    _edit(folder, "id_colum = \"id\"\n", "")  # fix all but one: a single problem raises the plain error
    _edit(folder, 'lower_is_better = "no"', "lower_is_better = false")
    _edit(folder, 'kind = "probabilty"', 'kind = "probability"')
    with pytest.raises(CompetitionSpecError, match="field 'prepare.helper': unknown helper 'split_cvs'") as one:
        register_competition(folder)
    assert not isinstance(one.value, CompetitionSpecErrors)
    _edit(folder, 'helper = "split_cvs"', 'helper = "split_csv"')
    assert register_competition(folder) == ["bad-comp"] and get_spec("bad").id == "bad-comp"


def test_a_misspelled_source_type_and_source_key_get_suggestions(tmp_path: Path) -> None:
    folder = _copy_insults(tmp_path)
    _edit(folder, 'type = "pypi"', 'type = "pypy"')
    with pytest.raises(CompetitionSpecError, match=r"field 'sources\[0\]\.type': unknown source type 'pypy'; "
                                                   r"did you mean 'pypi'\?"):
        load_spec(folder)
    folder = _copy_insults(tmp_path / "again")
    _edit(folder, "filename = ", "file_name = ")
    with pytest.raises(CompetitionSpecErrors) as info:
        load_spec(folder)
    problems = {e.field: e.problem for e in info.value.errors}
    assert problems["sources[0].file_name"] == "unknown key 'file_name'; did you mean 'filename'?"
    assert "'filename' is a required property" in problems["sources[0]"]


def test_the_helper_names_a_spec_accepts_are_the_recipes_prepare_runs() -> None:
    from mle_env.competition.spec import PREPARE_HELPERS
    from mle_env.prepare.helpers import HELPERS

    assert sorted(PREPARE_HELPERS) == sorted(HELPERS)
