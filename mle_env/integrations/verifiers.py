"""mle-env episodes as a verifiers environment (``pip install 'mle-env[verifiers]'``, verifiers >= 0.4).

verifiers 0.4 (``verifiers.v1``) builds an environment from a *taskset* (the rows), a *harness* (the
program that plays a row against the model) and an ``Env`` (how a row becomes an episode), each found by
the id of an importable module. This module is all three for mle-env, under the taskset id ``mle-env``:

- :class:`MLETaskset` (config :class:`MLETasksetConfig`): one row per (competition, seed), each a
  :class:`MLETask` whose :class:`MLETaskData` carries the competition, the seed and the ``mle_env.make``
  options. Its reward ``episode_reward`` is the episode's return: the medal tier by default, or whatever
  ``reward=`` mode :class:`~mle_env.env.MLEEnv` was given; its metrics are the grade's medal tier, whether
  the submission was valid, whether the agent submitted, and the steps taken.
- :class:`MLEHarness`: the multi-turn tool loop, run in-process (verifiers allows a harness its own loop as
  long as every model call goes through the rollout's interception endpoint, which records the trace).
  Each rollout makes its own ``mle_env.make(competition, sandbox=..., reward=..., **make_options)`` and resets
  it with the row's seed; the model gets :data:`~mle_env.text_interface.SYSTEM_PROMPT` and
  :func:`~mle_env.text_interface.render_task`, the tools :data:`~mle_env.text_interface.TOOLS`
  (``shell(code, timeout=None)``, ``python(code, timeout=None)``, ``validate()``, ``submit()``), and each
  result as :func:`~mle_env.text_interface.render_result` text. A reply without tool calls may still act in
  text (:func:`~mle_env.text_interface.parse_text_action`); its result then comes back as a user message.
- :class:`MLEVerifiersEnv`: verifiers' single-agent env whose seat runs in the local ``subprocess``
  runtime by default (the agent's code runs in mle-env's own sandbox, not in that runtime).

A rollout ends when the agent submits or the episode's budget ends (``max_turns`` is its step budget, each
model turn one step; the time limit is ``time_limit``). It also ends when a reply asks for no action or
verifiers refuses the next turn (its own ``max_turns``/token limits or a ``@vf.stop``); the submission
present then is graded by sending ``submit``, as when the budget runs out. The episode's summary, with the
whole GradeReport, is ``trace.info["mle_env"]`` (see :data:`INFO_KEY`), which verifiers writes into each
trace record. A model call that fails (not a refused turn) fails the rollout, and an infrastructure error of
the sandbox raises verifiers' ``SandboxError``: neither is graded, so trainers and evaluations can retry.
The episode is closed when the rollout ends, also after an error or a cancellation.

Use it from Python (the returned env runs rollouts with ``env.serving()`` and ``env.run_slot``)::

    >>> from mle_env.integrations.verifiers import load_environment
    >>> env = load_environment(["insults"], seeds=range(4), sandbox="local", max_turns=40)  # doctest: +SKIP

or through verifiers' own ``vf-eval``, with this module making the id ``mle-env`` importable first::

    python -m mle_env.integrations.verifiers --env.taskset.competitions insults --env.taskset.seeds 0 1 \\
        --env.taskset.sandbox local -m MODEL --client.base-url http://localhost:8000/v1 --no-push --no-rich

Every ``vf-eval`` option applies (``-n``, ``-r``, ``--sampling.*``, ``-o``); ``--env.taskset.max-turns``,
``--env.taskset.reward`` and ``--env.taskset.make-options '{"time_limit": 600}'`` set the episode. Bad
options fail when the environment is loaded, before any rollout.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from pydantic import Field, ValidationError, model_validator

import mle_env
from mle_env.competition.registry import select_competitions
from mle_env.config import EnvConfig, show
from mle_env.errors import ConfigError, MleEnvError, PrerequisiteError
from mle_env.observation import to_jsonable
from mle_env.text_interface import (
    SUBMIT,
    SYSTEM_PROMPT,
    TOOLS,
    parse_text_action,
    render_result,
    render_task,
    tool_to_action,
)

try:
    import verifiers.v1 as vf
    from verifiers.v1.cli.eval.main import main as _vf_eval_main
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise PrerequisiteError(f"mle_env.integrations.verifiers needs verifiers >= 0.4 ({e}); "
                            "pip install 'mle-env[verifiers]'") from e

__all__ = [
    "INFO_KEY",
    "TASKSET_ID",
    "MLEHarness",
    "MLEHarnessConfig",
    "MLETask",
    "MLETaskData",
    "MLETaskset",
    "MLETasksetConfig",
    "MLEVerifiersEnv",
    "MLEVerifiersEnvConfig",
    "load_environment",
    "main",
]

#: the taskset id (also the harness id) verifiers knows this module by
TASKSET_ID = "mle-env"
#: where each trace keeps the episode's summary: competition, seed, reward (the return), grade (the GradeReport
#: as a dict), steps, status (the env's last), end (that status, or no_action / turn_refused when the rollout
#: ended first and ``submit`` was sent), sandbox, trajectory and episode_dir
INFO_KEY = "mle_env"
DEFAULT_COMPETITIONS = ("detecting-insults-in-social-commentary",)
DEFAULT_MAX_TURNS = 50
# verifiers imports a taskset id as `verifiers.v1.tasksets.<id>` (a harness id as `verifiers.v1.harnesses.<id>`)
# or as a top-level module; these aliases make `mle-env` resolve to this module in a process that imported it
_PLUGIN_MODULES = tuple(f"verifiers.v1.{kind}.{TASKSET_ID.replace('-', '_')}" for kind in ("tasksets", "harnesses"))
_NOT_RUN = "not run: call exactly one tool per reply"
# why a rollout ended when the episode had not: graded then by sending submit
NO_ACTION, TURN_REFUSED = "no_action", "turn_refused"


# --- validation ------------------------------------------------------------------------------------------
def _as_list(name: str, value: Any, kind: type) -> list[Any]:
    items = [value] if isinstance(value, (str, int)) and not isinstance(value, bool) else value
    try:
        items = list(items)
    except TypeError:
        raise ConfigError(f"{name} must be a {kind.__name__} or a list of them; got {show(value)}") from None
    bad = [x for x in items if not isinstance(x, kind) or isinstance(x, bool)]
    if not items or bad:
        what = f"got {show(bad[0])}" if bad else "got none"
        raise ConfigError(f"{name} must be one or more {kind.__name__}s; {what}")
    if len(set(items)) != len(items):
        raise ConfigError(f"{name} must be distinct; got {show(items)}")
    return items


def check_options(competitions: Any, seeds: Any, sandbox: Any, reward: Any, max_turns: Any,
                  make_options: Mapping[str, Any], *, make_envs: bool = True) -> list[str]:
    """The competitions' canonical ids, once every option is known to be usable: the competitions are
    registered, the seeds distinct ints, ``max_turns`` a positive int or None and the ``mle_env.make`` options
    valid; with ``make_envs``, also each competition's env is made and closed (which checks its prepared
    data and the sandbox choice; nothing starts).

    Raises:
        ConfigError, UnknownCompetition, NotPrepared, PrerequisiteError: one line saying what to change.
    """
    names = _as_list("competitions", competitions, str)
    _as_list("seeds", seeds, int)
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise ConfigError(f"max_turns must be a positive int or None; got {show(max_turns)}")
    if not isinstance(make_options, Mapping):
        raise ConfigError(f"make_options must be a mapping of mle_env.make options; got {show(make_options)}")
    for key in ("sandbox", "reward", "max_episode_steps"):
        if key in make_options:
            raise ConfigError(f"pass {key} as its own argument, not in make_options"
                              + (" (max_turns is the step budget)" if key == "max_episode_steps" else ""))
    if not isinstance(reward, str):
        raise ConfigError(f"reward must be the name of an mle-env reward mode; got {show(reward)}")
    options = _make_options(sandbox, reward, max_turns, make_options)
    EnvConfig.from_options(options)
    ids = [cid for name in names for cid in select_competitions([name])]  # ids, aliases and sets (practice-eval)
    if len(set(ids)) != len(ids):
        raise ConfigError(f"competitions must be distinct; {show(names)} name the same one twice")
    for cid in ids if make_envs else ():
        mle_env.make(cid, **options).close()
    return ids


def _make_options(sandbox: Any, reward: Any, max_turns: int | None, make_options: Mapping[str, Any]) -> dict:
    steps = {} if max_turns is None else {"max_episode_steps": max_turns}
    return {**make_options, "sandbox": sandbox, "reward": reward, **steps}


# --- the taskset -------------------------------------------------------------------------------------------
class MLETaskData(vf.TaskData):
    """One row: a competition, the seed its episode is reset with, and how its env is made."""

    competition: str
    seed: int
    sandbox: str = "auto"
    reward: str = "medal"
    max_turns: int | None = DEFAULT_MAX_TURNS
    make_options: dict[str, Any] = Field(default_factory=dict)

    def env_options(self) -> dict[str, Any]:
        """The keyword arguments of ``mle_env.make`` for this row's episode."""
        return _make_options(self.sandbox, self.reward, self.max_turns, self.make_options)


