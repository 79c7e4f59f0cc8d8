"""ReactPolicy: an LLM works through the competition one tool call at a time.

Each step the model sees the system prompt, the task with the data files, and the recent history of its
actions and their results, then calls one tool: ``shell``, ``python``, ``validate`` or ``submit`` (the
environment's four actions). Models and servers without tool calling can answer in plain text instead:
a JSON object naming the tool, a fenced ```bash or ```python block, or a line that says ``validate`` or
``submit`` (:func:`parse_text_action`). A reply with no action, one repeating the action that just
failed, or a shell or python action the model already ran twice (small models loop), gets one short
correction, asked at a temperature of at least :data:`CORRECTION_TEMPERATURE`; a second reply without an
action becomes ``validate``.

Before the model's first turn the harness runs a data preview itself (each file of ./data with its rows,
columns and two example rows); the task is then followed by the submission's exact rules (the path, the
sample submission's header, how to keep its id column), how to compute the metric and, where the
competition has one, its fill-in program (:mod:`mle_env.agents.program_template`, made from the preview:
the fixed lines around ``X = ...``, ``X_test = ...``, ``model = ...``): small models otherwise spend their
steps guessing paths and column names. The model then sends only its part (the code that defines those
names) as a python action, and the policy runs it inside the fixed lines; a reply that copies the outline
is stopped at its end-of-part line, a part that leaves a name undefined gets one correction naming it
(:meth:`ReactPolicy._filled`), and the result of the program says what to do next (validate, or send
the part again, fixed).
Small models that copied the whole outline ran out of tokens before they ran anything. The task's
"Medals" and "Version history" sections are left out (small models run the commands they quote). All
this needs the episode's ``info`` (every MLEEnv episode has it); ``preview=False`` turns it off.

The policy guards the budget itself: when two steps or less than a minute are left it validates the
submission (unless that was just done) and then submits, without asking the model. A ``submit`` asked
for before any validation of the current submission is preceded by a ``validate``.

History is kept under ``history_chars`` characters: the oldest turns are first condensed (their outputs
dropped), then left out; the system prompt and the task are always kept. Every LLM call is attached to
the trajectory (``policy.llm``: one record, or a list when a correction was needed), with the decision's
source under ``policy.react``.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from mle_env.agents.llm import Completion, LLMClient, LLMError, ToolCall
from mle_env.agents.loading import AgentError
from mle_env.agents.policy import BasePolicy
from mle_env.agents.program_template import (
    BEGIN,
    OUTLINE_BEGIN,
    OUTLINE_END,
    PROGRAMS,
    ProgramTemplate,
    names_of,
    part_of,
    program_template,
)
from mle_env.agents.repairs import ALL as ALL_REPAIRS
from mle_env.agents.repairs import parse_repairs
from mle_env.agents.repairs import record as record_repairs
from mle_env.agents.task_facts import APPROACHES, METRIC_HINTS, PREVIEW, approach, submission_facts, without_sections
from mle_env.text_interface import (
    SUBMIT,
    SYSTEM_PROMPT,
    TOOLS,
    VALIDATE,
    compiles,
    extract_code,
    parse_text_action,
    render_result,
    render_task,
    tool_to_action,
)

CORRECTION = ("Your reply had no action I could run. Reply with exactly one tool call, or one JSON object "
              '{"name": ..., "arguments": {...}}, or one ```bash or ```python block, or the word validate or submit.')
RERUN = ("You ran exactly this action twice before and saw its result. Do the next thing instead: if no program has "
         "written ./submission/submission.csv yet, write that program now as one ```python block.")
REPEAT = ("That is exactly the action that just failed. Read its error and do something different, for example "
          "look at the files or write the missing script first.")

PLAN = ("# How to proceed\nThe harness shows you the data files first. Then write ONE complete Python program in "
        "a single python action: load the data with the exact paths above, hold out 20 % of the training rows, "
        "fit a simple fast model, print the metric on the held-out rows, refit on all rows and write "
        "./submission/submission.csv. Then validate, fix what the validator or the traceback reports, and "
        "submit once it is valid. The data is already in ./data: never install packages or run mle-env "
        "commands.")

PLAN_FILL = ("# How to proceed\nThe harness shows you the data files first. Then write YOUR PART of the program "
             "below: Python code that defines each name the program leaves as `...` ({slots}). Use the exact column "
             "names of the data files, turn text or images into numbers, and select columns with code "
             "(train.drop(columns=[...]), select_dtypes), never by listing many column names. Reply with your part "
             "only, as ONE ```python block: the harness runs it as a python action inside the program's other "
             "lines, which fit the model, print the validation score and write ./submission/submission.csv. Then "
             "validate, fix what the validator or the traceback reports (send your whole part again), and submit "
             "once it is valid. The data is already in ./data: never install packages or run mle-env commands."
             "\n```python\n{outline}\n```")

PART_FAILED = ("(Your part ran inside the program and the program failed: read the error above, then send your "
               "whole part again, fixed, as ONE ```python block.)")

PART_RAN = ("(Your part ran inside the program, which printed its VALIDATION_SCORE and wrote "
            "./submission/submission.csv. Next: validate it, or send a whole improved part.)")

PART_SLOW = ("(Your part's program ran out of time: make it faster (fewer features, a faster model), then send "
             "the whole part again as ONE ```python block.)")

CORRECTION_TEMPERATURE = 0.7
"""The least temperature a correction is asked at: at a low one small models answer it with the same reply."""

_CONDENSED_CHARS = 300
_MIN_HISTORY_CHARS = 4_000


def _same(action: dict[str, Any] | None, other: dict[str, Any] | None) -> bool:
    """Whether two actions run the same thing (timeouts aside)."""
    if action is None or other is None:
        return False
    return (action["type"], action.get("code", "").strip()) == (other["type"], other.get("code", "").strip())


def _reply_text(completion: Completion) -> str:
    """A reply as plain text, its first tool call written as JSON when it has no text."""
    if completion.content.strip():
        return completion.content
    if completion.tool_calls:
        call = completion.tool_calls[0]
        return json.dumps({"name": call.name, "arguments": call.arguments})
    return "(empty reply)"


def fill_template(info: dict[str, Any], data: str = "", repairs: frozenset[str] = ALL_REPAIRS
                  ) -> ProgramTemplate | None:
    """The competition's fill-in program for the episode ``info`` describes, or None when it has none (see
    :mod:`mle_env.agents.program_template`); ``data``: the data preview, or the observation's file listing;
    ``repairs``: those switched on (:mod:`mle_env.agents.repairs`)."""
    submission = info.get("submission")
    if not submission:
        return None
    metric = info.get("metric") or {}
    return program_template(submission, str(metric.get("name", "")), info.get("domain"), data, repairs)


def quick_facts(info: dict[str, Any], data: str = "") -> str:
    """The submission rules and the metric's computation for the episode ``info`` describes, then how to
    proceed (with the competition's fill-in program when it has one, ``data`` being the data preview or the
    observation's file listing: see :func:`fill_template`); "" when ``info`` does not name the submission
    format."""
    return _facts(info, fill_template(info, data))


def _facts(info: dict[str, Any], template: ProgramTemplate | None) -> str:
    submission, metric = info.get("submission"), info.get("metric") or {}
    if not submission:
        return ""
    name = str(metric.get("name", ""))
    direction = "lower is better" if metric.get("lower_is_better") else "higher is better"
    domain = info.get("domain")
    first = f"# Suggested first approach\n{approach(domain, submission)}\n\n" if domain in APPROACHES else ""
    plan = PLAN if template is None else PLAN_FILL.format(outline=template.outline(brief=True),
                                                          slots=", ".join(template.slots))
    hint = METRIC_HINTS.get(name, "") if template is None else "The program below computes it."
    return (f"# Submission rules\n{submission_facts(submission)}\n\n# Metric\n{name} ({direction}). "
            f"{hint}\n\n{first}{plan}")


def _next_step(obs: dict[str, Any]) -> str:
    """What the result of a fill-in program tells the model to do next."""
    if int(obs["timed_out"]):
        return PART_SLOW
    ran = int(obs["exit_code"]) == 0 and "VALIDATION_SCORE:" in str(obs["stdout"])
    return PART_RAN if ran else PART_FAILED


_CODE_STRING = re.compile(r'"code"\s*:\s*"((?:[^"\\]|\\.)*)', re.S)


def _code_of_a_cut_call(text: str) -> str:
    """The code of a tool call written as text and cut off inside its ``"code"`` string (a reply stopped at
    the outline's end-of-part line while calling ``python``); "" when ``text`` has none."""
    match = _CODE_STRING.search(text)
    if match is None or '"python"' not in text[:match.start()]:
        return ""
    # the regex stops before a lone backslash; a \u escape may still be cut short. (Code in triple quotes,
    # which is not JSON, matches as "" here: extract_code reads it.)
    raw = re.sub(r"\\u[0-9a-fA-F]{0,3}$", "", match.group(1))
    try:
        return json.loads(f'"{raw}"', strict=False)  # strict=False: raw newlines and tabs in the string
    except ValueError:
        return ""


# --- history -----------------------------------------------------------------------------------------
@dataclass
class Turn:
    """One step: what the model replied (or None when the policy acted itself), the action, its result."""

    action: dict[str, Any]
    reply: str | None = None
    call: ToolCall | None = None
    result: str = ""
    note: str = ""
    condensed: bool = False

    def messages(self) -> list[dict[str, Any]]:
        """The turn as chat messages (a tool-call turn is answered with a ``tool`` message)."""
        result = self.result if not self.condensed else self.result.split("\n", 1)[0] + "\n[output left out]"
        result = f"{self.note}\n{result}" if self.note else result
        reply = _shorten(self.reply or "") if self.condensed else (self.reply or "")
        if self.call is not None:
            arguments = {k: _shorten(v) if self.condensed and isinstance(v, str) else v
                         for k, v in self.call.arguments.items()}
            call = {"id": self.call.id, "type": "function",
                    "function": {"name": self.call.name, "arguments": json.dumps(arguments)}}
            return [{"role": "assistant", "content": reply, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": self.call.id, "content": result}]
        if self.reply is not None:
            return [{"role": "assistant", "content": reply}, {"role": "user", "content": result}]
        return [{"role": "user", "content": f"(The harness ran {self.action['type']} itself.)\n{result}"}]

    def chars(self) -> int:
        return sum(_message_chars(m) for m in self.messages())


def _shorten(text: str) -> str:
    return text if len(text) <= _CONDENSED_CHARS else text[:_CONDENSED_CHARS] + " [...]"


def _message_chars(message: dict[str, Any]) -> int:
    calls = message.get("tool_calls") or ()
    return len(message.get("content") or "") + sum(len(c["function"]["arguments"]) for c in calls)


class History:
    """The conversation: the fixed head (system prompt, task) and the turns, kept under ``budget_chars``."""

    def __init__(self, system: str, task: str, budget_chars: int) -> None:
        self.system, self.task, self.budget_chars = system, task, budget_chars
        self.turns: list[Turn] = []
        self.left_out = 0

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)
        self._fit()

    def shrink(self) -> bool:
        """Halve the budget (not below a floor); False when it cannot shrink any more."""
        if self.budget_chars <= _MIN_HISTORY_CHARS:
            return False
        self.budget_chars = max(_MIN_HISTORY_CHARS, self.budget_chars // 2)
        self._fit()
        return True

    def messages(self) -> list[dict[str, Any]]:
        task = self.task
        if self.left_out:
            task += f"\n\n({self.left_out} earlier step(s) were left out of this conversation to save space.)"
        out = [{"role": "system", "content": self.system}, {"role": "user", "content": task}]
        for turn in self.turns:
            out.extend(turn.messages())
        return out

    def chars(self) -> int:
        return len(self.system) + len(self.task) + sum(t.chars() for t in self.turns)

    def _fit(self) -> None:
        """Condense the oldest turns, then leave them out, until under budget; the last turn stays whole."""
        while self.chars() > self.budget_chars and len(self.turns) > 1:
            older = next((t for t in self.turns[:-1] if not t.condensed), None)
            if older is not None:
                older.condensed = True
            else:
                self.turns.pop(0)
                self.left_out += 1


# --- the policy --------------------------------------------------------------------------------------
class ReactPolicy(BasePolicy):
    """Tool-calling LLM agent; see the module docstring for its behaviour.

    Args:
        llm: the client to use; by default one built from the environment (``LLMConfig.from_env``) with
            ``model``, ``base_url`` and ``api_key`` overriding it when given.
        max_tokens, temperature: per LLM call (a correction is asked at :data:`CORRECTION_TEMPERATURE` at
            least).
        history_chars: the conversation's size limit in characters (halved, down to 4,000, when the server
            says the prompt is too long).
        output_chars: characters kept of each of stdout and stderr in a result (start and end).
        max_llm_failures: LLM calls in a row that may fail (server unreachable after the client's retries)
            before the policy raises; each failure costs a ``validate`` step. Other LLM errors (a refused
            key, an unknown model) raise at once.
        preview: run the data preview and add the submission rules to the task (see the module docstring).
        program: what the model writes: ``"whole"`` (default, as a ReAct agent does: any action it likes),
            ``"fill"`` (only its part of the competition's fill-in program, for small models; an AgentError
            after the preview where the competition has none) or ``"auto"`` (fill in where the competition
            allows it, whole programs elsewhere).
        repairs: in fill-in programs, the repairs of the model's code switched on (:mod:`mle_env.agents.repairs`):
            ``"all"`` (default), ``"none"`` or names separated by commas. The step that runs a repaired part
            records them (``repairs``: each that fired and a diff of the part as written against the part as
            run); run-time repairs print a ``harness repair NAME: ...`` line in the step's output.
    """

    def __init__(
        self, llm: LLMClient | None = None, *, model: str | None = None, base_url: str | None = None,
        api_key: str | None = None, max_tokens: int = 768, temperature: float = 0.2, history_chars: int = 24_000,
        output_chars: int = 2_000, max_llm_failures: int = 3, preview: bool = True, program: str = "whole",
        repairs: str = "all",
    ) -> None:
        super().__init__()
        if program not in PROGRAMS:
            raise AgentError(f"react: program must be one of {', '.join(PROGRAMS)}; got {program!r}")
        try:
            self.repairs = parse_repairs(repairs)
        except ValueError as e:
            raise AgentError(f"react: {e}") from None
        self.program = program
        self._assembled: dict[str, dict[str, Any]] = {}  # program -> what the repairs changed (see _filled)
        self.llm = llm if llm is not None else LLMClient(model=model, base_url=base_url, api_key=api_key)
        self.max_tokens, self.temperature = max_tokens, temperature
        self.history_chars, self.output_chars, self.max_llm_failures = history_chars, output_chars, max_llm_failures
        self.history = History(SYSTEM_PROMPT, "", history_chars)
        self._pending: Turn | None = None
        self._verdict: str | None = None  # "valid"/"invalid" once validated since the last code action
        self._submit_when_valid = False
        self._last_failed: dict[str, Any] | None = None  # the last action, if it was code that failed
        self._failures = 0
        self._steps = 0
        self.preview = preview
        self._preview_due = False
        self._previewing = False  # the pending action is the harness's preview
        self._task = ""
        self._info: dict[str, Any] = {}
        self.template: ProgramTemplate | None = None
        self._last_part = ""  # the part of the last fill-in program run, what a part that changes it builds on

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        super().reset(obs, info)
        template = self._template(info, str(obs.get("files", ""))) if self.preview else None
        facts = _facts(info, template) if self.preview else ""
        self.template, self._last_part = template, ""  # None without a submission format, as facts is ""
        task = render_task({**obs, "task": without_sections(str(obs["task"]))} if facts else obs)
        self._task, self._info = task, info
        self.history = History(SYSTEM_PROMPT, f"{task}\n\n{facts}" if facts else task, self.history_chars)
        self._pending, self._verdict, self._submit_when_valid, self._last_failed = None, None, False, None
        self._preview_due = bool(facts)
        self._failures = self._steps = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        self._observe(obs)
        self._steps += 1
        forced, source = self._guard(obs)
        if forced is None and self._preview_due:
            forced, source = {"type": "shell", "code": f"python3 - <<'MLE_ENV_EOF'\n{PREVIEW}\nMLE_ENV_EOF",
                              "timeout": 60}, "preview"
        self._preview_due, self._previewing = False, source == "preview"
        self._assembled = {}
        turn, source = (Turn(forced), source) if forced is not None else self._ask()
        if turn.action["type"] == "python" and turn.action.get("code") in self._assembled:
            self.annotate(repairs=self._assembled[turn.action["code"]])
        if turn.action["type"] == "submit" and self._verdict is None:
            self._submit_when_valid = True
            turn.action, turn.note = dict(VALIDATE), "(The submission is validated before it is submitted.)"
        self.annotate(react={"source": source})
        self._pending = turn
        return turn.action

    def close(self) -> None:
        """Nothing to release: the LLM client stays usable for the next episode."""

    # -- internals --------------------------------------------------------------------------------------
    def _observe(self, obs: dict[str, Any]) -> None:
        """Record the last action's result in the history and track the submission's validation state."""
        kind = str(obs["action"])
        if kind in ("shell", "python"):
            self._verdict = None
        elif kind == "validate":
            self._verdict = "valid" if str(obs["stdout"]).strip() == "valid" else "invalid"
        self._last_failed = None
        if self._previewing and kind == "shell" and int(obs["exit_code"]) == 0:
            self._from_preview(str(obs["stdout"]))
        self._previewing = False
        if self._pending is not None and kind != "reset":
            filled = kind == "python" and BEGIN in str(self._pending.action.get("code", ""))
            if filled:
                self._last_part = part_of(self._pending.action["code"])
            self._pending.result = render_result(obs, self.output_chars)
            if filled:
                self._pending.result += "\n" + _next_step(obs)
            self.history.add(self._pending)
            if kind in ("shell", "python") and int(obs["exit_code"]) != 0:
                self._last_failed = self._pending.action
        self._pending = None

    def _from_preview(self, preview: str) -> None:
        """The submission rules and the fill-in program made again from the data preview, which shows what
        the file listing does not (the target column, image files named by id): before any LLM call, so the
        task the model reads stays the same for the whole episode."""
        template = self._template(self._info, preview)
        if template is None and self.program == "fill":
            raise AgentError("react: program='fill' needs a competition with a fill-in program (one target column "
                             "and a metric the harness scores); use program='auto' or 'whole'")
        facts = _facts(self._info, template)
        if facts:
            self.history.task = f"{self._task}\n\n{facts}"
            self.template = template

    def _template(self, info: dict[str, Any], data: str) -> ProgramTemplate | None:
        """The fill-in program the model gets (None with program='whole')."""
        return None if self.program == "whole" else fill_template(info, data, self.repairs)

    def _guard(self, obs: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """The action that a pending submit or the budget dictates, if any, and why."""
        if self._submit_when_valid:
            self._submit_when_valid = False
            if self._verdict == "valid":
                return dict(SUBMIT), "submit_after_valid"
        steps_left, time_left = int(obs["steps_left"]), float(obs["time_left"])
        if 0 <= steps_left <= 2 or time_left < 60:
            return (dict(VALIDATE) if self._verdict is None else dict(SUBMIT)), "budget"
        return None, ""

    def _ask(self) -> tuple[Turn, str]:
        """The model's next turn (with one correction round) and where its action came from; attaches
        every LLM call to the trajectory."""
        records: list[dict[str, Any]] = []
        try:
            turn, source = self._converse(records)
            self._failures = 0
            return turn, source
        except LLMError as e:
            if e.kind != "unavailable" or self._failures + 1 >= self.max_llm_failures:
                raise
            self._failures += 1
            self.annotate(llm_error=str(e))
            return Turn(dict(VALIDATE)), "llm_error"
        finally:
            if records:
                self.annotate(llm=records[0] if len(records) == 1 else records)

    def _converse(self, records: list[dict[str, Any]]) -> tuple[Turn, str]:
        """Ask once; a reply without an action, with a fill-in part that leaves names undefined, repeating
        the action that just failed, or running one a third time, is answered with one correction. A second
        reply without an action becomes ``validate`` (or the first reply's incomplete part, which then fails
        with a message naming what it left out); a second repeat is run."""
        first = self._chat([], records)
        action, call = self._action_from(first)
        action, lacking = self._filled(first, action)
        correction = self._correction(action, lacking, first)
        if correction is None:
            assert action is not None
            return self._turn(action, first, call), "tool_call" if call is not None else "text"
        second = self._chat([{"role": "assistant", "content": _reply_text(first)},
                             {"role": "user", "content": correction}], records,
                            max(self.temperature, CORRECTION_TEMPERATURE))
        retry, retry_call = self._action_from(second)
        retry, _ = self._filled(second, retry)
        if retry is None:
            if action is not None and lacking and compiles(action["code"]):
                return self._turn(action, first, call), "incomplete_part"
            return Turn(dict(VALIDATE), second.content, None), "fallback"
        return self._turn(retry, second, retry_call), "correction"

    def _correction(self, action: dict[str, Any] | None, lacking: tuple[str, ...], reply: Completion) -> str | None:
        """What to answer a reply with before running its action (see :meth:`_converse`); None: run it."""
        if action is None:
            return CORRECTION
        if lacking:
            assert self.template is not None
            cut = " Your reply was cut off at the token limit: keep your part short." \
                if reply.finish_reason == "length" else ""
            return self.template.request(lacking) + cut
        if _same(action, self._last_failed):
            return REPEAT
        return RERUN if self._ran_before(action) else None

    def _filled(self, completion: Completion, action: dict[str, Any] | None
                ) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
        """In fill-in mode, the reply's part made the whole program, and the names the part leaves undefined.

        The part is the reply's python action; with no action, the code of a block left open (a reply stopped
        at the outline's end-of-part line, or cut off at the token limit), or of a ``python`` tool call written
        as text and cut off. It runs inside the program's fixed lines (:meth:`ProgramTemplate.assemble`,
        which takes out what copies them; the part of the last fill-in program run is its ``base``) when it
        defines every name the program needs (with the default model, or what ``base`` defines), when it
        copies the outline, or when it comes from a block left open: then the names it leaves undefined are
        returned too. Other python code (a look at the data) runs as it is. Without a template, or for
        another kind of action: ``action`` as it is, and ()."""
        if self.template is None or (action is not None and action["type"] != "python"):
            return action, ()
        code = action["code"] if action is not None else (
            _code_of_a_cut_call(completion.content) or extract_code(completion.content)[1])
        if not code.strip():
            return action, ()
        truncated = action is None and completion.finish_reason == "length"  # a parsed action is whole
        program, lacking, fired, ran = self.template.filled(code, truncated, self._last_part)
        if lacking and action is not None and OUTLINE_BEGIN not in code:
            return {**action, "code": self._after_head(code)}, ()
        if fired:
            self._assembled[program] = record_repairs(code, ran, fired)
        return {**(action or {"type": "python"}), "code": program}, lacking

    def _after_head(self, code: str) -> str:
        """``code`` after the program's first lines (reading the data) when it reads a name they define and
        does not define it, before any fill-in program ran (which defines them in the interpreter)."""
        assert self.template is not None
        if self._last_part:
            return code
        try:
            stores, loads = names_of(ast.parse(code).body)
        except SyntaxError:
            return code
        return f"{self.template.head}\n{code}" if (loads - stores) & self.template.head_names else code

    @staticmethod
    def _turn(action: dict[str, Any], completion: Completion, call: ToolCall | None) -> Turn:
        """The turn that runs ``action``; a fill-in program made from the reply's text shows in the history as
        the reply's plan and the part that ran (not the copied outline, nor a block left open)."""
        reply = completion.content
        if call is None and action["type"] == "python" and BEGIN in action["code"]:
            plan = extract_code(reply)[0]
            reply = (f"{plan}\n" if plan else "") + f"```python\n{part_of(action['code'])}\n```"
        return Turn(action, reply, call)

    def _ran_before(self, action: dict[str, Any]) -> bool:
        """Whether the model already ran this shell or python action twice in this episode: a loop (once
        may be a legitimate rerun, e.g. of a script after editing it)."""
        return action["type"] in ("shell", "python") and sum(
            turn.reply is not None and _same(action, turn.action) for turn in self.history.turns) >= 2

    def _chat(self, extra: list[dict[str, Any]], records: list[dict[str, Any]],
              temperature: float | None = None) -> Completion:
        """One LLM call on the history plus ``extra`` messages; a prompt too long for the model shrinks the
        history and is sent again. In fill-in mode the model is stopped at the outline's end-of-part line (a
        reply that copies the outline has written its part by then)."""
        stop = {"stop": [OUTLINE_END]} if self.template is not None else {}
        while True:
            try:
                completion = self.llm.chat(self.history.messages() + extra, tools=TOOLS, max_tokens=self.max_tokens,
                                           temperature=self.temperature if temperature is None else temperature,
                                           **stop)
            except LLMError as e:
                if e.kind != "context" or not self.history.shrink():
                    raise
                continue
            records.append(completion.record())
            return completion

    def _action_from(self, completion: Completion) -> tuple[dict[str, Any] | None, ToolCall | None]:
        """The action in a reply (its first usable tool call, else its text) and the tool call it came from."""
        for call in completion.tool_calls:
            action = tool_to_action(call.name, call.arguments)
            if action is not None:
                return action, ToolCall(call.name, call.arguments, call.id or f"call_{self._steps}")
        return parse_text_action(completion.content), None
