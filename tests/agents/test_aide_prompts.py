"""The LLM proposer's prompts and reply parsing, on recorded real completions of Qwen2.5-Coder (1.5B and
0.5B) kept in tests/agents/data/completions.jsonl, and the failure classifier on real program outputs
(tests/agents/data/real_errors.json: tracebacks of real Python runs; the recorded nodes' outputs)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from mle_env.agents import AgentError
from mle_env.agents.program_template import part_of
from mle_env.scaffolds.aide import prompts
from mle_env.scaffolds.aide.failures import classify, classify_error, classify_validation, counts, traceback_tail
from mle_env.scaffolds.aide.journal import Journal, Node
from mle_env.scaffolds.aide.llm import LLMProposer
from mle_env.scaffolds.aide.proposer import SearchContext
from mle_env.text_interface import extract_code

DATA = Path(__file__).parent / "data"
COMPLETIONS = [json.loads(line) for line in (DATA / "completions.jsonl").read_text().splitlines() if line.strip()]
ERRORS = json.loads((DATA / "real_errors.json").read_text())
SUBMISSION = {"header": ["Id", "SalePrice"], "id_column": "Id", "targets": ["SalePrice"], "kind": "number",
              "sample": "sample_submission.csv"}
PREVIEW = ("./data/sample_submission.csv: 292 rows, 2 columns: Id (number), SalePrice (number)\n"
           "./data/test.csv: 292 rows, 80 columns: Id (number), LotArea (number)\n"
           "./data/train.csv: 1164 rows, 81 columns: Id (number), LotArea (number), SalePrice (number)\n")
TASK = ("# Practice: House Prices\n\n## Description\nPredict the price.\n\n## Medals\nFrom a reference board.\n\n"
        "## Data\n- `train.csv`: houses.\n\n# Your environment\n- Working directory: /home.\n\n# Actions\n- shell")


class FakeLLM:
    """Stands in for LLMClient where only the prompt matters: a context window and max_tokens."""

    def __init__(self, n_ctx: int | None, max_tokens: int = 1024) -> None:
        self.n_ctx = n_ctx
        self.config = type("Config", (), {"max_tokens": max_tokens})()

    def context_window(self, default: int | None = None) -> int | None:
        return self.n_ctx if self.n_ctx is not None else default


def context(journal: Journal, time_left: float = 400, nodes_left: int = 3) -> SearchContext:
    return SearchContext(task=TASK, data_preview=PREVIEW, metric="rmsle", lower_is_better=True, journal=journal,
                         node_timeout=90, submission=SUBMISSION, time_left=time_left, nodes_left=nodes_left)


# --- prompts ----------------------------------------------------------------------------------------
def test_draft_prompt_states_paths_header_metric_and_budget_last(tmp_path: Path) -> None:
    proposer = LLMProposer(llm=FakeLLM(8192), program="whole")
    prompt = proposer.prompt("draft", None, context(Journal(tmp_path / "j.jsonl", {})))
    assert "./data/train.csv: 1164 rows" in prompt and "./submission/submission.csv" in prompt
    assert "header must be exactly `Id,SalePrice`" in prompt and "dtype={'Id': str}" in prompt
    assert "rmsle (lower is better)" in prompt and "mean_squared_log_error" in prompt
    assert "test = pd.read_csv('./data/test.csv')" in prompt  # the outline reads the test rows, not the sample
    assert "sub[['Id', 'SalePrice']].to_csv('./submission/submission.csv', index=False)" in prompt
    # the generic sandbox instructions and the medal rules are left out; the budget is the prompt's end
    assert "# Actions" not in prompt and "reference board" not in prompt and "Predict the price." in prompt
    assert prompt.rstrip().endswith("3 program(s) may still be tried.")
    assert prompt.index("# Program outline") < prompt.index("# Budget")


def test_fill_in_prompts_show_the_fixed_lines_and_only_the_models_part(tmp_path: Path) -> None:
    proposer = LLMProposer(llm=FakeLLM(8192), program="auto")  # house prices has a template (one target, RMSLE)
    ctx = context(Journal(tmp_path / "j.jsonl", {}))
    template = proposer.template(ctx)
    assert template is not None and proposer.system(ctx) == prompts.SYSTEM_FILL
    draft = proposer.prompt("draft", None, ctx)
    assert template.outline() in draft and "# >>> YOUR PART: replace each ..." in draft
    assert "X_test = ...  # the features of the rows of test" in draft
    assert "mean_squared_log_error(y_valid, predict(X_valid)) ** 0.5" in draft  # the harness scores RMSLE
    assert "Write your part of the program" in draft and "(X, X_test, model)" in draft
    assert draft.rstrip().endswith("3 program(s) may still be tried.")
    assert "y = train['SalePrice']" in template.head and template.slots == ("X", "X_test", "model")
    part = "model = Ridge()\nX = train[['LotArea']]\nX_test = test[['LotArea']]"
    # a reply that copies the fixed lines (as small models do) has the copies taken out
    copied = f"{template.head}\n{part}\nmodel.fit(X_train, y_train)  # fit\n{template.tail}"
    assert part_of(template.assemble(copied)) == part
    node = Node(0, "draft", plan="# Plan\n1. **Ridge** on the lot area", code=template.assemble(part), exit_code=1,
                output_head="Traceback (most recent call last):\nKeyError: 'LotArea'\n",
                bug_reason="the program failed with exit code 1: KeyError: 'LotArea'")
    ctx.journal.nodes.append(node)
    for text in (proposer.prompt("debug", node, ctx), proposer.prompt("improve", node, ctx)):
        assert f"```python\n{part}\n```" in text and "your part" in text.lower()
        assert text.count("VALIDATION_SCORE") == 1  # the fixed lines once (the outline), not the node's copy
    assert "- node 0 (draft): Plan 1. Ridge on the lot area -> buggy" in proposer.prompt("draft", None, ctx)
    # fill-in debug hints speak of the part: the harness prints the score and writes the file
    silent = dataclasses.replace(node, exit_code=0, output_head="", bug_reason="the program printed no "
                                 "'VALIDATION_SCORE: <value>' line")
    text = proposer.prompt("debug", silent, ctx)
    assert "(no_score)" in text and "must define every name it leaves as ..." in text
    assert "must print one line" not in text and "write ./submission" not in text.split("# The end of its output")[0]
    assert "The harness writes ./submission/submission.csv from sub" in text  # the Submission section
    assert "(X, X_test, model), uses only columns" in text  # the checklist names this template's slots
    dropped = dataclasses.replace(node, output_head="Traceback (most recent call last):\nKeyError: \"['SalePrice'] not "
                                  "found in axis\"\n", bug_reason="the program failed with exit code 1: KeyError")
    assert "drop 'SalePrice' from train only, never from test" in proposer.prompt("debug", dropped, ctx)
    assert LLMProposer(llm=FakeLLM(8192), program="whole").template(ctx) is None
    with pytest.raises(AgentError, match="program must be one of"):
        LLMProposer(llm=FakeLLM(8192), program="half")
    multi = dataclasses.replace(ctx, submission={**SUBMISSION, "targets": ["a", "b"]})
    assert LLMProposer(llm=FakeLLM(8192), program="auto").template(multi) is None  # whole programs there
    with pytest.raises(AgentError, match="program='fill' needs"):
        LLMProposer(llm=FakeLLM(8192), program="fill").template(multi)


class ReplayLLM(FakeLLM):
    """Answers with recorded real replies in turn, keeping what each call was sent."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        super().__init__(8192, max_tokens=800)
        self.replies, self.sent = list(replies), []

    def chat(self, messages: list[dict[str, Any]], stop: list[str] | None = None) -> Any:
        from mle_env.agents.llm import Completion

        self.sent.append({"messages": messages, "stop": stop})
        reply = self.replies.pop(0)
        content = reply["content"]
        for end in stop or []:  # as a server does: the reply ends before the first stop string
            content = content.split(end, 1)[0]
        return Completion(content=content, tool_calls=(), prompt_tokens=2000, completion_tokens=200,
                          latency_s=1.0, cost=None, model=reply.get("model", ""),
                          finish_reason=reply.get("finish_reason", "stop"), retries=0)