class MLETask(vf.Task[MLETaskData]):
    """A row with mle-env's scoring: the episode's return as the reward, the grade as metrics."""

    @property
    def key(self) -> str:
        return f"{self.data.competition}/seed={self.data.seed}"

    @vf.reward
    async def episode_reward(self, trace: vf.Trace) -> float:
        """The episode's return: the sum of its step rewards (the medal tier 0-3 by default)."""
        return float(trace.info.get(INFO_KEY, {}).get("reward") or 0.0)

    @vf.metric
    async def episode_metrics(self, trace: vf.Trace) -> dict[str, float]:
        """medal_tier, valid_submission, submitted (the agent chose to) and steps of the episode."""
        result = trace.info.get(INFO_KEY, {})
        grade = result.get("grade") or {}
        return {
            "medal_tier": float(grade.get("medal_tier") or 0),
            "valid_submission": float(bool(grade.get("valid_submission"))),
            "submitted": float(result.get("end") == "submitted"),
            "steps": float(result.get("steps") or 0),
        }


class MLETasksetConfig(vf.TasksetConfig):
    """``--env.taskset.*``: which episodes, and how each env is made (validated when loaded)."""

    id: str = TASKSET_ID
    competitions: list[str] = Field(default_factory=lambda: list(DEFAULT_COMPETITIONS))
    """Competition ids or aliases; one row per competition and seed."""
    seeds: list[int] = Field(default_factory=lambda: [0])
    """The seeds each competition's episode is reset with."""
    sandbox: str = "auto"
    """mle-env's sandbox: auto, docker, local (bubblewrap) or unisolated."""
    reward: str = "medal"
    """mle-env's reward mode (medal, any_medal, above_median, percentile, dev_improvement)."""
    max_turns: int | None = DEFAULT_MAX_TURNS
    """Model turns per episode (each one step of its budget); None: only the time limit."""
    make_options: dict[str, Any] = Field(default_factory=dict)
    """Any other option of ``mle_env.make`` (time_limit, memory, dev_split, ...)."""

    @model_validator(mode="after")
    def _usable(self) -> Self:
        # no envs made here: vf-eval also builds this config to print its help; the taskset makes them
        try:
            check_options(self.competitions, self.seeds, self.sandbox, self.reward, self.max_turns,
                          self.make_options, make_envs=False)
        except MleEnvError as e:  # pydantic reports ValueErrors as validation errors
            raise ValueError(str(e)) from None
        return self


