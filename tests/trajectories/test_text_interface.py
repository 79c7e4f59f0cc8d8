"""The shared text interface: model replies to actions, actions to tool calls, observations to text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mle_env.actions import parse_action
from mle_env.agents.llm import ToolCall
from mle_env.observation import make_observation
from mle_env.text_interface import (
    TOOL_NAMES,
    TOOLS,
    action_to_tool_call,
    extract_code,
    parse_reply,
    parse_text_action,
    render_observation,
    render_result,
    render_task,
    tool_to_action,
)


def obs(action: str = "reset", **fields: Any) -> dict[str, Any]:
    values = {"stdout": "", "stderr": "", "exit_code": 0, "message": "", "time_left": 3599.4, "steps_left": 20}
    values.update(fields)
    return make_observation(task="Predict y from x.\n", files="data/train.csv  1 KB", action=action,
                            max_output=10_000, **values)


# --- plain-text replies --------------------------------------------------------------------------------
@pytest.mark.parametrize(("reply", "expected"), [
    ('{\n"name": "shell",\n"arguments": {\n  "code": "ls -l ./data"\n}\n}', {"type": "shell", "code": "ls -l ./data"}),
    ('Calling: {"name": "python", "arguments": "{\\"code\\": \\"print(1)\\"}"}',
     {"type": "python", "code": "print(1)"}),
    ('```json\n{"type": "python", "code": "x = 1", "timeout": 30}\n```',
     {"type": "python", "code": "x = 1", "timeout": 30.0}),
    ('{"function": {"name": "validate", "arguments": {}}}', {"type": "validate"}),
    ('```json\n{\n  "name": "python",\n  "arguments": {\n    "code": """\n    import os\n    print(1)\n    """\n'
     '  }\n}\n```',
     {"type": "python", "code": "import os\nprint(1)\n"}),
    ('{"name": "python", "arguments": {"code": """\nimport os\n', None),  # cut off by max_tokens
    ("First I look at the data.\n```bash\nhead -n 3 data/train.csv\n```\nThen I model it.",
     {"type": "shell", "code": "head -n 3 data/train.csv\n"}),
    ("```python\nimport pandas as pd\nprint(pd.read_csv('data/train.csv').shape)\n```",
     {"type": "python", "code": "import pandas as pd\nprint(pd.read_csv('data/train.csv').shape)\n"}),
    ("```\nimport os\nprint(os.listdir('data'))\n```",
     {"type": "python", "code": "import os\nprint(os.listdir('data'))\n"}),
    ("```\nwc -l data/*.csv\n```", {"type": "shell", "code": "wc -l data/*.csv\n"}),
    ('The dict {"a": 1} is not an action, but\n```sh\nls\n```', {"type": "shell", "code": "ls\n"}),
    ("The file looks right.\n\nvalidate", {"type": "validate"}),
    ("```python\nvalidate\n```", {"type": "validate"}),  # the 1.5B model's, on insults
    ("```\nsubmit()\n```", {"type": "submit"}),
    ("Action: submit()", {"type": "submit"}),
    ("I will submit once the submission is ready.", None),
    ("I think we should first understand the data.", None),
    ("", None),
])
def test_parse_text_action(reply: str, expected: dict[str, Any] | None) -> None:
    assert parse_text_action(reply) == expected


def test_a_reply_cut_off_in_its_code_or_after_it() -> None:
    from mle_env.text_interface import cut_in_code

    assert cut_in_code("Plan.\n```python\nx = 1\ny = fo", "length") and cut_in_code("import os\nx = ", "length")
    assert not cut_in_code("```python\nx = 1\n```\nThis model should do well bec", "length")
    assert not cut_in_code("Plan.\n```python\nx = 1\ny = fo", "stop")


