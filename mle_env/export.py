"""Trajectories as chat-format training data (``mle-env export``).

:func:`export` finds every trajectory under a run directory (what ``mle-env run`` or ``mle-env eval``
wrote, an episode's folder, or trajectory files) and writes one JSONL line per episode, as the model would
have read and written it through :mod:`mle_env.text_interface`:

``openai-chat``::

    {"messages": [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": render_task(reset observation)},
        {"role": "assistant", "content": "<the model's text, or ''>",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "shell", "arguments": "{\\"code\\": \\"ls data\\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": render_result(step 1's observation)},
        ...],
     "tools": "<TOOLS as a JSON string>",
     "metadata": {...}}

``sharegpt`` (the ShareGPT convention with tools, as LLaMA-Factory reads it: a leading ``system`` turn, then
``human``/``observation`` turns alternating with ``gpt`` turns, ending on a ``gpt`` turn, so the result of
the last action, the end of the episode, is left out)::

    {"conversations": [
        {"from": "system", "value": SYSTEM_PROMPT},
        {"from": "human", "value": render_task(reset observation)},
        {"from": "gpt", "value": "<the model's text>\\n<tool_call>\\n{\\"name\\": \\"shell\\", \\"arguments\\":
                                  {\\"code\\": \\"ls data\\"}}\\n</tool_call>"},
        {"from": "observation", "value": render_result(step 1's observation)},
        ...],
     "tools": "<TOOLS as a JSON string>",
     "metadata": {...}}

A ``gpt`` turn writes its tool call as Hermes/Qwen ``<tool_call>`` JSON, which
:func:`~mle_env.text_interface.parse_text_action` reads back as the same action.

Rules of the conversion:

- Every step becomes one assistant turn and one result turn, whatever the policy: the action is the tool
  call (:func:`~mle_env.text_interface.action_to_tool_call`), so scripted agents and human play give tool
  calls too. Its text is the last LLM reply attached to the step (``policy.llm``: react's reply that chose
  the action, AIDE's proposal); policies without an LLM give ``""``. Corrections the harness asked for and
  the replies before them are left out.
- A malformed action (``kind == "invalid"``) has no tool call: the assistant turn holds the model's text
  (else the recorded action as text) and the result comes as a ``user`` turn (ShareGPT: ``observation``).
- Results are cut as the agents cut them (``output_chars`` of stdout and of stderr, start and end kept).
- ``tools`` is a JSON string (TRL's SFTTrainer reads it so; Arrow cannot hold the schemas' varying shapes
  as columns); ``json.loads`` it for an API that wants the list. Tool-call arguments are JSON strings, as
  in OpenAI's format.
- ``metadata``: ``competition``, ``competition_version``, ``seed``, ``medal`` (``none`` ... ``gold``, None
  when not graded), ``score``, ``valid``, ``status`` (the footer's: ``submitted``, ``truncated``,
  ``sandbox_broken``, ``infra_error``, or ``reset``/``closed`` for an abandoned episode), ``steps``,
  ``reward``, ``agent`` (from the run's results.jsonl or config.json, else the reset options that
  ``mle-env run``/``play`` record, e.g. ``human``, else guessed from the annotations; None when unknown),
  ``model`` (the LLM, when one answered), ``agent_error``, ``episode_id``, ``source``.
- Text is written as UTF-8, but control characters (C0, C1, DEL), the line and paragraph separators and
  bidi controls are written as ``\\uXXXX`` escapes (:func:`mle_env.jsonl.print_safe`), so printing the
  file never drives a terminal; lone surrogates become U+FFFD.

Only episodes that ended on their own (``submitted``, ``truncated``, ``sandbox_broken``) are exported unless
``status`` asks for others: one abandoned (``reset``, ``closed``: an interrupted ``mle-env play``, say) or cut
short by the infrastructure (``infra_error``) stops in the middle. Episodes without a single step (abandoned
at once) are left out: they hold no assistant turn to learn from.
A file that is not a whole trajectory (not JSON in the middle, no header, steps missing or out of order,
no footer because the episode never ended) is skipped with a one-line warning naming it; the output is
written to a temporary file beside ``out`` and renamed into place, so it is never half-written.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_env.display_text import terminal_safe
from mle_env.errors import MleEnvError
from mle_env.jsonl import print_safe
from mle_env.text_interface import SYSTEM_PROMPT, TOOLS, action_to_tool_call, render_result, render_task
from mle_env.trajectory import MEDALS, Episode, TrajectoryError, find_trajectories, load_episode

FORMATS = ("openai-chat", "sharegpt")
#: what a footer's status can be: how the episode ended, or how it was abandoned (``reset``, ``closed``)
END_STATUSES = ("submitted", "truncated", "sandbox_broken", "infra_error", "reset", "closed")
#: the statuses exported when none are asked for: episodes that ended on their own (not interrupted by the
#: infrastructure, a reset or a close), so that training data holds no episode cut off in the middle
FINISHED_STATUSES = ("submitted", "truncated", "sandbox_broken")
DEFAULT_OUTPUT_CHARS = 2_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNRECORDED_FILES = "(the data files were not recorded with this trajectory)"


class ExportError(MleEnvError, ValueError):
    """Bad export arguments (an unknown format, medal or status), or nothing to export."""


# --- one episode as a conversation ----------------------------------------------------------------------
def _llm_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The LLM calls attached to a step (``policy.llm``: one record or a list), in order."""
    policy = step.get("policy")
    calls = policy.get("llm") if isinstance(policy, dict) else None
    calls = calls if isinstance(calls, list) else [calls] if calls is not None else []
    return [c for c in calls if isinstance(c, dict)]