class MLETaskset(vf.Taskset[MLETask, MLETasksetConfig]):
    """One :class:`MLETask` per (competition, seed), competitions outermost.

    Raises:
        NotPrepared, PrerequisiteError: a competition's data is not prepared or its sandbox cannot run here.
    """

    def __init__(self, config: MLETasksetConfig) -> None:
        super().__init__(config)
        c = config
        self.competition_ids = check_options(c.competitions, c.seeds, c.sandbox, c.reward, c.max_turns,
                                             c.make_options)

    def load(self) -> Iterable[MLETask]:
        c = self.config
        for cid in self.competition_ids:
            for seed in c.seeds:
                data = MLETaskData(
                    id=f"{cid}/seed={seed}", name=f"{cid} (seed {seed})", competition=cid, seed=seed,
                    sandbox=c.sandbox, reward=c.reward, max_turns=c.max_turns, make_options=dict(c.make_options),
                    system_prompt=SYSTEM_PROMPT,
                    # the task text itself depends on the sandbox and is sent when the episode starts
                    prompt=f"Competition {cid}, seed {seed}: its task is shown when the episode starts.",
                )
                yield MLETask(data, c.task)


# --- the harness: one episode per rollout ------------------------------------------------------------------
class _Episode:
    """One rollout's env, driven from a thread of its own: its calls block (an action may run for minutes)
    while the event loop also serves verifiers' interception. Calls run in order, so ``close`` comes after
    any call still running, also when the rollout was cancelled."""

    def __init__(self, data: MLETaskData) -> None:
        self.data = data
        self.env: Any = None
        self.info: dict[str, Any] = {}
        self.reward = 0.0
        self.steps = 0
        self.done = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mle-env-verifiers")

    async def _call(self, fn: Any, *args: Any) -> Any:
        return await asyncio.wrap_future(self._pool.submit(fn, *args))

    def _start(self) -> dict[str, Any]:
        self.env = mle_env.make(self.data.competition, **self.data.env_options())
        obs, self.info = self.env.reset(seed=self.data.seed)
        return obs

    async def start(self) -> dict[str, Any]:
        return await self._call(self._start)

    async def step(self, action: Any) -> dict[str, Any]:
        obs, reward, terminated, truncated, info = await self._call(self.env.step, action)
        self.steps += 1
        self.reward += float(reward)
        self.info = info
        self.done = bool(terminated or truncated)
        return obs

    def _close(self) -> None:
        if self.env is not None:
            self.env.close()

    async def close(self) -> None:
        closing = self._pool.submit(self._close)
        self._pool.shutdown(wait=False)
        await asyncio.shield(asyncio.wrap_future(closing))

    def summary(self, end: str) -> dict[str, Any]:
        info = self.info
        return to_jsonable({
            "competition": self.data.competition, "seed": self.data.seed, "end": end,
            "status": info.get("status"), "reward": self.reward, "steps": self.steps, "grade": info.get("grade"),
            "sandbox": info.get("sandbox"), "trajectory": info.get("trajectory"),
            "episode_dir": info.get("episode_dir"),
        })


