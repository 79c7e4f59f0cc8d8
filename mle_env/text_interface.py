"""The text interface: observations as prompts, model output as actions.

One module shared by the bundled LLM agents (``react``, AIDE's LLM proposer) and by every adapter for RL
stacks (OpenEnv, verifiers, TRL) and the trajectory exporter, so that a model sees the same text and may
answer in the same ways wherever it drives an episode.

- :data:`TOOLS`: OpenAI-style tool schemas for the four actions (``shell``, ``python``, ``validate``,
  ``submit``); :func:`tool_to_action` turns a tool call into an action and :func:`action_to_tool_call`
  back.
- :func:`parse_text_action`: the plain-text fallback for models and servers without tool calling (a JSON
  object naming a tool, a fenced code block, or a line that says ``validate`` or ``submit``);
  :func:`parse_reply` takes a whole reply (tool calls first, then its text).
- :func:`extract_code`: the plan and the program of a reply that answers with a whole program (AIDE).
- :func:`render_task`, :func:`render_result`, :func:`render_observation`: an observation as prompt text
  (the task with the data files after ``reset``; after a step the action's result and the budget left).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

from mle_env.actions import ACTION_TYPES
from mle_env.observation import clip

SYSTEM_PROMPT = """\
You are a machine-learning engineer working alone in a sandbox on one competition. You act only through \
four tools:
- shell: run a bash command in the working directory.
- python: run code in one persistent Python interpreter (variables and imports carry over, like notebook cells).
- validate: check ./submission/submission.csv against the required format.
- submit: end the episode; the submission is then scored on a hidden test set.

How to work:
1. Look at the data before modelling: file sizes, columns, a few rows, the sample submission.
2. Keep scripts in ./code and logs in ./logs. Print short summaries, never whole tables.
3. Hold out part of the training data to estimate your score; you will never see the test score.
4. Get a valid submission early with a simple, fast model, then improve it while the budget allows.
5. Write a prediction for every test row to ./submission/submission.csv in exactly the format asked for, \
validate it, and submit once it is valid and you are done.
6. Every result shows the time and steps left. Long training runs can use up the budget.

