"""ReactPolicy: reading actions out of model replies, the history, the budget guard, and whole episodes
with a real local model."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from llm_fixture import FakeOpenAI, chat_body, fake_llm, llm_base_url  # noqa: F401 - fixtures

import mle_env
from mle_env.agents.llm import LLMClient, LLMConfig, LLMError, ToolCall
from mle_env.agents.program_template import part_of
from mle_env.agents.react import (
    CORRECTION,
    PART_FAILED,
    PART_RAN,
    REPEAT,
    RERUN,
    History,
    ReactPolicy,
    Turn,
)
from mle_env.observation import make_observation
from mle_env.prepare.runner import prepare
from mle_env.recording import read_trajectory


def obs(action: str = "reset", *, stdout: str = "", exit_code: int = 0, steps_left: int = 20,
        time_left: float = 3600.0) -> dict[str, Any]:
    return make_observation(task="Predict y from x. Write ./submission/submission.csv.", files="data/train.csv  1 KB",
                            action=action, stdout=stdout, exit_code=exit_code, time_left=time_left,
                            steps_left=steps_left, max_output=10_000)


def policy_for(url: str, **options: Any) -> ReactPolicy:
    """A react policy on a fake server; program="auto" (fill in where the competition allows) unless given."""
    client = LLMClient(LLMConfig(base_url=url, model="fake-model", api_key="k", retry_base_s=0.01, max_retries=1))
    return ReactPolicy(client, **{"program": "auto", **options})


def shell_call(code: str, call_id: str = "call-1") -> list[dict[str, Any]]:
    return [{"id": call_id, "type": "function", "function": {"name": "shell", "arguments": json.dumps({"code": code})}}]


# --- history -------------------------------------------------------------------------------------------
def test_history_stays_under_budget_and_keeps_the_head() -> None:
    history = History("SYSTEM", "TASK " * 100, budget_chars=4_000)
    for i in range(30):
        call = ToolCall("shell", {"code": f"echo {i} " + "x" * 400}, f"c{i}") if i % 2 else None
        history.add(Turn({"type": "shell", "code": "..."}, reply=f"step {i}", call=call,
                         result=f"shell: exit code 0\nstdout:\n{'y' * 600}"))
    messages = history.messages()
    assert history.chars() <= 4_000 and history.left_out > 0
    assert messages[0] == {"role": "system", "content": "SYSTEM"} and messages[1]["content"].startswith("TASK")
    assert f"{history.left_out} earlier step(s) were left out" in messages[1]["content"]
    assert messages[-1]["content"].endswith("y" * 600)  # the newest result is whole
    for message, answer in zip(messages, messages[1:], strict=False):  # every tool call is answered
        if message.get("tool_calls"):
            assert answer["role"] == "tool" and answer["tool_call_id"] == message["tool_calls"][0]["id"]


# --- the policy against a scripted server --------------------------------------------------------------
def test_budget_guard_validates_then_submits(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("```bash\nls data\n```"))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(steps_left=4), {})
    assert policy.act(obs(steps_left=4), {}) == {"type": "shell", "code": "ls data\n"}
    notes = policy.annotations()
    assert notes["llm"]["content"] == "```bash\nls data\n```" and notes["react"] == {"source": "text"}
    assert policy.act(obs("shell", stdout="train.csv", steps_left=2), {}) == {"type": "validate"}
    assert policy.act(obs("validate", stdout="valid", steps_left=1), {}) == {"type": "submit"}
    assert len(fake_llm.requests) == 1 and policy.annotations() == {"react": {"source": "budget"}}
    last = fake_llm.requests[0]["messages"]
    assert last[0]["role"] == "system" and "data/train.csv" in last[1]["content"]


def test_time_running_out_also_ends_the_episode(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    assert policy.act(obs(steps_left=-1, time_left=30), {}) == {"type": "validate"}
    assert policy.act(obs("validate", stdout="no ./submission/submission.csv", steps_left=-1, time_left=20),
                      {}) == {"type": "submit"}
    assert fake_llm.requests == []


def test_tool_calls_drive_the_loop_and_are_answered(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("", tool_calls=shell_call("ls data", "abc")))
    fake_llm.reply(200, chat_body("", tool_calls=[{"id": "s", "type": "function",
                                                   "function": {"name": "submit", "arguments": "{}"}}]))
    fake_llm.reply(200, chat_body("", tool_calls=shell_call("python code/fix.py", "def")))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    assert policy.act(obs(), {}) == {"type": "shell", "code": "ls data"}
    assert policy.annotations()["react"] == {"source": "tool_call"}
    # the model submits before any validation: the policy validates first ...
    assert policy.act(obs("shell", stdout="train.csv\ntest.csv"), {}) == {"type": "validate"}
    assistant, tool = fake_llm.requests[1]["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "abc" and tool == {
        "role": "tool", "tool_call_id": "abc",
        "content": "shell: exit code 0\nstdout:\ntrain.csv\ntest.csv\nbudget left: 3600 s, 20 steps"}
    # ... and the submission is invalid, so the model is asked again instead of submitting
    assert policy.act(obs("validate", stdout="missing column y", exit_code=1), {})["code"] == "python code/fix.py"
    assert "validated before it is submitted" in fake_llm.requests[2]["messages"][-1]["content"]


def test_submit_follows_a_valid_validation(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("submit"))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    assert policy.act(obs(), {}) == {"type": "validate"}
    assert policy.act(obs("validate", stdout="valid"), {}) == {"type": "submit"}
    assert len(fake_llm.requests) == 1


def test_a_reply_without_action_gets_one_correction(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("Let me think about the data first."))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    assert policy.act(obs(), {}) == {"type": "validate"}
    notes = policy.annotations()
    assert notes["react"] == {"source": "fallback"} and [r["content"] for r in notes["llm"]] == [
        "Let me think about the data first."] * 2
    assert fake_llm.requests[1]["messages"][-1] == {"role": "user", "content": CORRECTION}
    fake_llm.responses = [(200, chat_body("Still thinking."), {}), (200, chat_body("```sh\nls\n```"), {})]
    assert policy.act(obs("validate", stdout="no submission", exit_code=1), {}) == {"type": "shell", "code": "ls\n"}
    assert policy.annotations()["react"] == {"source": "correction"}


def test_repeating_a_failed_action_gets_one_correction(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("```bash\npython code/train.py\n```"))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    assert policy.act(obs(), {}) == {"type": "shell", "code": "python code/train.py\n"}
    policy.annotations()
    failed = obs("shell", exit_code=2)
    assert policy.act(failed, {}) == {"type": "shell", "code": "python code/train.py\n"}  # a second repeat is run
    assert fake_llm.requests[2]["messages"][-1] == {"role": "user", "content": REPEAT}
    assert len(fake_llm.requests) == 3 and policy.annotations()["react"] == {"source": "correction"}


def test_running_an_action_a_third_time_gets_one_correction(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    """A real 1.5B loop: ls, mkdir, ls, mkdir, ls, though each succeeded (one rerun is allowed: it may follow
    an edit)."""
    for reply in ("```bash\nls data\n```", "```bash\nmkdir -p submission\n```") * 2 + (
            "```bash\nls data\n```", "```python\nprint(1)\n```"):
        fake_llm.reply(200, chat_body(reply))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    codes = [policy.act(obs() if i == 0 else obs("shell"), {})["code"] for i in range(5)]
    assert codes == ["ls data\n", "mkdir -p submission\n", "ls data\n", "mkdir -p submission\n", "print(1)\n"]
    assert fake_llm.requests[5]["messages"][-1] == {"role": "user", "content": RERUN}
    assert policy.annotations()["react"] == {"source": "correction"}
    assert all(r["messages"][-1]["content"] != RERUN for r in fake_llm.requests[:5])


def test_an_unreachable_server_costs_steps_then_raises() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    policy = policy_for(url, max_llm_failures=2)
    policy.reset(obs(), {})
    assert policy.act(obs(), {}) == {"type": "validate"}
    assert "did not answer" in policy.annotations()["llm_error"]
    with pytest.raises(LLMError, match="did not answer"):
        policy.act(obs("validate", stdout="no submission", exit_code=1), {})


def test_a_refused_key_raises_at_once(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(401, {"error": {"message": "bad key"}})
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), {})
    with pytest.raises(LLMError, match="MLE_ENV_LLM_API_KEY"):
        policy.act(obs(), {})


# --- a whole episode with the real model ---------------------------------------------------------------
@pytest.mark.llm
@pytest.mark.slow
def test_react_episode_on_house_prices(llm_base_url: str, home: Path) -> None:  # noqa: F811
    prepare("practice-house-prices")
    env = mle_env.make("practice-house-prices", sandbox="local", step_limit=4)
    policy = ReactPolicy(base_url=llm_base_url, api_key="none", max_tokens=256, program="auto")
    result = mle_env.run_episode(env, policy, seed=0)
    assert result.status == "ok" and result.grade is not None and result.steps <= 4, result.error
    steps = [r for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"]
    kinds = [s["action"]["type"] for s in steps]
    assert kinds[-1] == "submit" and "validate" in kinds  # validated before the end, whatever the model did
    calls = [c for s in steps for c in _as_list(s.get("policy", {}).get("llm"))]
    assert calls
    for call in calls:
        assert (call["content"].strip() or call["tool_calls"]) and call["prompt_tokens"] > 0
        assert call["completion_tokens"] > 0 and call["latency_s"] > 0
    usage = policy.llm.usage()
    print(f"\n{usage['calls']} LLM calls, {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion "
          f"tokens, {usage['latency_s'] / usage['calls']:.1f} s per call; episode {result.wall_time_s:.1f} s; "
          f"grade {result.grade.to_dict().get('score')} valid={result.grade.to_dict().get('valid_submission')}")


def _as_list(value: Any) -> list[dict[str, Any]]:
    return [] if value is None else value if isinstance(value, list) else [value]


# --- the data preview and the submission rules -------------------------------------------------------
INFO = {"metric": {"name": "auc", "lower_is_better": False}, "domain": "text",
        "submission": {"header": ["id", "great"], "id_column": "id", "targets": ["great"], "kind": "probability",
                       "sample": "sample_submission.csv"}}


def test_the_harness_previews_the_data_and_the_task_states_the_submission_rules(
    fake_llm: FakeOpenAI,  # noqa: F811
) -> None:
    fake_llm.reply(200, chat_body("```bash\nls data\n```"))
    policy = policy_for(fake_llm.url)
    policy.reset(obs(), INFO)
    first = policy.act(obs(), INFO)
    assert first["type"] == "shell" and "python3 - <<'MLE_ENV_EOF'" in first["code"] and not fake_llm.requests
    assert policy.annotations() == {"react": {"source": "preview"}}
    preview = "./data/train.csv: 3 rows, 2 columns: id (text), great (number)"
    assert policy.act(obs("shell", stdout=preview), INFO) == {"type": "shell", "code": "ls data\n"}
    task, shown = fake_llm.requests[0]["messages"][1]["content"], fake_llm.requests[0]["messages"][2]["content"]
    assert task.startswith("Predict y from x.") and "header must be exactly `id,great`" in task
    assert "auc (higher is better)" in task and "roc_auc_score" in task and "# How to proceed" in task
    # the competition's fill-in program: the fixed lines around the names the model completes
    assert "\nX_test = ...  # the features of " in task and "from sklearn.metrics import roc_auc_score" in task
    # the lines after the part are told, not shown (small models copied them into their part)
    assert "prints the auc as VALIDATION_SCORE" in task and "columns ['id', 'great'])" in task
    assert "agg(' '.join" not in task and "model.fit(" not in task
    assert shown.startswith("(The harness ran shell itself.)") and preview in shown


def test_no_preview_without_the_submission_format_or_when_turned_off(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body("```bash\nls data\n```"))
    fake_llm.reply(200, chat_body("```bash\nls data\n```"))
    for info, options in (({}, {}), (INFO, {"preview": False})):
        policy = policy_for(fake_llm.url, **options)
        policy.reset(obs(), info)
        assert policy.act(obs(), info) == {"type": "shell", "code": "ls data\n"}
        assert "# Submission rules" not in fake_llm.requests[-1]["messages"][1]["content"]


def test_medal_and_version_sections_are_left_out_of_the_task() -> None:
    from mle_env.agents.react import without_sections

    task = ("# T\n\n## Description\nPredict.\n\n## Medals\nInstall with `mle-env prepare x --leaderboard PATH`.\n\n"
            "## Version history\n- v0: split.\n\n# Your environment\n- ./data/\n")
    kept = without_sections(task)
    assert "mle-env prepare" not in kept and "Version history" not in kept and "v0: split" not in kept
    assert kept.startswith("# T\n\n## Description\nPredict.\n") and kept.endswith("# Your environment\n- ./data/\n")


# --- fill-in parts -----------------------------------------------------------------------------------
# Real replies of Qwen2.5-Coder-1.5B to react's earlier prompt (copy the whole program and fill it in):
# mnist's copied the outline without filling anything in; insults' filled the part in place.
RECORDED = {r["competition"]: r for r in map(json.loads, (Path(__file__).parent / "data" / "react_fill_replies.jsonl")
                                              .read_text().splitlines())}
PART = ("vectorizer = TfidfVectorizer()\nX = vectorizer.fit_transform(train['text'])\ny = train['great']\n"
        "X_test = vectorizer.transform(test['text'])\nmodel = LogisticRegression()")
FILES = "data/sample_submission.csv  1 KB\ndata/test.csv  1 KB\ndata/train.csv  1 KB"
PREVIEWED = ("./data/sample_submission.csv: 2 rows, 2 columns: id (text), great (number)\n"
             "./data/test.csv: 2 rows, 2 columns: id (text), text (text)\n"
             "./data/train.csv: 3 rows, 3 columns: id (text), text (text), great (number)")


def _as_served(content: str) -> str:
    """A recorded reply as the server sends it when asked to stop at the outline's end-of-part line."""
    from mle_env.agents.program_template import OUTLINE_END

    return content.split(OUTLINE_END, 1)[0]