class MLEHarnessConfig(vf.HarnessConfig):
    """``--env.agent.harness.*``."""

    id: str = TASKSET_ID
    output_chars: int = Field(2_000, ge=100)
    """Characters of stdout and of stderr the model reads per result."""


def _call_parts(call: Any) -> tuple[str, Any]:
    arguments: Any = call.function.arguments
    try:
        arguments = json.loads(arguments or "{}")
    except ValueError:
        pass  # left a string: tool_to_action rejects it, and the env's step says why
    return call.function.name, arguments


class MLEHarness(vf.Harness[MLEHarnessConfig]):
    """The tool loop over one mle-env episode per rollout (see the module docstring)."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False  # the model's code runs in mle-env's sandbox, not in the rollout's runtime
    NEEDS_CONTAINER = False

    async def launch(self, ctx: vf.ModelContext, trace: vf.Trace, runtime: vf.Runtime, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData) -> vf.ProgramResult:
        from openai import APIStatusError, AsyncOpenAI

        row = data if isinstance(data, MLETaskData) else MLETaskData.model_validate(data.model_dump())
        episode, end = _Episode(row), ""
        try:
            obs = await episode.start()
            messages: list[dict[str, Any]] = [{"role": "system", "content": row.system_prompt or SYSTEM_PROMPT},
                                              {"role": "user", "content": render_task(obs)}]
            async with AsyncOpenAI(base_url=endpoint, api_key=secret) as client:
                while not episode.done:
                    try:
                        reply = (await client.chat.completions.create(
                            model=ctx.model, messages=messages, tools=TOOLS)).choices[0].message
                    except APIStatusError:
                        if trace.stop_condition is None:
                            raise  # the model call failed: the rollout fails, nothing is graded
                        end = TURN_REFUSED
                        break
                    if not await self._answer(episode, reply, messages):
                        end = NO_ACTION
                        break
            if not episode.done:
                await episode.step(dict(SUBMIT))  # graded as when the budget ends
            trace.info[INFO_KEY] = episode.summary(end or str(episode.info.get("status")))
        finally:
            await episode.close()
        if episode.info.get("status") == "infra_error":
            raise vf.SandboxError(f"mle-env infrastructure error, nothing graded: {episode.info.get('message', '')}"
                                  .rstrip(": "))
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def _answer(self, episode: _Episode, reply: Any, messages: list[dict[str, Any]]) -> bool:
        """Run the action ``reply`` asks for and append the reply and its result to ``messages``; False (and
        nothing appended) when it asks for none."""
        calls = list(reply.tool_calls or [])
        if not calls:
            action = parse_text_action(reply.content or "")
            if action is None:
                return False
            obs = await episode.step(action)
            messages += [{"role": "assistant", "content": reply.content},
                         {"role": "user", "content": render_result(obs, self.config.output_chars)}]
            return True
        parts = [_call_parts(call) for call in calls]
        chosen = next((i for i, (name, args) in enumerate(parts) if tool_to_action(name, args) is not None), 0)
        name, args = parts[chosen]
        # an unusable call still costs a step: the env answers with what is wrong with it
        action = tool_to_action(name, args) or {"type": name, **(args if isinstance(args, dict) else {"args": args})}
        obs = await episode.step(action)
        messages.append({"role": "assistant", "content": reply.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in calls]})
        for i, call in enumerate(calls):
            text = render_result(obs, self.config.output_chars) if i == chosen else _NOT_RUN
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        return True


# --- the environment -------------------------------------------------------------------------------------
class MLEVerifiersEnvConfig(vf.SingleAgentEnvConfig):
    """The single seat, run in the local subprocess runtime unless ``--env.agent.runtime.*`` says otherwise."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class MLEVerifiersEnv(vf.SingleAgentEnv, vf.Env[MLEVerifiersEnvConfig]):
    """verifiers' single-agent env over :class:`MLETaskset`, its seat played by :class:`MLEHarness`."""


