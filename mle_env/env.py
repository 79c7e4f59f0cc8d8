"""MLEEnv: one competition as a Gymnasium episode.

## Description
The agent gets a prepared competition's public data in a fresh sandbox and must write
``./submission/submission.csv``. The episode ends when it submits or its budget runs out; the submission is
then copied out of the sandbox and graded on the host exactly as MLE-bench grades it.

## Action space
:class:`~mle_env.spaces.ActionSpace`: dicts validated by the JSON Schema in :mod:`mle_env.actions`
(``shell``, ``python``, ``validate``, ``score_dev``, ``submit``); a plain string stands for a shell action. A malformed
action costs a step and comes back as an observation with ``action == "invalid"``; ``step`` never raises
for it.

## Observation space
A ``Dict`` whose keys are listed in :mod:`mle_env.observation` (task, files, action, stdout, stderr,
exit_code, timed_out, message, time_left, steps_left); every observation carries every key.

## Rewards
0 on every step but the last; the last gives the reward chosen with ``reward=`` (:mod:`mle_env.rewards`):
by default the medal tier (0 none, 1 bronze, 2 silver, 3 gold). With a dev split, ``reward="dev_improvement"``
is dense instead: each ``score_dev`` step gives the gain of the episode's best dev score, scaled to the
leaderboard's spread, and the last step 0 (its ``info["grade"]`` still holds the test-graded medal).

## Dev split
``dev_split=f`` (opt-in; without it the task is MLE-bench's) carves a hidden dev set out of the public
training data with the competition's own split recipe (:mod:`mle_env.prepare.dev`; built once beside the
prepared data and reused). ``./data`` then holds the smaller training table, the test files unchanged and
``dev/dev.csv`` (the dev rows without targets); ``{"type": "score_dev", "path": "x.csv"}`` answers that file's
dev score (:mod:`mle_env.devset`), never a test score, and the dev answers stay on the host. Without a dev
split, ``score_dev`` is an observation saying so. A competition whose prepare is not a split of labelled
rows raises :class:`~mle_env.prepare.dev.DevSplitUnsupported` (a ConfigError) naming why.

## Starting state
``reset`` starts a new sandbox (the previous one is removed) whose working directory holds ``data/``
(read-only), ``submission/``, ``code/`` and ``logs/``; the Python interpreter is fresh. Reset's info holds
the ``seed`` it was given, says which sandbox runs and why (``sandbox``, ``sandbox_reason``,
``sandbox_info`` with its CPUs, memory and GPUs), where the trajectory goes (``trajectory``) and the
episode's kept artifacts (``episode_dir``, see "Kept artifacts"), and describes the task for programs:
``metric`` (``name``, ``lower_is_better``), ``submission`` (``header``, ``id_column``, ``targets``, ``kind``,
``sample``), ``domain``, ``competition_id`` and ``competition_version``.

The docker and local sandboxes follow MLE-bench's container conventions: the working directory is ``/home``,
``/home/instructions.txt`` holds the task text and ``/home/validate_submission.sh FILE`` (or ``POST
http://localhost:5000/validate``) answers whether a file is valid, never its score, as the ``validate``
action does (:mod:`mle_env.sandbox.endpoint`; the endpoint answers while an action runs).

## Episode end
``info["status"]`` says where the episode stands: ``running`` until it ends, then one of

- ``submitted`` (termination): the agent sent ``{"type": "submit"}``; its submission is graded.
- ``truncated`` (truncation): the wall-clock budget (``time_limit`` seconds from ``reset``) or the step
  budget (``step_limit``; ``max_episode_steps=N`` of ``make`` and ``gymnasium.make`` sets it) ran out.
  The submission present then is graded all the same.
- ``sandbox_broken`` (truncation): the agent's own actions broke the sandbox (killed its worker or
  interpreter, exhausted its process table or memory) so that no more actions can run. The episode ends
  as the agent's result: the submission present is graded, and ``message`` says what happened.
- ``infra_error`` (truncation): the infrastructure failed in a way that is not the agent's doing (the
  engine is gone, the container was removed or killed from outside). Nothing is graded and the reward
  is 0; evaluations retry such episodes.

In every case ``info["grade"]`` of the last step holds the whole GradeReport (``None`` after an infra
error). Stepping after the end (or before ``reset``) raises ``gymnasium.error.ResetNeeded``.

## Arguments
``mle_env.make(id_or_alias, sandbox="auto", time_limit=None, step_limit=None, action_timeout=1800,
gpus=None, cpus=None, memory="4g", disk="auto", network=False, reward="medal", record_dir=None,
image=DEFAULT_IMAGE, max_output=16000, leaderboard=None, home=None, max_episode_steps=None, dev_split=None,
task_text="original", log_test_scores=False)``.
Every option
is validated (:class:`mle_env.config.EnvConfig`) before anything starts; a bad one raises
:class:`~mle_env.errors.ConfigError` naming it and the allowed range.

- ``sandbox``: ``"docker"``, ``"local"`` (isolated with bubblewrap), ``"unisolated"`` (plain host
  subprocesses: an explicit opt-in, not a security boundary) or ``"auto"`` (docker when an engine answers
  and the image is present, else the isolated local one; ``info["sandbox"]`` and
  ``info["sandbox_reason"]`` say which and why).
- ``time_limit``: seconds of wall-clock time per episode, > 0 (default: the competition's hint, else 24 h).
- ``step_limit``: steps per episode, >= 1 (default: none). ``max_episode_steps=N`` (also through
  ``gymnasium.make``) lowers it to N: the step budget stays graded, it is never an ungraded cut.
- ``action_timeout``: default timeout of one shell/python action in seconds (an action may ask for
  another with ``"timeout"``); never longer than the time left.
- ``gpus``, ``cpus``, ``memory``, ``network``: sandbox resources (see SandboxLimits); ``memory`` and
  ``disk`` take bytes or strings like ``"4g"``.
- ``disk``: bytes the agent may write (default ``"auto"``: the larger of 10 GiB and twice the
  competition's public data; ``None``: no limit); the task text states it.
- ``record_dir``: where episodes are kept (default ``$MLE_ENV_HOME/trajectories``; see "Kept artifacts").
- ``artifacts_max_bytes``: bytes of ``./code`` and ``./logs`` kept per episode (default 50 MiB; 0: none).
- ``artifacts_max_files``: files of each of them kept at most (default 10,000).
- ``max_output``: characters of stdout and of stderr kept per observation.
- ``dev_split``: the fraction in (0, 1) of the training rows held out as a dev set (see "Dev split").
- ``task_text``: the description the task starts with, ``./data/description.md`` alike: ``"original"``,
  ``"obfuscated"`` (nothing names the competition), or MLE-bench's own from a checkout,
  ``"mlebench:PATH"`` / ``"mlebench-obfuscated:PATH"`` (:mod:`mle_env.competition.task_text`); the
  trajectory header records it.
- ``log_test_scores``: also grade, on the test answers, every file given to ``validate`` (the action or the
  endpoint) or ``score_dev`` and the submission after each step that changed it, into the episode folder's
  ``test_scores.jsonl`` (:mod:`mle_env.test_score_log`); observations, infos and the trajectory stay as they
  are, ``last_test_score`` gives host-side harness code the latest, and the disclosure says it was on.

## Kept artifacts
Each episode leaves a folder ``<record_dir>/<competition>-<UTC time>-<id>/`` (``info["episode_dir"]``)::

    trajectory.jsonl   the trajectory (info["trajectory"]), flushed step by step
    submission.csv     the exact bytes that were graded (absent when there was no readable submission)
    grade.json         the GradeReport (absent after an infra error)
    code/  logs/       regular files of ./code and ./logs, at most ``artifacts_max_bytes`` together
                       (links, pipes and devices left out; TRUNCATED.txt says what did not fit)

They are copied before the sandbox is removed, also for an episode abandoned by ``reset`` or ``close``. A
failure while copying never changes the grade or the status; the trajectory's footer lists what was kept
(``artifacts``) and what could not be. ``mle-env show FOLDER`` prints an episode as a timeline.

## Forking
``env.unwrapped.fork(replay_python=False)`` (on the MLEEnv itself: Gymnasium's wrappers do not pass it on)
returns a new, plain MLEEnv (unwrapped) that is a running, independent episode in the exact state of this
one, to be stepped without ``reset``:

- carried: every file the agent can write in its sandbox (the working directory's ``code/``,
  ``submission/``, ``logs/`` and anything else there, its home, /tmp, /var/tmp; docker: a tar of them packed
  by the worker, put into the fork's fresh container; local: a copy of the workspace folder, removed with
  it; sparse files stay sparse, links stay links, pipes and what the agent cannot read are left out), the
  budget spent (the fork's clock and step count go on from the parent's; the copy itself is
  charged to neither), the trajectory so far (the fork's own episode folder, whose trajectory's header has
  ``fork``: the parent's ``parent_episode`` id and trajectory, the ``step`` it forked after, then the parent's
  step records), and the same competition, limits, reward, options and seed. The public data is bound
  read-only again, never copied.
- not carried: running processes. The python interpreter starts fresh (its variables are gone), which the
  fork's first observation says in its ``message`` (``fork.fork_info["observation"]``, and again in the
  message of its first step); ``fork(replay_python=True)`` re-runs the parent's python cells in order in it
  (their side effects on files happen again; the time counts against the fork's budget) and the message
  names the cells that failed. Background processes are not carried either, nor /dev/shm.

``fork.fork_info`` holds that observation and the fork's ``trajectory``, ``episode_dir``, ``sandbox_info``
and parent. Forks can be forked again; each ends, is graded and is closed on its own, and closing the parent
leaves its forks running. Forking an episode that has ended (or never started) raises ResetNeeded; a
sandbox whose files cannot be copied raises SandboxUnavailable.

## Version history
- v0: initial release.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium.error import ResetNeeded

from mle_env.actions import Action, ActionError, describe, parse_action
from mle_env.artifacts import SUBMISSION_NAME, ArtifactKeeper
from mle_env.competition.registry import get_spec
from mle_env.competition.task_text import task_description
from mle_env.config import DEFAULT_ARTIFACTS_BYTES, DEFAULT_ARTIFACTS_FILES, EnvConfig, competition_name
from mle_env.devset import NO_DEV_SPLIT, DevScorer
from mle_env.disclosure import Feedback, episode_disclosure
from mle_env.display_text import terminal_safe
from mle_env.errors import ConfigError, SandboxBroken, SandboxUnavailable
from mle_env.forking import Forkable
from mle_env.grading.grader import Grader
from mle_env.grading.report import GradeReport
from mle_env.grading.validation import cap_reason
from mle_env.observation import list_files, make_observation, observation_space, task_text
from mle_env.paths import home as default_home
from mle_env.prepare.task_view import ensure_task_view
from mle_env.recording import TRAJECTORY_NAME, TrajectoryWriter, package_versions
from mle_env.rewards import SHAPED_REWARDS, RewardFn, resolve_reward
from mle_env.sandbox import Sandbox, SandboxLimits, choose_backend, create_sandbox
from mle_env.sandbox.base import SUBMISSION
from mle_env.sandbox.endpoint import (
    INSTRUCTIONS_NAME,
    SCRIPT_NAME,
    ValidationEndpoint,
    instructions_text,
    validate_script,
)
from mle_env.sandbox.images import DEFAULT_IMAGE
from mle_env.spaces import ActionSpace
from mle_env.test_score_log import LOG_NAME as TEST_SCORES_NAME
from mle_env.test_score_log import TestScoreLog

DEFAULT_TIME_LIMIT = 24 * 3600.0
#: every value of info["status"]: running, then how the episode ended (see "Episode end" above)
STATUSES = ("running", "submitted", "truncated", "sandbox_broken", "infra_error")


class MLEEnv(Forkable, gymnasium.Env[dict[str, Any], Any]):
    """A competition as an episode; the module docstring is the full specification."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}
    #: set on a fork (see "Forking"): its first observation, trajectory, episode folder and parent
    fork_info: dict[str, Any] | None = None
    _fork_note = ""  # a fork's first step repeats in its message what the fork did not carry

    def __init__(
        self,
        competition_id: str,
        *,
        sandbox: str = "auto",
        time_limit: float | None = None,
        step_limit: int | None = None,
        action_timeout: float = 1800.0,
        gpus: str | int | list[str] | None = None,
        cpus: float | None = None,
        memory: int | str | None = "4g",
        disk: int | str | None = "auto",
        network: bool = False,
        reward: str | RewardFn = "medal",
        record_dir: str | Path | None = None,
        image: str = DEFAULT_IMAGE,
        max_output: int = 16_000,
        leaderboard: str | Path | None = None,
        home: str | Path | None = None,
        artifacts_max_bytes: int | str = DEFAULT_ARTIFACTS_BYTES,
        artifacts_max_files: int = DEFAULT_ARTIFACTS_FILES,
        dev_split: float | None = None,
        task_text: str = "original",
        log_test_scores: bool = False,
        render_mode: str | None = None,
    ) -> None:
        # every option is checked before anything else happens (no sandbox, no grader, no files)
        config = EnvConfig(
            sandbox=sandbox, time_limit=time_limit, step_limit=step_limit, action_timeout=action_timeout, gpus=gpus,
            cpus=cpus, memory=memory, disk=disk, network=network, reward=reward, record_dir=record_dir, image=image,
            max_output=max_output, leaderboard=leaderboard, home=home, artifacts_max_bytes=artifacts_max_bytes,
            artifacts_max_files=artifacts_max_files, dev_split=dev_split, task_text=task_text,
            log_test_scores=log_test_scores,
        )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode must be one of {self.metadata['render_modes']} or None; "
                              f"got {describe(render_mode)}")
        self.config = config
        self.competition = get_spec(competition_id)
        self.grader = Grader(self.competition, config.home, config.leaderboard)  # checks the prepared data
        self.sandbox_kind, self.sandbox_reason = choose_backend(config.sandbox, config.image)
        public_bytes = self.grader.manifest.get("public_bytes")
        if not isinstance(public_bytes, int):
            public_bytes = sum(p.stat().st_size for p in self.grader.paths.public.rglob("*") if p.is_file())
        self.limits = SandboxLimits(cpus=config.cpus, memory=config.memory, gpus=config.gpu_request(),
                                    network=config.network, max_output=config.max_output,
                                    disk=config.disk_bytes(public_bytes))
        self.image = config.image
        self.time_limit = float(config.time_limit or self.competition.hints.time_limit_s or DEFAULT_TIME_LIMIT)
        self.step_limit = config.step_limit
        self.action_timeout = config.action_timeout
        self.reward_fn = resolve_reward(config.reward)
        self.record_dir = config.record_dir or (config.home or default_home()) / "trajectories"
        self.render_mode = render_mode
        self.observation_space = observation_space(config.max_output)
        self.action_space = ActionSpace()
        #: scores score_dev actions when there is a dev split; its public data is then what ./data holds
        self.dev = (DevScorer(self.competition, self.grader, config.dev_split, config.reward in SHAPED_REWARDS)
                    if config.dev_split is not None else None)
        self._public = self.dev.public if self.dev is not None else self.grader.paths.public
        #: the description the task starts with (see task_text); ./data/description.md says the same
        self.description = task_description(self.competition, config.task_text)
        if config.task_text != "original":
            self._public = ensure_task_view(self._public, self.grader.paths.root, self.description)
        self._dev_reward = 0.0
        self.files = list_files(self._public)
        self._sandbox: Sandbox | None = None
        self._writer: TrajectoryWriter | None = None
        self._episode_dir: Path | None = None
        self._artifacts: ArtifactKeeper | None = None
        self._task = ""
        self._started = 0.0
        self._steps = 0
        self._done = True
        self._annotations: dict[str, Any] = {}
        self._feedback = Feedback()  # what the agent learnt and spent, for the disclosure (see reset)
        self._test_log: TestScoreLog | None = None  # with log_test_scores: the hidden test grades
        self._sandbox_info: dict[str, Any] = {}
        self._last_obs: dict[str, Any] | None = None
        self._seed: int | None = None

    def _apply_max_episode_steps(self, steps: int) -> None:
        """Make Gymnasium's ``max_episode_steps`` the graded step budget (called by ``gymnasium.make``)."""
        if not self._done:
            raise RuntimeError("the step budget cannot change during an episode")
        self.config = self.config.with_max_episode_steps(steps)
        self.step_limit = self.config.step_limit
        if self.spec is not None:  # so that gymnasium.make(env.spec) rebuilds the same budget
            self.spec.kwargs["step_limit"] = self.step_limit

    # -- Gymnasium API --------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self._seed = seed
        self._finish_resources("reset")
        sandbox = create_sandbox(self.sandbox_kind, self._public, self.limits, self.image)
        if sandbox.serves_endpoint:
            sandbox.endpoint = ValidationEndpoint(self.endpoint_validator(), self.grader.max_bytes)
        info = sandbox.start()  # raises PrerequisiteError / SandboxUnavailable, having cleaned up after itself
        self._own_sandbox(sandbox)
        try:
            packages = sandbox.python_packages()
            self._task = task_text(
                self.competition, description=self.description, workdir=info.workdir, header=self.grader.header,
                time_limit=self.time_limit,
                step_limit=self.step_limit, action_timeout=self.action_timeout, packages=packages,
                disk=self.limits.disk, endpoint=sandbox.endpoint is not None,
            ) + (self.dev.task_note() if self.dev is not None else "")
            if sandbox.endpoint is not None:  # MLE-bench's files beside ./data
                sandbox.put_file(INSTRUCTIONS_NAME, instructions_text(self._task, info.workdir).encode())
                sandbox.put_file(SCRIPT_NAME, validate_script(info.workdir).encode(), 0o755)
        except SandboxUnavailable:
            self._finish_resources("infra_error")
            raise
        episode_id = uuid.uuid4().hex
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self._episode_dir = self.record_dir / f"{self.competition.id}-{stamp}-{episode_id[:8]}"
        self._artifacts = ArtifactKeeper(self._episode_dir, self.config.artifacts_max_bytes,
                                         self.config.artifacts_max_files)
        self._writer = TrajectoryWriter(self._episode_dir / TRAJECTORY_NAME)
        self._writer.header(
            episode_id=episode_id, competition_id=self.competition.id, competition_version=self.competition.version,
            seed=seed, sandbox=self.sandbox_kind, sandbox_info=info.to_dict(),
            image=self.image if self.sandbox_kind == "docker" else None, limits=self.limits.to_dict(),
            time_limit=self.time_limit, step_limit=self.step_limit,
            action_timeout=self.action_timeout, packages=package_versions(), task=self._task, options=options,
            files=self.files, reward=self.config.reward if isinstance(self.config.reward, str) else None,
            dev_split=self.config.dev_split, task_text=self.config.task_text, trust=OUTPUT_TRUST,
        )
        self._started = time.monotonic()
        self._steps = 0
        self._done = False
        self._sandbox_info = info.to_dict()
        self._feedback = Feedback()
        self._test_log = (TestScoreLog(self._episode_dir / TEST_SCORES_NAME, self.grader.grade, self._started)
                          if self.config.log_test_scores else None)
        if self.dev is not None:
            self.dev.reset()  # the best dev score is the episode's
        obs = self._observe("reset")
        sub, metric = self.competition.submission, self.competition.metric
        return obs, {
            "competition_id": self.competition.id, "competition_version": self.competition.version, "status": "running",
            "seed": seed,
            "sandbox": self.sandbox_kind, "sandbox_reason": self.sandbox_reason, "sandbox_info": info.to_dict(),
            "trajectory": str(self._writer.path), "episode_dir": str(self._episode_dir), "step": 0, "elapsed": 0.0,
            "domain": self.competition.domain,
            "metric": {"name": metric.name, "lower_is_better": metric.lower_is_better},
            "submission": {"header": list(self.grader.header), "id_column": sub.id_column,
                           "targets": list(self.grader.targets), "kind": sub.kind,
                           "sample": sub.sample_submission},
        }

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if self._done or self._sandbox is None:
            raise ResetNeeded("the episode has ended (or never started); call reset() before step()")
        self._steps += 1
        began = time.monotonic()
        fields: dict[str, Any] = {}
        terminated = truncated = False
        status = "running"
        try:
            parsed: Action | None = parse_action(action)  # raises ActionError only, whatever `action` is
        except ActionError as e:
            parsed = None
            fields = dict(action="invalid", exit_code=1, message=f"malformed action: {e.reason}")
        kind = parsed.type if parsed is not None else "invalid"
        self._feedback.count_action(kind)
        try:
            if parsed is not None:
                fields, terminated = self._run(parsed)
        except SandboxBroken as e:
            fields = dict(action=kind, exit_code=1, message=f"the sandbox broke: {e}; the episode ends here and "
                                                            "the submission present is graded")
            truncated, status = True, "sandbox_broken"
        except SandboxUnavailable as e:
            fields = dict(action=kind, exit_code=1, message=f"infrastructure error: {e}; the episode cannot go on")
            truncated, status = True, "infra_error"
        if status == "running":
            if terminated:
                status = "submitted"
            elif self._time_left() <= 0 or (self.step_limit is not None and self._steps >= self.step_limit):
                truncated, status = True, "truncated"
                note = "the budget ran out; the submission is graded"
                fields["message"] = (fields.get("message", "") + "\n" + note).strip()
        report = None
        if status in ("submitted", "truncated", "sandbox_broken"):
            try:
                report = self._grade()
            except SandboxUnavailable as e:
                status, terminated, truncated = "infra_error", False, True
                fields["message"] = f"infrastructure error while copying the submission out: {e}"
        if self._fork_note:
            fields["message"] = (self._fork_note + "\n" + fields.get("message", "")).strip()
            self._fork_note = ""
        reward = (self.reward_fn(report) if report is not None else 0.0) + self._dev_reward
        self._dev_reward = 0.0
        obs = self._observe(**fields)
        info = {"status": status, "step": self._steps, "elapsed": time.monotonic() - self._started,
                "action_duration": time.monotonic() - began, "sandbox": self.sandbox_kind}
        self._record(action, parsed, obs, began)
        if status != "running":
            info["grade"] = report.to_dict() if report is not None else None
            info["trajectory"] = str(self._writer.path) if self._writer else None
            info["episode_dir"] = str(self._episode_dir) if self._episode_dir else None
            self._done = True
            info["disclosure"] = self._finish_resources(status, report, reward)
        return obs, reward, terminated, truncated, info

    def render(self) -> str | None:
        if self._last_obs is None:
            return None
        o = self._last_obs
        text = (f"[{o['action']}] exit={int(o['exit_code'])} timed_out={o['timed_out']} "
                f"time_left={float(o['time_left']):.0f}s steps_left={int(o['steps_left'])}\n"
                f"{o['stdout']}{o['stderr']}{o['message']}")
        if self.render_mode == "human":
            print(terminal_safe(text))  # the agent's output: no escape sequence reaches the terminal
            return None
        return text

    def close(self) -> None:
        self._finish_resources("closed")
        self._done = True

    def cancel_action(self) -> bool:
        """Stop the shell or python action that :meth:`step` is running now, as a terminal's Ctrl-C would
        (``mle-env play`` calls it on Ctrl-C). That step returns soon after with the output so far, exit code
        130 (shell) or 1 (python: KeyboardInterrupt, the interpreter's state kept) and a message saying it
        was cancelled; the episode goes on. Returns whether an action was running. It only sets a flag, so a
        signal handler or another thread may call it."""
        sandbox = self._sandbox
        return sandbox.cancel() if sandbox is not None and not self._done else False

    # -- for policies ---------------------------------------------------------------------------------
    def annotate(self, **data: Any) -> None:
        """Attach data (e.g. LLM token counts) to the next step's trajectory record under "policy". LLM calls
        given as ``llm=record`` or ``llm=[records]`` (mle_env.agents.llm's records) are also counted in the
        episode's disclosure."""
        self._feedback.count_llm(data)
        self._annotations.update(data)

    # -- internals ------------------------------------------------------------------------------------
    def _time_left(self) -> float:
        return self.time_limit - (time.monotonic() - self._started)

    def _run(self, action: Action) -> tuple[dict[str, Any], bool]:
        assert self._sandbox is not None
        if action.type == "score_dev":
            if self.dev is None:
                return dict(action="score_dev", exit_code=1, message=NO_DEV_SPLIT), False
            with tempfile.TemporaryDirectory(prefix="mle-env-dev-") as tmp:
                copied = self._copy_submission(Path(tmp), action.path)
                fields, self._dev_reward = self.dev.score(copied, action.path)
                self._log_test_score("score_dev", action.path, copied)
            return fields, False
        if action.type == "submit":
            return dict(action="submit", message="submitted; the submission is graded"), True
        if action.type == "validate":
            verdict = self._validate(action.path)
            return dict(action="validate", stdout=verdict, exit_code=0 if verdict == "valid" else 1,
                        message="" if verdict == "valid" else f"invalid submission: {verdict}"), False
        timeout = min(action.timeout or self.action_timeout, max(self._time_left(), 0.001))
        result = self._sandbox.exec(action.type, action.code or "", timeout)
        self._log_changed_submission()
        return dict(
            action=action.type, stdout=result.stdout, stderr=result.stderr,
            exit_code=-1 if result.timed_out else (result.exit_code if result.exit_code is not None else -1),
            timed_out=result.timed_out, message=result.note,
        ), False

    def _copy_submission(self, folder: Path, path: str | None = None) -> Path | str | None:
        """The submission (or the file at ``path``) copied out of the sandbox into ``folder``, or why it
        could not be, or None when there is no such file.

        Raises:
            SandboxUnavailable: the sandbox is gone (the infrastructure's fault).
            SandboxBroken: the agent broke the sandbox so that nothing can be copied out.
        """
        assert self._sandbox is not None
        data = self._sandbox.copy_out(path or SUBMISSION, self.grader.max_bytes)
        if data is None:
            return None
        if isinstance(data, str):
            return cap_reason(data)
        path = folder / "submission.csv"
        path.write_bytes(data)
        return path

    def _validate(self, path: str | None = None) -> str:
        with tempfile.TemporaryDirectory(prefix="mle-env-validate-") as tmp:
            copied = self._copy_submission(Path(tmp), path)
            if copied is None:
                return f"there is no ./{path or SUBMISSION} yet"
            if isinstance(copied, str):
                return copied
            verdict = self.grader.validate(copied)
            self._log_test_score("validate", path or SUBMISSION, copied)
            return verdict

    def endpoint_validator(self) -> Callable[[Path], str]:
        """The in-sandbox endpoint's check of an uploaded file (:meth:`_endpoint_validate`), holding this env
        only weakly: the sandbox keeps its endpoint, and an env its sandbox keeps alive would never be collected,
        nor its sandbox closed by its finalizer."""
        env = weakref.ref(self)

        def validate(path: Path) -> str:
            alive = env()
            return alive._endpoint_validate(path) if alive is not None else "the episode has ended"

        return validate

    def _endpoint_validate(self, path: Path) -> str:
        """The in-sandbox endpoint's check of an uploaded file (its verdict only, as the action's)."""
        verdict = self.grader.validate(path)
        self._log_test_score("endpoint", "(posted to the validation endpoint)", path)
        return verdict

    # -- hidden test scores (log_test_scores; see mle_env.test_score_log) ------------------------------------
    @property
    def last_test_score(self) -> dict[str, Any] | None:
        """The latest hidden test grade (log_test_scores), for harness code on the host; None without."""
        return self._test_log.last if self._test_log is not None else None

    def _log_test_score(self, source: str, file_in_sandbox: str | None, copied: Path | str | None) -> None:
        if self._test_log is not None and isinstance(copied, Path):
            self._test_log.log(self._steps, source, file_in_sandbox or SUBMISSION, copied)

    def _log_changed_submission(self) -> None:
        """After a shell or python action: grade ./submission/submission.csv if the action changed it. What the
        copy meets (a broken sandbox) is left for the episode's own next look to find."""
        if self._test_log is None:
            return
        with tempfile.TemporaryDirectory(prefix="mle-env-test-score-") as tmp:
            try:
                copied = self._copy_submission(Path(tmp))
            except (SandboxBroken, SandboxUnavailable):
                return
            self._test_log.log_if_changed(self._steps, SUBMISSION, copied if isinstance(copied, Path) else None)

    def _grade(self) -> GradeReport:
        in_sandbox = f"./{SUBMISSION}"
        with tempfile.TemporaryDirectory(prefix="mle-env-grade-") as tmp:
            try:
                copied = self._copy_submission(Path(tmp))
            except SandboxBroken as e:  # the agent's doing: graded as a submission that cannot be read
                copied = cap_reason(f"{in_sandbox} could not be copied out of the broken sandbox ({e})")
            if isinstance(copied, Path):
                if self._artifacts is not None:
                    self._artifacts.keep_file(copied, SUBMISSION_NAME)
                report = self.grader.grade(copied)
            else:
                report = self.grader.grade(Path(tmp) / "absent.csv")
                if isinstance(copied, str):
                    report = dataclasses.replace(report, status="invalid", submission_exists=True,
                                                 invalid_reason=copied)
                else:
                    report = dataclasses.replace(report, invalid_reason=f"there is no {in_sandbox}")
        return dataclasses.replace(report, submission_path=in_sandbox)

    def _observe(self, action: str, **fields: Any) -> dict[str, Any]:
        steps_left = -1 if self.step_limit is None else max(0, self.step_limit - self._steps)
        obs = make_observation(task=self._task, files=self.files, action=action, time_left=self._time_left(),
                               steps_left=steps_left, max_output=self.limits.max_output, **fields)
        if action == "reset":  # exactly the budget, so that seeded resets are reproducible
            obs["time_left"][...] = self.time_limit
        self._last_obs = obs
        return obs

    def _record(self, action: Any, parsed: Action | None, obs: dict[str, Any], began: float) -> None:
        if self._writer is None:
            return
        self._writer.step(
            step=self._steps, action=parsed.to_dict() if parsed is not None else describe(action, 2000),
            kind=obs["action"], stdout=obs["stdout"], stderr=obs["stderr"], exit_code=int(obs["exit_code"]),
            timed_out=bool(obs["timed_out"]), message=obs["message"], started_at=began - self._started,
            duration_s=time.monotonic() - began, time_left=float(obs["time_left"]),
            steps_left=int(obs["steps_left"]), **({"policy": self._annotations} if self._annotations else {}),
        )
        self._annotations = {}

    def _finish_resources(self, status: str, report: GradeReport | None = None,
                          reward: float = 0.0) -> dict[str, Any] | None:
        """Keep the episode's artifacts and write the footer (if an episode was open), close the trajectory
        and remove the sandbox; returns the episode's disclosure (None when no episode was open)."""
        disclosure = None
        if self._writer is not None:
            disclosure = self._disclosure()
            kept = (self._artifacts.finish(self._sandbox, status, report, disclosure)
                    if self._artifacts is not None else {})
            self._writer.footer(status=status, grade=report.to_dict() if report is not None else None,
                                reward=reward, steps=self._steps, elapsed_s=time.monotonic() - self._started,
                                artifacts=kept, disclosure=disclosure)
            self._writer.close()
            self._writer = None
        if self._sandbox is not None:
            self._sandbox = None
            self._sandbox_finalizer()  # closes it, once: the finalizer is dead afterwards
        return disclosure

    def _disclosure(self) -> dict[str, Any]:
        endpoint = self._sandbox.endpoint if self._sandbox is not None else None
        return episode_disclosure(
            competition_id=self.competition.id, competition_version=self.competition.version,
            sandbox=self.sandbox_kind, image=self.image if self.sandbox_kind == "docker" else None,
            sandbox_info=self._sandbox_info, network=self.limits.network, time_limit_s=self.time_limit,
            wall_time_s=time.monotonic() - self._started, steps=self._steps, step_limit=self.step_limit,
            feedback=self._feedback, endpoint_answered=endpoint.answered if endpoint is not None else 0,
            dev_split=self.config.dev_split, task_text=self.config.task_text,
            test_scores_logged=self.config.log_test_scores)

    def _own_sandbox(self, sandbox: Sandbox) -> None:
        """Make the started ``sandbox`` this env's: closed by _finish_resources or, for an env dropped or left
        open without close() (a script that raised), when it is garbage-collected or the interpreter exits
        (weakref.finalize also runs then), so that no container or sandbox folder outlives its owner."""
        self._sandbox = sandbox
        self._sandbox_finalizer = weakref.finalize(self, close_sandbox, sandbox, os.getpid())