def _llm_text(step: dict[str, Any]) -> str:
    """The content of the last LLM reply attached to the step ("" when none)."""
    return next((c["content"] for c in reversed(_llm_calls(step)) if isinstance(c.get("content"), str)), "")


def _llm_model(steps: list[dict[str, Any]]) -> str | None:
    """The model that answered last in the episode, if any did."""
    return next((str(c["model"]) for s in reversed(steps) for c in reversed(_llm_calls(s)) if c.get("model")), None)


def _result_text(step: dict[str, Any], output_chars: int) -> str:
    return render_result({**step, "action": step["kind"]}, output_chars)


def _files_text(header: dict[str, Any], home: Path | None) -> str:
    """The data listing the model saw at reset: the header's ``files`` (when recorded), else the prepared
    public data as it is now (not for a dev split, whose data differs), else a note."""
    if isinstance(header.get("files"), str):
        return header["files"]
    if "\n# Dev set (`score_dev`)" not in header["task"]:
        from mle_env.observation import list_files
        from mle_env.paths import CompetitionPaths

        public = CompetitionPaths(header["competition_id"], home).public
        if public.is_dir():
            return list_files(public)
    return _UNRECORDED_FILES


def _turns(episode: Episode, output_chars: int, home: Path | None) -> Iterator[tuple[str, Any]]:
    """The conversation as (role, payload) pairs: ``system``/``task``/``result``/``invalid_result`` with text,
    ``call`` with (text, tool call, step) and ``invalid`` with text."""
    yield "system", SYSTEM_PROMPT
    yield "task", render_task({"task": episode.header["task"], "files": _files_text(episode.header, home)})
    for step in episode.steps:
        text = _llm_text(step)
        if step["kind"] == "invalid" or not isinstance(step.get("action"), dict):
            yield "invalid", text or str(step.get("action"))
            yield "invalid_result", _result_text(step, output_chars)
        else:
            yield "call", (text, action_to_tool_call(step["action"]), step["step"])
            yield "result", _result_text(step, output_chars)