def register() -> None:
    """Make the taskset and harness id ``mle-env`` resolve to this module in this process (verifiers imports
    plugins by module name); done on import."""
    for name in _PLUGIN_MODULES:
        sys.modules.setdefault(name, sys.modules[__name__])


def load_environment(competitions: str | Iterable[str] = DEFAULT_COMPETITIONS, seeds: int | Iterable[int] = (0,),
                     sandbox: str = "auto", reward: str = "medal", max_turns: int | None = DEFAULT_MAX_TURNS,
                     **make_options: Any) -> MLEVerifiersEnv:
    """A verifiers environment with one row per (competition, seed) (see the module docstring).

    Args:
        competitions: competition ids, aliases or sets (practice-train, practice-eval, practice-tabular...).
        seeds: the seeds each competition's episode is reset with.
        sandbox: mle-env's sandbox (``auto``, ``docker``, ``local``, ``unisolated``).
        reward: mle-env's reward mode: the episode's return is the rollout's reward.
        max_turns: model turns per episode, each one step of its budget (None: only the time limit).
        **make_options: any other ``mle_env.make`` option (``time_limit``, ``memory``, ``dev_split``, ...).

    Raises:
        ConfigError, UnknownCompetition, NotPrepared, PrerequisiteError: an option cannot be used; nothing
            has started.
    """
    competitions = [competitions] if isinstance(competitions, str) else list(competitions)
    seeds = [seeds] if isinstance(seeds, int) else list(seeds)
    check_options(competitions, seeds, sandbox, reward, max_turns, make_options)  # one-line errors, first
    register()
    taskset = MLETasksetConfig(competitions=competitions, seeds=seeds, sandbox=sandbox, reward=reward,
                               max_turns=max_turns, make_options=make_options)
    try:
        return vf.load_environment(MLEVerifiersEnvConfig(taskset=taskset))
    except ValidationError as e:  # pragma: no cover - check_options has already said what is wrong
        raise ConfigError(str(e).replace("\n", " ")) from None


def main(argv: Sequence[str] | None = None) -> None:
    """verifiers' ``vf-eval`` with the taskset id ``mle-env`` importable and chosen unless ``argv`` names one
    (``python -m mle_env.integrations.verifiers [vf-eval options]``)."""
    register()
    args = list(sys.argv[1:] if argv is None else argv)
    names_taskset = (args and not args[0].startswith(("-", "@"))) or any(
        a == "--env.taskset.id" or a.startswith(("--env.taskset.id=", "@")) for a in args)
    try:
        _vf_eval_main(args if names_taskset else [TASKSET_ID, *args])
    except MleEnvError as e:  # raised when the env is loaded (e.g. data not prepared), before any rollout
        raise SystemExit(f"mle-env: {e}") from None


if __name__ == "__main__":
    # run with -m, this file is __main__: use the module proper, so that the id resolves to its classes
    from mle_env.integrations import verifiers as _module

    _module.main()
else:
    register()