def _fill_policy(url: str, info: dict[str, Any]) -> ReactPolicy:
    """A policy past the harness's preview step, its template made from ``info`` and :data:`FILES`."""
    policy = policy_for(url)
    start = {**obs(), "files": FILES}
    policy.reset(start, info)
    assert policy.act(start, info)["type"] == "shell"  # the preview
    assert policy.template is not None
    return policy


def test_a_part_alone_runs_inside_the_fixed_lines_and_the_history_shows_the_part(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    from mle_env.agents.program_template import BEGIN, OUTLINE_END

    fake_llm.reply(200, chat_body(f"TF-IDF and a logistic regression.\n```python\n{PART}\n```"))
    fake_llm.reply(200, chat_body("validate"))
    policy = _fill_policy(fake_llm.url, INFO)
    action = policy.act(obs("shell", stdout=PREVIEWED), INFO)
    assert action == {"type": "python", "code": policy.template.assemble(PART)}
    assert action["code"].startswith(policy.template.head) and BEGIN in action["code"]
    assert fake_llm.requests[0]["stop"] == [OUTLINE_END] and "Reply with your part only" in \
        fake_llm.requests[0]["messages"][1]["content"]
    assert policy.act(obs("python", stdout="VALIDATION_SCORE: 0.9"), INFO) == {"type": "validate"}
    # the task's program was made from the preview: it sets y (a column of train.csv), so the part's copy goes
    assert "\ny = train['great']  # the target\n" in fake_llm.requests[0]["messages"][1]["content"]
    assert policy.template.slots == ("X", "X_test", "model")
    ran = PART.replace("y = train['great']\n", "")
    assert fake_llm.requests[1]["messages"][-2] == {
        "role": "assistant", "content": f"TF-IDF and a logistic regression.\n```python\n{ran}\n```"}
    # without a template (no submission format) nothing is wrapped and nothing stops the model
    fake_llm.responses = [(200, chat_body(f"```python\n{PART}\n```"), {})]
    plain = policy_for(fake_llm.url)
    plain.reset(obs(), {})
    assert plain.act(obs(), {}) == {"type": "python", "code": PART + "\n"} and "stop" not in fake_llm.requests[-1]


def test_a_recorded_copied_outline_is_cut_at_its_end_and_its_part_run(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    """insults: the real reply copied the outline and filled the part in place; served with the stop string it
    ends inside its code block, and its part runs inside the fixed lines (the copied head counts once). Its
    `.agg(' '.join, axis=1)` after one column (copied from the fixed lines; a Series has no axis 1) goes."""
    info = {"metric": {"name": "auc", "lower_is_better": False}, "domain": "text",
            "submission": {"header": ["Insult", "Date", "Comment"], "id_column": "Comment", "targets": ["Insult"],
                           "kind": "probability", "sample": "sample_submission_null.csv"}}
    served = _as_served(RECORDED["detecting-insults-in-social-commentary"]["content"])
    assert served.count("```") == 1  # the block is left open
    fake_llm.reply(200, chat_body(served))
    policy = _fill_policy(fake_llm.url, info)
    action = policy.act(obs("shell", stdout=PREVIEWED), info)
    assert [line.split("  #")[0] for line in part_of(action["code"]).splitlines()] == [
        "X = train['Comment'].fillna('').astype(str)", "y = train['Insult']",
        "X_test = test['Comment'].fillna('').astype(str)",
        "model = LogisticRegression(C=4, max_iter=1000)"]
    assert action["code"].count("import pandas as pd") == 1 and action["code"].endswith("index=False)\n")
    assert policy.annotations()["react"] == {"source": "text"} and len(fake_llm.requests) == 1


def test_an_unfilled_outline_is_asked_for_the_names_it_left_out(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    """mnist: the real reply copied the outline with every `name = ...` left as it was; the correction names
    them; when the second reply has no action, the first one's program runs and its tail says what is left."""
    served = _as_served(RECORDED["practice-mnist-digits"]["content"])
    fake_llm.reply(200, chat_body(served))
    fake_llm.reply(200, chat_body("I will fill it in next."))
    policy = _fill_policy(fake_llm.url, INFO)
    action = policy.act(obs("shell", stdout=PREVIEWED), INFO)
    asked = fake_llm.requests[1]["messages"][-1]["content"]
    assert fake_llm.requests[0]["temperature"] == 0.2 and fake_llm.requests[1]["temperature"] == 0.7
    assert asked.startswith("Your part does not define X, X_test, model in Python code.")
    assert policy.annotations()["react"] == {"source": "incomplete_part"}
    assert "\nX = ...  # the features" in part_of(action["code"])  # the tail's assert names what is left as ...


def test_python_that_is_no_part_runs_after_the_data_is_read_until_a_program_ran(
    fake_llm: FakeOpenAI,  # noqa: F811
) -> None:
    look = "X = train.drop(columns=['great'])\nprint(X.shape, X.dtypes)"
    fake_llm.responses = [(200, chat_body(f"```python\n{code}\n```"), {}) for code in (look, "print(1)", PART, look)]
    policy = _fill_policy(fake_llm.url, INFO)
    # no program ran yet, so train is not defined in the interpreter: the head's lines read the data first
    assert policy.act(obs("shell", stdout=PREVIEWED), INFO) == {"type": "python",
                                                                 "code": f"{policy.template.head}\n{look}\n"}
    assert policy.act(obs("python"), INFO) == {"type": "python", "code": "print(1)\n"}  # reads nothing of the head
    assert "# ---- your part: begin ----" in policy.act(obs("python", stdout="1"), INFO)["code"]
    assert policy.act(obs("python", stdout="VALIDATION_SCORE: 0.9"), INFO) == {"type": "python", "code": look + "\n"}


def test_a_debugging_part_runs_after_the_part_it_changes_and_a_repeat_is_seen(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    smaller = "A smaller C.\n```python\nmodel = LogisticRegression(C=0.5)\n```"
    for content in (f"```python\n{PART}\n```", smaller, smaller, "validate"):
        fake_llm.reply(200, chat_body(content))
    policy = _fill_policy(fake_llm.url, INFO)
    policy.act(obs("shell", stdout=PREVIEWED), INFO)
    second = policy.act(obs("python", stdout="VALIDATION_SCORE: 0.9"), INFO)
    assert part_of(second["code"]) == ("vectorizer = TfidfVectorizer()\nX = vectorizer.fit_transform(train['text'])\n"
                                       "X_test = vectorizer.transform(test['text'])\nmodel = LogisticRegression(C=0.5)")
    # the same change again, after it failed, is the same program: the model is told so
    assert policy.act(obs("python", stdout="Traceback ...", exit_code=1), INFO) == {"type": "validate"}
    assert fake_llm.requests[3]["messages"][-1] == {"role": "user", "content": REPEAT}
    # each program's result says what to do next
    assert fake_llm.requests[1]["messages"][-1]["content"].endswith(f"budget left: 3600 s, 20 steps\n{PART_RAN}")
    assert fake_llm.requests[2]["messages"][-1]["content"].endswith(PART_FAILED)


def test_a_python_tool_call_and_a_call_cut_at_the_outline_end_run_as_parts(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    from mle_env.agents.program_template import OUTLINE_END

    call = [{"id": "t1", "type": "function", "function": {"name": "python", "arguments": json.dumps({"code": PART})}}]
    policy = _fill_policy(fake_llm.url, INFO)
    copied = f"{policy.template.outline().split(OUTLINE_END)[0]}{PART}\n{OUTLINE_END}\n..."
    as_text = '<tool_call>\n{"name": "python", "arguments": {"code": ' + json.dumps(copied)
    fake_llm.responses = [(200, chat_body("", tool_calls=call), {}), (200, chat_body(_as_served(as_text)), {})]
    first = policy.act(obs("shell", stdout=PREVIEWED), INFO)
    assert first["code"] == policy.template.assemble(PART) and policy.annotations()["react"] == {"source": "tool_call"}
    second = policy.act(obs("python", stdout="VALIDATION_SCORE: 0.9"), INFO)
    assert part_of(second["code"]) == part_of(first["code"])  # the copied head counts once, the tail is the harness's
    sent = fake_llm.requests[1]["messages"]
    assert json.loads(sent[-2]["tool_calls"][0]["function"]["arguments"]) == {"code": PART}  # as the model wrote it


def test_a_part_cut_off_at_the_token_limit_is_asked_for_what_it_lacks(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    cut = chat_body("```python\nvectorizer = TfidfVectorizer()\nX = vectorizer.fit_transform(train['text'])\n"
                    "X_test = vec")
    cut["choices"][0]["finish_reason"] = "length"
    fake_llm.responses = [(200, cut, {}), (200, chat_body(f"```python\n{PART}\n```"), {})]
    policy = _fill_policy(fake_llm.url, INFO)
    assert policy.act(obs("shell", stdout=PREVIEWED), INFO)["code"] == policy.template.assemble(PART)
    assert fake_llm.requests[1]["messages"][-1]["content"] == (
        "Your part does not define X_test, model in Python code. Answer with your whole part only (X, X_test, "
        "model = ...) as ONE fenced ```python code block. Your reply was cut off at the token limit: keep your "
        "part short.")


def test_an_incomplete_part_that_is_not_python_falls_back_to_validate(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.responses = [(200, chat_body("```python\nX = train[['text'\nmodel = (\n"), {}),  # left open
                          (200, chat_body("Sorry."), {})]
    policy = _fill_policy(fake_llm.url, INFO)
    assert policy.act(obs("shell", stdout=PREVIEWED), INFO) == {"type": "validate"}
    assert policy.annotations()["react"] == {"source": "fallback"}


def test_a_call_cut_inside_an_escape_and_the_notes_after_a_program(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    from mle_env.agents.react import PART_SLOW, _code_of_a_cut_call, _next_step

    assert _code_of_a_cut_call('{"name": "python", "arguments": {"code": "x = \'caf\\u00e9\'\\ny = \'\\u00') == \
        "x = 'café'\ny = '"
    assert _code_of_a_cut_call('{"name": "shell", "arguments": {"code": "ls') == ""  # only python's code is a part
    ran = {"exit_code": 0, "timed_out": 0, "stdout": "VALIDATION_SCORE: 0.9\n"}
    assert _next_step(ran) == PART_RAN and _next_step({**ran, "stdout": ""}) == PART_FAILED  # stopped early
    assert _next_step({**ran, "exit_code": 1}) == PART_FAILED and _next_step({**ran, "timed_out": 1}) == PART_SLOW


def test_a_preview_without_a_training_table_turns_the_fill_in_off(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    fake_llm.reply(200, chat_body(f"```python\n{PART}\n```"))
    policy = _fill_policy(fake_llm.url, INFO)
    action = policy.act(obs("shell", stdout="./data/train/: folder of 10 files, e.g. 0.png"), INFO)
    assert policy.template is None and action == {"type": "python", "code": PART + "\n"}
    assert "stop" not in fake_llm.requests[0] and "write ONE complete Python program" in \
        fake_llm.requests[0]["messages"][1]["content"]


@pytest.mark.slow
def test_a_part_sent_after_a_correction_gives_a_valid_mnist_submission(fake_llm: FakeOpenAI,  # noqa: F811
                                                                       practice_home: Path) -> None:
    """A whole episode on real data: the recorded unfilled outline, the correction, a part that loads the
    images, then validate and submit."""
    part = ("from sklearn.linear_model import LogisticRegression\n"
            "X = np.stack([load_image(f'./data/train/{i}.png') for i in train['id']])\ny = train['label']\n"
            "X_test = np.stack([load_image(f'./data/test/{i}.png') for i in sub['id']])\n"
            "model = LogisticRegression(max_iter=100)")
    for content in (_as_served(RECORDED["practice-mnist-digits"]["content"]), f"```python\n{part}\n```",
                    "validate", "submit"):
        fake_llm.reply(200, chat_body(content))
    env = mle_env.make("practice-mnist-digits", sandbox="local", step_limit=8, time_limit=900)
    result = mle_env.run_episode(env, policy_for(fake_llm.url), seed=0)
    assert result.status == "ok" and result.grade is not None, result.error
    assert result.grade.to_dict()["valid_submission"] is True
    steps = [r for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"]
    assert [s["action"]["type"] for s in steps] == ["shell", "python", "validate", "submit"]
    assert steps[1]["exit_code"] == 0 and "VALIDATION_SCORE" in steps[1]["stdout"]
    assert steps[1]["policy"]["react"] == {"source": "correction"}


@pytest.mark.slow
def test_the_step_that_runs_a_repaired_part_records_what_the_model_wrote_and_what_ran(  # noqa: F811
        fake_llm: FakeOpenAI, practice_home: Path) -> None:  # noqa: F811
    """fine-food: a part that fits the model itself and drops the target from test (which has none), with
    HistGradientBoosting on raw text. The step that runs it records both assembly repairs with the diff of
    the part as written against the part as run; its output has the run-time swap's line."""
    from mle_env.agents.repairs import RUN_LINE

    part = ("X = train['review']\nX_test = test.drop(columns=['great'])['review']\n"
            "model = HistGradientBoostingClassifier(max_iter=20)\nmodel.fit(X, train['great'])")
    for content in (f"```python\n{part}\n```", "validate", "submit"):
        fake_llm.reply(200, chat_body(content))
    env = mle_env.make("practice-fine-food-reviews", sandbox="local", step_limit=8, time_limit=900)
    result = mle_env.run_episode(env, policy_for(fake_llm.url), seed=0)
    assert result.status == "ok" and result.grade is not None and result.grade.to_dict()["valid_submission"]
    steps = [r for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"]
    assert [s["action"]["type"] for s in steps] == ["shell", "python", "validate", "submit"]
    repairs = steps[1]["policy"]["repairs"]
    assert [r["name"] for r in repairs["fired"]] == ["harness_work", "tolerant_test_drop"]
    assert "\n-model.fit(X, train['great'])\n" in repairs["diff"]
    assert "\n+X_test = test.drop(columns=['great'], errors='ignore')['review']\n" in repairs["diff"]
    assert steps[1]["policy"]["llm"]["content"] == f"```python\n{part}\n```"  # what the model wrote, whole
    assert f"{RUN_LINE} sparse_model_swapped: HistGradientBoostingClassifier" in steps[1]["stdout"]
    assert all("repairs" not in s.get("policy", {}) for s in steps[2:])


def test_react_writes_whole_programs_by_default_and_fill_is_chosen(fake_llm: FakeOpenAI) -> None:  # noqa: F811
    from mle_env.agents.loading import AgentError
    from mle_env.agents.program_template import PROGRAMS

    assert PROGRAMS == ("whole", "fill", "auto")
    info = {"submission": {"header": ["Id", "SalePrice"], "id_column": "Id", "targets": ["SalePrice"],
                           "kind": "number", "sample": "sample_submission.csv"},
            "metric": {"name": "rmsle", "lower_is_better": True}, "domain": "tabular"}
    whole = ReactPolicy(LLMClient(LLMConfig(base_url=fake_llm.url, model="m", api_key="k")))
    whole.reset(obs(), info)
    assert whole.program == "whole" and whole.template is None
    auto = policy_for(fake_llm.url)
    auto.reset(obs(), info)
    assert auto.template is not None
    with pytest.raises(AgentError, match="program must be one of whole, fill, auto"):
        policy_for(fake_llm.url, program="half")
    fill = policy_for(fake_llm.url, program="fill")
    fill.reset(obs(), {**info, "metric": {"name": "mean_columnwise_auc", "lower_is_better": False}})
    with pytest.raises(AgentError, match="program='fill' needs a competition with a fill-in program"):
        fill._from_preview("")