def test_a_reply_without_code_is_asked_once_more_and_fill_in_replies_stop_at_the_part_end(tmp_path: Path) -> None:
    """The real 1.5B reply that repeated the prompt's memory (no code) gets one follow-up turn; the second,
    real, reply's part is what the node runs. Fill-in calls stop where a copied outline ends the part."""
    from mle_env.agents.program_template import OUTLINE_END

    no_code = json.loads((DATA / "completion_no_code.json").read_text())
    house = [json.loads(line) for line in (DATA / "completions_fill.jsonl").read_text().splitlines()
             if '"practice-house-prices"' in line][0]
    llm = ReplayLLM([no_code, house])
    proposal = LLMProposer(llm=llm, program="auto").propose("draft", None, context(Journal(tmp_path / "j.jsonl", {})))
    assert extract_code(no_code["content"])[1] == ""  # the recorded reply really has no code
    assert len(llm.sent) == 2 and [c["stop"] for c in llm.sent] == [[OUTLINE_END]] * 2
    follow_up = llm.sent[1]["messages"]
    assert [m["role"] for m in follow_up] == ["system", "user", "assistant", "user"]
    assert follow_up[2]["content"] == no_code["content"] and "Your reply has no code" in follow_up[3]["content"]
    assert "X, X_test, model = ..." in follow_up[3]["content"]
    assert "X_test = test.drop('SalePrice', axis=1, errors='ignore')" in part_of(proposal.code)
    assert len(proposal.llm) == 2  # both calls are kept on the node
    assert "Earlier attempts" not in proposal.plan and "# Instructions" not in proposal.plan  # not the echo
    second = proposal.llm[1]["content"]
    assert OUTLINE_END not in second and "sub[['Id', 'SalePrice']]" not in second
    assert len(llm.sent[0]["messages"]) == 2  # the first call's messages are not changed by the second turn
    # a reply whose part leaves X_test undefined gets the turn too, naming it
    half = {"content": "```python\nX = train.drop(columns=['Id'])\nmodel = Ridge()\n```\nThen predict the test rows."}
    llm = ReplayLLM([half, house])
    proposal = LLMProposer(llm=llm, program="auto").propose("draft", None, context(Journal(tmp_path / "h.jsonl", {})))
    assert "Your part does not define X_test in Python code." in llm.sent[1]["messages"][-1]["content"]
    assert "X_test = test.drop('SalePrice', axis=1, errors='ignore')" in part_of(proposal.code)
    complete = ReplayLLM([house])  # a complete part: one call
    LLMProposer(llm=complete, program="auto").propose("draft", None, context(Journal(tmp_path / "c.jsonl", {})))
    assert len(complete.sent) == 1
    whole = ReplayLLM([no_code, no_code])  # whole programs: the same one retry, no stop
    ctx = context(Journal(tmp_path / "k.jsonl", {}))
    proposal = LLMProposer(llm=whole, program="whole").propose("draft", None, ctx)
    assert proposal.code == "" and [c["stop"] for c in whole.sent] == [None, None]