Call exactly one tool per reply. If you cannot call tools, reply with one JSON object such as \
{"name": "shell", "arguments": {"code": "ls data"}}, or with a single ```bash or ```python code block."""

TOOL_NAMES = ("shell", "python", "validate", "submit")
_CODE_PARAMS = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "the code to run"},
        "timeout": {"type": "number", "description": "seconds before it is stopped (optional)"},
    },
    "required": ["code"],
}
_NO_PARAMS: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": name, "description": text, "parameters": params}}
    for name, text, params in (
        ("shell", "Run a bash command in the working directory; returns stdout, stderr and the exit code.",
         _CODE_PARAMS),
        ("python", "Run Python code in the persistent interpreter; the value of a last expression is printed.",
         _CODE_PARAMS),
        ("validate", "Check ./submission/submission.csv; answers 'valid' or what is wrong.", _NO_PARAMS),
        ("submit", "End the episode and have ./submission/submission.csv scored.", _NO_PARAMS),
    )
]

_ALIASES = {"bash": "shell", "sh": "shell", "shell": "shell", "python": "python", "python3": "python",
            "py": "python", "validate": "validate", "submit": "submit"}
_SHELL_FENCES = {"bash", "sh", "shell", "console", "zsh"}
_PYTHON_FENCES = {"python", "python3", "py"}
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.S)
_PYTHON_LOOK = re.compile(r"^\s*(import \w|from \S+ import|def |print\()", re.M)
_LOOSE_NAME = re.compile(r'"name"\s*:\s*"(\w+)"')
_LOOSE_CODE = re.compile(r'"code"\s*:\s*(?:"""(.*?)"""|\'\'\'(.*?)\'\'\')', re.S)
_KEYWORD = re.compile(r"^\W*(?:action\s*:\s*)?(validate|submit)(?:\(\))?\W*$", re.I | re.M)
VALIDATE: dict[str, Any] = {"type": "validate"}
SUBMIT: dict[str, Any] = {"type": "submit"}


# --- from model output to actions -----------------------------------------------------------------
def tool_to_action(name: Any, arguments: Any) -> dict[str, Any] | None:
    """The environment action for a call of tool ``name`` with ``arguments``, or None if it is unusable.

    Tool names ``bash``/``sh`` mean shell and ``python3``/``py`` python; the code may come as ``code``,
    ``command``, ``cmd`` or ``script``; a positive numeric ``timeout`` is kept.
    """
    kind = _ALIASES.get(str(name).strip().lower()) if isinstance(name, str) else None
    if kind is None:
        return None
    if kind in ("validate", "submit"):
        return {"type": kind}
    args = arguments if isinstance(arguments, dict) else {}
    code = next((args[k] for k in ("code", "command", "cmd", "script") if isinstance(args.get(k), str)), None)
    if not code or not code.strip():
        return None
    action: dict[str, Any] = {"type": kind, "code": code}
    timeout = args.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        action["timeout"] = float(timeout)
    return action


def _json_action(obj: dict[str, Any]) -> dict[str, Any] | None:
    """An action from a JSON object: ``{"name", "arguments"}`` (or tool/function, parameters/args) or an
    action itself (``{"type": "shell", "code": ...}``)."""
    if obj.get("type") in ACTION_TYPES:
        return tool_to_action(obj["type"], obj)
    name, args = obj.get("name") or obj.get("tool"), obj.get("arguments", obj.get("parameters", obj.get("args")))
    function = obj.get("function")
    if isinstance(function, dict):
        name, args = function.get("name"), function.get("arguments", args)
    elif isinstance(function, str) and name is None:
        name = function
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return tool_to_action(name, args)


def _first_json_action(text: str, max_tries: int = 20) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(max_tries):
        if start < 0:
            return None
        try:
            obj, _end = decoder.raw_decode(text, start)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and (action := _json_action(obj)) is not None:
            return action
        start = text.find("{", start + 1)
    return None


def _loose_json_action(text: str) -> dict[str, Any] | None:
    '''An action from the almost-JSON that small models write: a tool ``"name"`` and a ``"code"`` in Python's
    triple quotes, which JSON does not allow. Code cut off before its closing quotes is not taken.'''
    name, code = _LOOSE_NAME.search(text), _LOOSE_CODE.search(text)
    if name is None or code is None:
        return None
    body = code.group(1) if code.group(1) is not None else code.group(2)
    return tool_to_action(name.group(1), {"code": textwrap.dedent(body).strip("\n") + "\n"})


def _fenced_action(text: str) -> dict[str, Any] | None:
    for match in _FENCE.finditer(text):
        language, code = match.group(1).lower(), match.group(2)
        if not code.strip():
            continue
        word = code.strip().lower().removesuffix("()")
        if word in ("validate", "submit"):  # a block of the action's name alone (small models write one)
            return dict(VALIDATE) if word == "validate" else dict(SUBMIT)
        if language in _SHELL_FENCES:
            return {"type": "shell", "code": code}
        if language in _PYTHON_FENCES:
            return {"type": "python", "code": code}
        if not language:
            return {"type": "python" if _PYTHON_LOOK.search(code) else "shell", "code": code}
    return None


def _keyword_action(text: str) -> dict[str, Any] | None:
    words = {m.group(1).lower() for m in _KEYWORD.finditer(text)}
    if "validate" in words:
        return dict(VALIDATE)
    return dict(SUBMIT) if "submit" in words else None


def parse_text_action(text: str) -> dict[str, Any] | None:
    """The action a plain-text reply asks for, or None.

    In order: the first JSON object that names a tool or is an action (also with the code in triple
    quotes, which is not JSON but common); the first fenced code block
    (```bash/```sh → shell, ```python → python, unlabelled → python if it looks like Python, else shell;
    a block of just ``validate`` or ``submit``, that action);
    a line that is just ``validate`` or ``submit`` (validate wins when both appear).
    """
    return _first_json_action(text) or _loose_json_action(text) or _fenced_action(text) or _keyword_action(text)


def render_result(obs: Mapping[str, Any], output_chars: int = 2_000) -> str:
    """A result as the model reads it: action, exit code, stdout/stderr (each cut to ``output_chars``),
    the environment's message and the budget left."""
    lines = [f"{obs['action']}: exit code {int(obs['exit_code'])}" + (" (timed out)" if int(obs["timed_out"]) else "")]
    for key in ("stdout", "stderr"):
        text = str(obs[key]).strip("\n")
        if text:
            lines.append(f"{key}:\n{clip(text, output_chars)}")
    if str(obs["message"]).strip():
        lines.append(f"message: {str(obs['message']).strip()}")
    steps = int(obs["steps_left"])
    steps_text = f"{steps} steps" if steps >= 0 else "no step limit"
    lines.append(f"budget left: {float(obs['time_left']):.0f} s, {steps_text}")
    return "\n".join(lines)


def parse_reply(content: str, tool_calls: Iterable[Any] = ()) -> dict[str, Any] | None:
    """The action a model's reply asks for: its first usable tool call, else :func:`parse_text_action` on
    its text; None when there is none.

    ``tool_calls`` items may be objects with ``name`` and ``arguments`` (``mle_env.agents.llm.ToolCall``),
    OpenAI's ``{"function": {"name", "arguments"}}`` dicts, or ``{"name", "arguments"}`` dicts; arguments
    may be a dict or a JSON string.
    """
    for call in tool_calls:
        name, arguments = _call_parts(call)
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError:
                continue
        if (action := tool_to_action(name, arguments)) is not None:
            return action
    return parse_text_action(content or "")


def _call_parts(call: Any) -> tuple[Any, Any]:
    if isinstance(call, Mapping):
        function = call.get("function")
        if isinstance(function, Mapping):
            return function.get("name"), function.get("arguments")
        return call.get("name"), call.get("arguments")
    function = getattr(call, "function", None)
    if function is not None:
        return getattr(function, "name", None), getattr(function, "arguments", None)
    return getattr(call, "name", None), getattr(call, "arguments", None)


def action_to_tool_call(action: Mapping[str, Any]) -> dict[str, Any]:
    """The tool call (``{"name", "arguments"}``, arguments a dict) that stands for ``action``: the inverse of
    :func:`tool_to_action`. Action types without a tool of their own (``score_dev``) keep their name and
    their other fields as arguments."""
    kind = str(action.get("type"))
    arguments = {k: v for k, v in action.items() if k != "type"}
    return {"name": kind, "arguments": arguments}


# --- programs in replies (AIDE) -----------------------------------------------------------------------
_PROGRAM_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.S | re.I)
_OPEN_PROGRAM_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n", re.I)
_ANY_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.S)
_CODE_START = re.compile(r"^(import \w|from \S+ import|def |class |#!|@|[A-Za-z_]\w* = )", re.M)


def compiles(code: str) -> bool:
    """Whether ``code`` is valid Python."""
    try:
        compile(code, "<reply>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def extract_code(text: str) -> tuple[str, str]:
    """(plan, code) from a reply that answers with a whole program.

    The code is the reply's Python block (```python, ```py or unlabelled, any case): with several, the
    longest one that compiles (else the longest; blocks of shell commands such as ``pip install`` are
    skipped), and the text before the chosen block is the plan. A reply cut off inside its code block keeps
    the code written so far. A reply without a fence is code when it looks like Python: from its first line
    that starts a program (an import, a def, an assignment), the prose before that line being the plan;
    else the reply is a plan with no code.
    """
    blocks = []
    for match in _ANY_FENCE.finditer(text):
        language, body = match.group(1).lower(), match.group(2)
        if language in _PYTHON_FENCES or (not language and _PYTHON_LOOK.search(body)):
            if body.strip():
                blocks.append(match)
    if blocks:
        compiling = [m for m in blocks if compiles(m.group(2))]
        chosen = max(compiling or blocks, key=lambda m: len(m.group(2)))
        return text[: chosen.start()].strip(), chosen.group(2).strip() + "\n"
    match = _PROGRAM_FENCE.search(text)
    if match:
        return text[: match.start()].strip(), match.group(1).strip() + "\n"
    open_fence = _OPEN_PROGRAM_FENCE.search(text)
    if open_fence:
        return text[: open_fence.start()].strip(), text[open_fence.end():].strip() + "\n"
    if not _PYTHON_LOOK.search(text):
        return text.strip(), ""
    start = _CODE_START.search(text)
    if start is None or start.start() == 0:
        return "", text.strip() + "\n"
    return text[: start.start()].strip(), text[start.start():].strip() + "\n"


def cut_in_code(text: str, finish_reason: str | None) -> bool:
    """Whether a reply cut off at the token limit (``finish_reason`` "length") ends inside its code: in a code
    block left open, or in code written without fences (a reply cut in the prose after its block is whole)."""
    return finish_reason == "length" and (text.count("```") % 2 == 1 or "```" not in text)


# --- observations as text -----------------------------------------------------------------------------
def render_task(obs: Mapping[str, Any]) -> str:
    """The task as the model first reads it: the task text, then the data files with their sizes."""
    return f"{str(obs['task']).rstrip()}\n\n# Files\n{obs['files']}"


def render_observation(obs: Mapping[str, Any], output_chars: int = 2_000) -> str:
    """The text for one observation: :func:`render_task` after ``reset`` (and in a fork's first
    observation, followed by its message), :func:`render_result` after every other step."""
    if str(obs["action"]) == "reset":
        return render_task(obs)
    if str(obs["action"]) == "fork":
        return f"{render_task(obs)}\n\n{render_result(obs, output_chars)}"
    return render_result(obs, output_chars)