def openai_messages(episode: Episode, output_chars: int = DEFAULT_OUTPUT_CHARS,
                    home: Path | None = None) -> list[dict[str, Any]]:
    """The episode as OpenAI chat messages (see the module docstring)."""
    messages: list[dict[str, Any]] = []
    call_id = ""
    for role, payload in _turns(episode, output_chars, home):
        if role == "system":
            messages.append({"role": "system", "content": payload})
        elif role in ("task", "invalid_result"):
            messages.append({"role": "user", "content": payload})
        elif role == "invalid":
            messages.append({"role": "assistant", "content": payload})
        elif role == "call":
            text, call, step = payload
            call_id = f"call_{step}"
            messages.append({"role": "assistant", "content": text, "tool_calls": [{
                "id": call_id, "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}]})
        else:
            messages.append({"role": "tool", "tool_call_id": call_id, "content": payload})
    return messages


def sharegpt_conversations(episode: Episode, output_chars: int = DEFAULT_OUTPUT_CHARS,
                           home: Path | None = None) -> list[dict[str, str]]:
    """The episode as ShareGPT turns (see the module docstring)."""
    turns: list[dict[str, str]] = []
    for role, payload in _turns(episode, output_chars, home):
        if role == "system":
            turns.append({"from": "system", "value": payload})
        elif role == "task":
            turns.append({"from": "human", "value": payload})
        elif role == "invalid":
            turns.append({"from": "gpt", "value": payload})
        elif role == "call":
            text, call, _step = payload
            block = "<tool_call>\n" + json.dumps(call, ensure_ascii=False) + "\n</tool_call>"
            turns.append({"from": "gpt", "value": f"{text.rstrip()}\n{block}" if text.strip() else block})
        else:
            turns.append({"from": "observation", "value": payload})
    if turns[-1]["from"] == "observation":
        turns.pop()  # the end of the episode: nothing answers it, and the convention ends on a gpt turn
    return turns


def _guess_agent(steps: list[dict[str, Any]]) -> str | None:
    """The bundled agent whose annotations the steps carry, if any."""
    keys = {k for s in steps if isinstance(s.get("policy"), dict) for k in s["policy"]}
    if "react" in keys:
        return "react"
    if "aide" in keys:
        return "aide"
    return "baseline" if "profile" in keys else None


def _recorded_agent(header: dict[str, Any]) -> str | None:
    """The agent `mle-env run` and `mle-env play` name in the reset options the header records."""
    options = header.get("options")
    agent = options.get("agent") if isinstance(options, dict) else None
    return agent if isinstance(agent, str) and agent else None


def metadata(episode: Episode, agent: str | None = None) -> dict[str, Any]:
    """The ``metadata`` of an exported episode (see the module docstring)."""
    header, footer, grade = episode.header, episode.footer or {}, episode.grade or {}
    return {
        "competition": header["competition_id"], "competition_version": header.get("competition_version"),
        "seed": header.get("seed"), "medal": episode.medal, "score": grade.get("score"),
        "valid": grade.get("valid_submission") if grade else None, "status": episode.status,
        "steps": footer.get("steps", len(episode.steps)), "reward": footer.get("reward"),
        "agent": agent or _recorded_agent(header) or _guess_agent(episode.steps), "model": _llm_model(episode.steps),
        "agent_error": any(isinstance(s.get("policy"), dict) and "agent_error" in s["policy"] for s in episode.steps),
        "episode_id": header.get("episode_id"), "source": str(episode.path),
    }


def to_example(episode: Episode, format: str = "openai-chat", *, agent: str | None = None,
               output_chars: int = DEFAULT_OUTPUT_CHARS, home: Path | None = None) -> dict[str, Any]:
    """One episode as one training example in ``format``."""
    key, turns = (("messages", openai_messages(episode, output_chars, home)) if format == "openai-chat"
                  else ("conversations", sharegpt_conversations(episode, output_chars, home)))
    return {key: turns, "tools": json.dumps(TOOLS), "metadata": metadata(episode, agent)}


# --- which agent ran an episode -----------------------------------------------------------------------
class _Agents:
    """Agent names from the results.jsonl and config.json of the folders above a trajectory (``mle-env eval``
    writes them; ``mle-env run`` does not)."""

    def __init__(self) -> None:
        self._folders: dict[Path, tuple[dict[tuple[str, str], str], str | None]] = {}

    def __call__(self, path: Path) -> str | None:
        key = (path.parent.name, path.name)
        for folder in list(path.resolve().parents)[:4]:
            by_trajectory, default = self._read(folder)
            if key in by_trajectory:
                return by_trajectory[key]
            if default:
                return default
        return None

    def _read(self, folder: Path) -> tuple[dict[tuple[str, str], str], str | None]:
        if folder not in self._folders:
            from mle_env.evaluation.results import CONFIG, read_results

            by_trajectory = {}
            for record in read_results(folder):
                if isinstance(record.get("trajectory"), str) and isinstance(record.get("agent"), str):
                    trajectory = Path(record["trajectory"])
                    by_trajectory[(trajectory.parent.name, trajectory.name)] = record["agent"]
            default = None
            try:
                config = json.loads((folder / CONFIG).read_text())
                default = config.get("agent") if isinstance(config, dict) and isinstance(config.get("agent"), str) \
                    else None
            except (OSError, ValueError):
                pass
            self._folders[folder] = (by_trajectory, default)
        return self._folders[folder]


# --- export -------------------------------------------------------------------------------------------
@dataclass
class ExportResult:
    """What :func:`export` did.

    Attributes:
        out: the file written (None when the examples were returned instead).
        written: examples written (or returned).
        filtered: episodes left out by ``min_medal`` or ``status``, or for having no step.
        skipped: (file, why) for every file that is not a usable trajectory.
        examples: the examples themselves when ``out`` was None, else [].
    """

    out: Path | None
    written: int = 0
    filtered: int = 0
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)


def _warn(path: Path, reason: str) -> None:
    print(f"warning: skipped {terminal_safe(reason)}", file=sys.stderr)


def check_filters(format: str, min_medal: str | None, status: str | Iterable[str] | None
                  ) -> tuple[int | None, set[str] | None]:
    """The medal tier and statuses asked for, checked.

    Raises:
        ExportError: an unknown format, medal or status (the message lists the allowed ones).
    """
    if format not in FORMATS:
        raise ExportError(f"format must be one of {', '.join(FORMATS)}; got {format!r}")
    tier = None
    if min_medal is not None:
        if str(min_medal).lower() not in MEDALS[1:]:
            raise ExportError(f"min_medal must be one of {', '.join(MEDALS[1:])} (or None); got {min_medal!r}")
        tier = MEDALS.index(str(min_medal).lower())
    statuses = None
    if status is not None:
        statuses = {status} if isinstance(status, str) else set(status)
        unknown = sorted(statuses - set(END_STATUSES))
        if unknown:
            raise ExportError(f"status must be among {', '.join(END_STATUSES)}; got {', '.join(map(repr, unknown))}")
    return tier, statuses


def export(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    format: str = "openai-chat",
    min_medal: str | None = None,
    status: str | Iterable[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    *,
    output_chars: int = DEFAULT_OUTPUT_CHARS,
    home: str | os.PathLike[str] | None = None,
    warn: Callable[[Path, str], None] | None = _warn,
) -> ExportResult:
    """Write every finished episode under ``source`` as one line of chat-format training data.

    Args:
        source: a run directory (``mle-env run``'s record dir or ``mle-env eval``'s ``--out``), an episode's
            folder, a trajectory file, or a list of them.
        format: ``openai-chat`` or ``sharegpt`` (see the module docstring).
        min_medal: keep only episodes graded this medal or better (``bronze``, ``silver``, ``gold``).
        status: keep only episodes whose footer status is this one (or one of these); default
            :data:`FINISHED_STATUSES` (abandoned and infrastructure-failed episodes need asking for).
        out: the JSONL file to write (replaced whole, never left half-written); None returns the examples in
            :attr:`ExportResult.examples` instead.
        output_chars: characters kept of each result's stdout and of its stderr.
        home: the MLE_ENV_HOME whose prepared data lists the data files of trajectories that did not record
            them (default: ``$MLE_ENV_HOME``).
        warn: called with (file, one-line reason) for every file skipped (default: a line on stderr).

    Raises:
        ExportError: bad arguments, a source that does not exist, or no trajectory under it at all.
    """
    tier, statuses = check_filters(format, min_medal, status)
    statuses = set(FINISHED_STATUSES) if statuses is None else statuses
    try:
        paths = find_trajectories(source)
    except TrajectoryError as e:
        raise ExportError(str(e)) from None
    if not paths:
        raise ExportError(f"no trajectories under {source}: give a run directory, an episode's folder or a "
                          "trajectory file")
    home_path = Path(home) if home is not None else None
    result = ExportResult(out=Path(out) if out is not None else None)
    agents = _Agents()
    temp: Path | None = None
    handle = None
    try:
        if result.out is not None:
            result.out.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{result.out.name}.", suffix=".tmp", dir=result.out.parent)
            temp = Path(name)
            handle = os.fdopen(fd, "w", encoding="utf-8")
        for path in paths:
            try:
                episode = load_episode(path)
            except TrajectoryError as e:
                result.skipped.append((path, str(e)))
                if warn is not None:
                    warn(path, str(e))
                continue
            if not episode.steps or episode.status not in statuses or (
                    tier is not None and MEDALS.index(episode.medal or "none") < tier):
                result.filtered += 1
                continue
            example = to_example(episode, format, agent=agents(path), output_chars=output_chars, home=home_path)
            if handle is not None:
                # lone surrogates, which training libraries reject, become U+FFFD; no control character is raw
                handle.write(print_safe(_SURROGATE.sub("\ufffd", json.dumps(example, ensure_ascii=False))) + "\n")
            else:
                result.examples.append(json.loads(_SURROGATE.sub("\ufffd", json.dumps(example, ensure_ascii=False))))
            result.written += 1
        if handle is not None:
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            handle = None
            os.replace(temp, result.out)  # type: ignore[arg-type]
            temp = None
    finally:
        if handle is not None:
            handle.close()
        if temp is not None:
            temp.unlink(missing_ok=True)
    return result