#: what a reader of a trajectory may take each record's fields for (written in every header)
OUTPUT_TRUST = {
    "shell": "stdout, stderr and exit code as the worker read them from a fresh process; its processes are the "
             "agent's, so what they print is the agent's to choose, but not the exit code of the action itself",
    "python": "produced by the agent's own persistent interpreter: code of an earlier cell can take over the "
              "interpreter and forge what later cells print and their exit codes, or keep them from running",
    "validate, score_dev, submit": "computed on the host from a copy of the file: the agent cannot forge them",
}


def close_sandbox(sandbox: Sandbox, owner_pid: int) -> None:
    """Close ``sandbox`` and its validation endpoint (an env's finalizer: it holds the sandbox, never the env).
    Nothing in a forked child process (``owner_pid`` is not its pid): the sandbox is still its parent's."""
    if os.getpid() != owner_pid:
        return
    sandbox.close()
    if sandbox.endpoint is not None:
        sandbox.endpoint.close()


def make(competition: str, **kwargs: Any) -> gymnasium.Env:
    """``gymnasium.make`` for a competition id or alias (so the env gets Gymnasium's standard wrappers).

    ``max_episode_steps=N`` becomes the graded step budget (``step_limit``, the smaller of the two), as it
    does through ``gymnasium.make``.

    Raises:
        ConfigError: ``competition`` is not a non-empty str, or an option is malformed or out of range (raised
            before anything starts).
        UnknownCompetition: no competition has that id or alias.
        NotPrepared: its data is not prepared, or does not match its checksums; the message gives the
            ``mle-env prepare`` command.
    """
    competition = competition_name(competition)  # a one-line ConfigError for 5, None, ""
    options = {k: v for k, v in kwargs.items() if k not in ("render_mode", "disable_env_checker")}
    EnvConfig.from_options(options)  # unknown or bad options fail here, before the registry or any file
    if kwargs.get("max_episode_steps") is not None:
        kwargs["max_episode_steps"] = int(kwargs["max_episode_steps"])  # validated above; Gymnasium wants an int
    spec = get_spec(competition)
    from mle_env.gym_registration import register_gym_ids

    register_gym_ids([spec.id])
    return gymnasium.make(spec.gym_id, **kwargs)