def test_tool_to_action_accepts_common_variants() -> None:
    assert tool_to_action("bash", {"command": "ls"}) == {"type": "shell", "code": "ls"}
    assert tool_to_action("python", {"code": "1", "timeout": True}) == {"type": "python", "code": "1"}
    assert tool_to_action("shell", {"code": "  "}) is None and tool_to_action("browse", {"url": "x"}) is None
    assert tool_to_action("shell", {"_raw": "ls"}) is None and tool_to_action("Submit", {}) == {"type": "submit"}


def test_tools_are_the_four_actions_with_json_schema_parameters() -> None:
    names = [tool["function"]["name"] for tool in TOOLS]
    assert tuple(names) == TOOL_NAMES == ("shell", "python", "validate", "submit")
    for tool in TOOLS:
        assert tool["type"] == "function" and tool["function"]["description"]
        assert tool["function"]["parameters"]["type"] == "object"
    assert TOOLS[0]["function"]["parameters"]["required"] == ["code"]


@pytest.mark.parametrize("action", [
    {"type": "shell", "code": "ls data"},
    {"type": "python", "code": "print(1)", "timeout": 30.0},
    {"type": "validate"},
    {"type": "submit"},
])
def test_an_action_round_trips_through_its_tool_call(action: dict[str, Any]) -> None:
    call = action_to_tool_call(action)
    assert call["name"] in TOOL_NAMES and "type" not in call["arguments"]
    assert tool_to_action(call["name"], call["arguments"]) == action
    assert parse_action(tool_to_action(call["name"], json.loads(json.dumps(call["arguments"])))) is not None


def test_parse_reply_prefers_tool_calls_in_any_common_shape() -> None:
    text = "```bash\nls\n```"
    assert parse_reply(text, [ToolCall("python", {"code": "x = 1"}, "c1")]) == {"type": "python", "code": "x = 1"}
    openai_shape = {"id": "c", "type": "function", "function": {"name": "shell", "arguments": '{"code": "pwd"}'}}
    assert parse_reply("", [openai_shape]) == {"type": "shell", "code": "pwd"}
    assert parse_reply("", [{"name": "submit", "arguments": {}}]) == {"type": "submit"}
    # an unusable call (unknown tool, arguments that are not JSON) falls through to the next, then the text
    broken = [{"name": "browse", "arguments": {}}, {"function": {"name": "shell", "arguments": "{not json"}}]
    assert parse_reply(text, broken) == {"type": "shell", "code": "ls\n"}
    assert parse_reply("no action here", []) is None


@pytest.mark.parametrize(("reply", "plan", "code"), [
    ("Plan: use trees.\n```python\nprint(1)\n```\nbye", "Plan: use trees.", "print(1)\n"),
    ("Fit it.\n```python\nimport x\nx.go(", "Fit it.", "import x\nx.go(\n"),  # cut off by max_tokens
    ("import pandas as pd\nprint(2)", "", "import pandas as pd\nprint(2)\n"),
    ("I would rather not.", "I would rather not.", ""),
    ("Try this:\n```\nimport os\n```", "Try this:", "import os\n"),
])
def test_extract_code(reply: str, plan: str, code: str) -> None:
    assert extract_code(reply) == (plan, code)


def test_render_task_and_results() -> None:
    first = obs()
    assert render_task(first) == "Predict y from x.\n\n# Files\ndata/train.csv  1 KB"
    assert render_observation(first) == render_task(first)
    failed = obs("shell", stdout="a" * 5_000, stderr="Traceback: boom", exit_code=2, steps_left=-1)
    text = render_observation(failed, output_chars=1_000)
    assert text.startswith("shell: exit code 2\nstdout:\n") and "stderr:\nTraceback: boom" in text
    assert len(text) < 1_400 and text.endswith("budget left: 3599 s, no step limit")
    timed = render_result(obs("python", exit_code=-1, timed_out=True, message="stopped after 5 s"))
    assert "(timed out)" in timed and "message: stopped after 5 s" in timed and "20 steps" in timed
    forked = render_observation(obs("fork", message="forked from step 3"))
    assert forked.startswith(render_task(first)) and "forked from step 3" in forked