def test_time_short_says_so() -> None:
    assert "Time is short" in prompts.budget(100, 2, 90) and "Time is short" not in prompts.budget(1000, 2, 90)


def test_memory_is_cut_to_what_the_context_window_leaves(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl", {})
    for i in range(200):
        journal.nodes.append(Node(i, "draft", plan=f"plan number {i} " + "x" * 100, buggy=False, score=0.1 + i))
    roomy = LLMProposer(llm=FakeLLM(32768), memory_chars=100_000).prompt("draft", None, context(journal))
    tight = LLMProposer(llm=FakeLLM(4096), memory_chars=100_000).prompt("draft", None, context(journal))
    unknown = LLMProposer(llm=FakeLLM(None), memory_chars=100_000).prompt("draft", None, context(journal))
    assert len(tight) < len(unknown) < len(roomy)
    assert len(prompts.SYSTEM + tight) / prompts.CHARS_PER_TOKEN <= 4096 - 1024
    assert "plan number 199" in tight and "plan number 0 " not in tight  # the newest nodes are kept
    assert prompts.memory_budget(None, 1024, 5000, 4000) == 4000 and prompts.memory_budget(2048, 1024, 9000, 4000) == 0


def test_debug_prompt_leads_with_class_validator_message_and_traceback_tail() -> None:
    crash = next(e for e in ERRORS if e["name"] == "wrong_columns")
    node = Node(3, "draft", code=crash["code"], exit_code=1, output_head="x" * 5000 + crash["output"],
                bug_reason="the program failed with exit code 1: KeyError: 'SalePrice'")
    text = prompts.debug("CONTEXT", node, 2000)
    assert "# What went wrong (wrong_columns)" in text and "use only the columns listed" in text
    assert text.count("KeyError: 'SalePrice'") == 2 and "xxxxxxxxxx" not in text  # the tail, not the head
    rejected = Node(4, "draft", code="print(1)", exit_code=0, score=0.5, validation="missing 1 column(s): 'Id'",
                    bug_reason="the validator rejected the submission: missing 1 column(s): 'Id'")
    assert "The validator said: missing 1 column(s): 'Id'" in prompts.debug("CONTEXT", rejected, 2000)
    assert "(wrong_columns)" in prompts.debug("CONTEXT", rejected, 2000)


# --- parsing recorded completions -------------------------------------------------------------------
@pytest.mark.parametrize("record", COMPLETIONS, ids=[f"{r['model']}-{r['operator']}-{i}"
                                                     for i, r in enumerate(COMPLETIONS)])
def test_recorded_completion_parses_to_its_program(record: dict[str, Any]) -> None:
    plan, code = extract_code(record["content"])
    expect = record["expect"]
    assert "```" not in code and ("VALIDATION_SCORE" in code) == expect["score_line"]
    if expect["compiles"]:
        compile(code, "<completion>", "exec")
    else:  # a reply cut off at max_tokens: the code written so far, which Python rejects
        assert record["finish_reason"] == "length" and code.strip()
        with pytest.raises(SyntaxError):
            compile(code, "<completion>", "exec")
    assert code == record["node"]["code"]  # what the policy ran then is what the parser gives now
    assert plan and not plan.startswith("```")


@pytest.mark.parametrize("record", COMPLETIONS, ids=[f"{r['model']}-{i}" for i, r in enumerate(COMPLETIONS)])
def test_recorded_node_gets_its_failure_class(record: dict[str, Any]) -> None:
    assert classify(record["node"]) == record["expect"]["failure"]


@pytest.mark.parametrize(("reply", "code"), [
    # several blocks: the program, not the pip line or the usage example
    ("First:\n```bash\npip install x\n```\nThen:\n```python\nimport os\nprint('VALIDATION_SCORE: 1')\n```\n"
     "Run it with:\n```python\npython solution.py\n```", "import os\nprint('VALIDATION_SCORE: 1')\n"),
    # an upper-case fence label
    ("Plan.\n```Python\nimport os\n```", "import os\n"),
    # no fence, prose first: the code starts at its first import
    ("Here is the program:\nimport pandas as pd\nprint(pd.__version__)",
     "import pandas as pd\nprint(pd.__version__)\n"),
])
def test_extract_code_is_robust_to_small_model_habits(reply: str, code: str) -> None:
    assert extract_code(reply)[1] == code


# --- the failure classifier -------------------------------------------------------------------------
@pytest.mark.parametrize("error", ERRORS, ids=[e["name"] for e in ERRORS])
def test_real_tracebacks_are_classified(error: dict[str, Any]) -> None:
    expected = {"indent": "syntax", "wrong_columns_sklearn": "wrong_columns"}.get(error["name"], error["name"])
    assert error["exit_code"] != 0 and classify_error(error["output"]) == expected
    node = Node(0, "draft", code=error["code"], exit_code=error["exit_code"], output_head=error["output"])
    assert classify(node) == expected


def test_classes_of_nodes_that_ran() -> None:
    assert classify(Node(0, "draft", code="", bug_reason="the proposer wrote no code")) == "no_code"
    assert classify(Node(0, "draft", code="x", timed_out=True, exit_code=-9)) == "timeout"
    assert classify(Node(0, "draft", code="x", exit_code=0)) == "no_score"
    assert classify(Node(0, "draft", code="x", exit_code=0, score=1.0, validation="there is no submission file at "
                         "/home/code/node_0/submission/submission.csv")) == "wrong_path"
    assert classify(Node(0, "draft", code="x", exit_code=0, score=1.0,
                         validation="the submission has 3 rows but the test set has 292")) == "invalid_submission"
    assert classify_validation("there is no ./submission/submission.csv yet") == "wrong_path"
    assert classify_validation("missing 1 column(s): 'Id'; the sample submission shows the expected header") == \
        "wrong_columns"
    assert classify(Node(0, "draft", code="x", exit_code=0, score=1.0, buggy=False)) == "ok"
    assert counts([Node(0, "draft", code=""), Node(1, "draft", code="x", exit_code=0)]) == {"no_code": 1,
                                                                                           "no_score": 1}
    assert traceback_tail("a\nTraceback (most recent call last):\n  x\nKeyError: 1\n", 2) == "  x\nKeyError: 1"


def test_debug_prompt_of_a_reply_cut_off_asks_for_a_shorter_program() -> None:
    record = next(r for r in COMPLETIONS if r["finish_reason"] == "length")
    node = Node(2, "draft", **{k: v for k, v in record["node"].items() if k != "llm"}, llm=record["node"]["llm"])
    text = prompts.debug("CONTEXT", node, 2000)
    assert "# What went wrong (syntax)" in text and "cut off at the token limit" in text
    assert "SyntaxError" in text


def test_debug_prompt_names_the_parameters_of_hist_gradient_boosting() -> None:
    """The 1.5B model's habit (house prices, 5 of 14 nodes in a pilot): n_estimators for HistGradientBoosting*."""
    output = ("Traceback (most recent call last):\n  File \"/home/code/node_3/solution.py\", line 17, in <module>\n"
              "    model = HistGradientBoostingRegressor(n_estimators=100, learning_rate=0.1)\n"
              "TypeError: HistGradientBoostingRegressor.__init__() got an unexpected keyword argument 'n_estimators'\n")
    node = Node(3, "improve", code="X = train\nmodel = HistGradientBoostingRegressor(n_estimators=100)", buggy=True,
                exit_code=1, output_head=output, bug_reason="the program failed with exit code 1: TypeError: ...")
    prompt = prompts.debug("# Task", node, 2000)
    assert "take max_iter, learning_rate, max_depth (not n_estimators)" in prompt
    other = dataclasses.replace(node, output_head="KeyError: 'a'")
    assert "not n_estimators" not in prompts.debug("# Task", other, 2000)
