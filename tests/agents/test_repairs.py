"""The fill-in harness's repairs of a model's code: one registry, each repair reported when it fires and
switchable off (the code then stays as the model wrote it), recorded by both LLM agents."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from llm_fixture import FakeOpenAI, fake_llm  # noqa: F401 - a fixture

from mle_env.agents import AgentError
from mle_env.agents.program_template import ProgramTemplate, program_template
from mle_env.agents.repairs import ALL, REPAIRS, RUN_LINE, fired_at_run, parse_repairs, record

SUBMISSION = {"header": ["id", "great"], "id_column": "id", "targets": ["great"], "sample": "sample_submission.csv"}
PREVIEW = ("data/sample_submission.csv: 2 rows, 2 columns: id (text), great (number)\n"
           "data/test.csv: 2 rows, 2 columns: id (text), text (text)\n"
           "data/train.csv: 3 rows, 3 columns: id (text), text (text), great (number)")
GOOD = "X = train['text']\nX_test = test['text']\nmodel = LogisticRegression()"

# repair -> (the part, the part it changes, cut off at the token limit?, a line the repair changes or removes)
CASES: dict[str, tuple[str, str, bool, str]] = {
    "copied_fixed_line": (f"train = pd.read_csv('./data/train.csv')\n{GOOD}", "", False,
                          "train = pd.read_csv('./data/train.csv')"),
    "unfilled_outline_line": (f"X = ...\n{GOOD}", "", False, "X = ..."),
    "harness_work": (f"{GOOD}\nmodel.fit(X, train['great'])", "", False, "model.fit(X, train['great'])"),
    "cut_reply": (f"{GOOD}\nprint('the cut fell here')", "", True, "print('the cut fell here')"),
    "swapped_tables": ("X = test['text']\nX_test = test['text']\nmodel = LogisticRegression()", "", False,
                       "X = test['text']"),
    "tolerant_test_drop": ("X = train.drop(columns=['great'])['text']\n"
                           "X_test = test.drop(columns=['great'])['text']\nmodel = LogisticRegression()", "", False,
                           "X_test = test.drop(columns=['great'])['text']"),
    "one_column_join": ("X = train['text'].agg(' '.join, axis=1)\nX_test = test['text']\nmodel = LogisticRegression()",
                        "", False, "X = train['text'].agg(' '.join, axis=1)"),
    "after_parent": ("model = LogisticRegression(C=2)", GOOD, False, ""),
    "default_model": ("X = train['text']\nX_test = test['text']", "", False, ""),
}


def template(repairs: frozenset[str] = ALL) -> ProgramTemplate:
    made = program_template(SUBMISSION, "auc", "text", PREVIEW, repairs)
    assert made is not None and made.slots == ("X", "X_test", "model")  # the head sets y
    return made


def test_the_registry_names_every_repair_the_harness_makes_and_no_other() -> None:
    source = (Path(__file__).parents[2] / "agents" / "program_template.py").read_text()
    used = {*re.findall(r"fired\.add\(\"([a-z_]+)\"\)", source), *re.findall(r"_announce\(\"([a-z_]+)\"", source),
            *re.findall(r"\"([a-z_]+)\": (?:swaps|_tolerant_drops|_joins_of_one_column)", source)}  # the edits
    named = set(re.findall(r"\"([a-z_]+)\" in (?:on|self\.repairs|repairs)\b", source))
    assert used == named == set(REPAIRS), (used ^ set(REPAIRS), named ^ set(REPAIRS))
    assert set(CASES) == {r.name for r in REPAIRS.values() if r.when == "assembly"}
    assert all(r.when in ("assembly", "run") and r.what for r in REPAIRS.values())


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_assembly_repair_is_reported_and_switched_off_leaves_the_code_as_written(name: str) -> None:
    part, base, truncated, line = CASES[name]
    on = template().filled(part, truncated, base)
    assert not on.missing and name in on.repairs, on
    assert on.part in on.program
    if line:
        assert line not in on.part.splitlines()
    off = template(ALL - {name}).filled(part, truncated, base)
    assert name not in off.repairs
    if line:  # the rest still repaired, this line as the model wrote it
        assert line in off.part.splitlines() and not off.missing
    else:  # nothing else makes the part complete: it runs as written and fails naming what it lacks
        assert off.missing and off.part == part.strip()
    none = template(frozenset()).filled(part, truncated, base)
    assert none.repairs == () and (none.part == part.strip() or (name == "cut_reply" and none.part == part))


def test_a_part_nothing_changes_reports_no_repair_and_the_record_shows_the_diff() -> None:
    assert template().filled(GOOD).repairs == ()
    part = f"{GOOD}\nmodel.fit(X, train['great'])\nprint(model.score(X, y))"
    filled = template().filled(part)
    assert filled.repairs == ("harness_work",)
    kept = record(part, filled.part, filled.repairs)
    assert kept["fired"] == [{"name": "harness_work", "what": REPAIRS["harness_work"].what}]
    assert "-model.fit(X, train['great'])\n" in kept["diff"] and "-print(model.score(X, y))\n" in kept["diff"]
    assert kept["diff"].startswith("--- model\n+++ ran\n")
    assert len(record("x = 1\n" * 5000, "", ("harness_work",), max_chars=500)["diff"]) < 600


def test_run_time_repairs_are_in_the_tail_only_when_switched_on_and_are_read_back() -> None:
    run = [r.name for r in REPAIRS.values() if r.when == "run"]
    assert all(f"{RUN_LINE} {name}:" in template().tail for name in run)
    for name in run:
        tail = template(ALL - {name}).tail
        assert f"{RUN_LINE} {name}:" not in tail and all(f"{RUN_LINE} {n}:" in tail for n in run if n != name)
    assert RUN_LINE not in template(frozenset()).tail
    out = (f"{RUN_LINE} target_column_dropped: X held the target column 'great': dropped\nVALIDATION_SCORE: 0.9\n"
           f"{RUN_LINE} sparse_model_swapped: ...\n{RUN_LINE} target_column_dropped: again\n"
           f"  {RUN_LINE} not_at_line_start: x\n{RUN_LINE} no_such_repair: x\n")
    assert fired_at_run(out) == ["target_column_dropped", "sparse_model_swapped"]
    assert fired_at_run("") == []


def test_the_option_takes_all_none_or_names_and_refuses_others_in_one_line(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    from mle_env.agents.react import ReactPolicy
    from mle_env.scaffolds.aide.llm import LLMProposer

    assert parse_repairs("all") == ALL and parse_repairs("none") == frozenset() and parse_repairs(None) == ALL
    assert parse_repairs("harness_work, default_model") == {"harness_work", "default_model"}
    assert parse_repairs(["cut_reply"]) == {"cut_reply"}
    with pytest.raises(ValueError, match=r"^unknown repair 'drop_everything': use 'all', 'none' or names from "
                                         r"copied_fixed_line, .*sparse_model_swapped$"):
        parse_repairs("harness_work,drop_everything")
    with pytest.raises(AgentError, match="react: unknown repair 'x'"):
        ReactPolicy(base_url=fake_llm.url, api_key="k", model="m", repairs="x")
    with pytest.raises(AgentError, match="aide: unknown repair 'x'"):
        LLMProposer(llm=object(), repairs="x")
    policy = ReactPolicy(base_url=fake_llm.url, api_key="k", model="m", program="fill", repairs="none")
    assert policy.repairs == frozenset()


def test_aide_nodes_and_their_steps_record_the_repairs_of_a_real_reply(tmp_path: Path) -> None:
    """The real 1.5B house-prices reply drops the target from test (no such column there): repaired, recorded
    on the proposal with the diff; switched off, the part keeps the drop as written."""
    from test_aide_prompts import ReplayLLM, context

    from mle_env.scaffolds.aide.journal import Journal
    from mle_env.scaffolds.aide.llm import LLMProposer

    house = [json.loads(line) for line in (Path(__file__).parent / "data" / "completions_fill.jsonl").read_text()
             .splitlines() if '"practice-house-prices"' in line][0]
    proposal = LLMProposer(llm=ReplayLLM([house]), program="fill").propose(
        "draft", None, context(Journal(tmp_path / "j.jsonl", {})))
    assert proposal.repairs is not None
    assert "tolerant_test_drop" in [r["name"] for r in proposal.repairs["fired"]]
    assert "+X_test = test.drop('SalePrice', axis=1, errors='ignore')" in proposal.repairs["diff"]
    raw = LLMProposer(llm=ReplayLLM([house]), program="fill", repairs="none").propose(
        "draft", None, context(Journal(tmp_path / "k.jsonl", {})))
    assert raw.repairs is None and "errors='ignore'" not in raw.code.split("# ---- your part: begin ----")[1] \
        .split("# ---- your part: end ----")[0]
