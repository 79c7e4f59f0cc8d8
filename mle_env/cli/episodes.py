"""``mle-env run`` (one episode of an agent, with a live display) and ``mle-env play`` (you are the agent).

What the agent wrote (outputs, messages, its error, its grade's reasons) is printed
:func:`~mle_env.display_text.terminal_safe` and never read as rich markup.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from mle_env.cli.competitions import console, print_report
from mle_env.display_text import markup_safe, terminal_safe

SEED_HELP = "the episode's seed, given to reset and to the agent (default 0)"


def add_env_arguments(p: argparse.ArgumentParser) -> None:
    """Environment options shared by run, play and eval (checked by EnvConfig: a bad value is one line)."""
    from mle_env.config import REWARD_NAMES, SANDBOXES

    p.add_argument("--sandbox", choices=SANDBOXES, default="auto",
                   help="auto (docker, else isolated local), docker, local, or unisolated (no isolation)")
    p.add_argument("--time-limit", type=float, help="seconds per episode (default: the competition's hint)")
    p.add_argument("--step-limit", type=int, help="steps per episode (default: none)")
    p.add_argument("--action-timeout", type=float, default=1800.0, help="seconds per action (default 1800)")
    p.add_argument("--memory", default="4g", help="memory limit, e.g. 4g or 512m (default 4g)")
    p.add_argument("--disk", help="disk the agent may write, e.g. 20g (default: max(10g, 2 x the public data))")
    p.add_argument("--cpus", type=float, help="CPU limit (cores)")
    p.add_argument("--gpus", help="GPUs: all, a count, or comma-separated ids")
    p.add_argument("--record-dir", help="where trajectories go (default $MLE_ENV_HOME/trajectories)")
    p.add_argument("--artifacts-max-bytes",
                   help="bytes of ./code and ./logs kept per episode, e.g. 200m (default 50m; 0: none)")
    p.add_argument("--image", help="docker sandbox: any image with python3 (default mle-env-agent:cpu)")
    p.add_argument("--reward", default="medal", choices=REWARD_NAMES,
                   help="the final step's reward: medal (0-3), any_medal or above_median (0/1), percentile (share "
                        "of teams beaten), dev_improvement (shaped, needs --dev-split); default medal")
    p.add_argument("--dev-split", type=float,
                   help="hide this share of the training rows as a dev set scored by the score_dev action "
                        "(e.g. 0.1; needed by --reward dev_improvement)")
    p.add_argument("--log-test-scores", action="store_true", default=None,
                   help="grade every validated file and each new submission on the test answers into the episode's "
                        "test_scores.jsonl, which the agent never sees (research on the validation-test gap)")
    p.add_argument("--task-text", metavar="TEXT",
                   help="the description the task starts with: original (default), obfuscated (nothing names the "
                        "competition), or MLE-bench's own from a checkout: mlebench:PATH, mlebench-obfuscated:PATH")


def add_agent_arguments(p: argparse.ArgumentParser) -> None:
    """Agent options shared by run and eval; unset ones are not passed to the agent."""
    p.add_argument("--agent", default="baseline",
                   help="baseline, react, aide, human, or your own policy: package.module:Class or "
                        "path/to/file.py:Class (a class with reset(obs, info) and act(obs, info))")
    p.add_argument("--model", help="LLM model name (react, aide --proposer llm)")
    p.add_argument("--base-url", help="OpenAI-compatible server URL (default $MLE_ENV_LLM_BASE_URL)")
    p.add_argument("--api-key", help="LLM API key (default $MLE_ENV_LLM_API_KEY)")
    p.add_argument("--proposer", choices=("llm", "offline"), help="aide: where new solutions come from")
    p.add_argument("--max-nodes", type=int, help="aide: most solutions to try")
    p.add_argument("--journal", help="aide: journal file (resumed when it exists)")
    p.add_argument("-o", "--agent-option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other agent option (VALUE is parsed as JSON when it can be)")


def env_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``mle_env.make`` options given on the command line, as given ("4g" stays "4g", so run configs stay
    readable), once EnvConfig has checked them.

    Raises:
        ConfigError: a value is malformed or out of range (the CLI prints it as one line, exit status 2).
    """
    from mle_env.config import EnvConfig

    given = dict(sandbox=args.sandbox, time_limit=args.time_limit, step_limit=args.step_limit,
                 action_timeout=args.action_timeout, memory=args.memory, disk=args.disk, cpus=args.cpus,
                 gpus=args.gpus, record_dir=args.record_dir, reward=args.reward,
                 artifacts_max_bytes=args.artifacts_max_bytes, image=args.image, dev_split=args.dev_split,
                 task_text=args.task_text, log_test_scores=args.log_test_scores)
    given = {k: v for k, v in given.items() if v is not None}
    EnvConfig.from_options(given)
    return given


def agent_options(args: argparse.Namespace) -> dict[str, Any]:
    options = {k: getattr(args, k) for k in ("model", "base_url", "api_key", "proposer", "max_nodes", "journal")
               if getattr(args, k, None) is not None}
    for item in args.agent_option:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"error: --agent-option needs KEY=VALUE, got {item!r}")
        try:
            options[key.replace("-", "_")] = json.loads(value)
        except ValueError:
            options[key.replace("-", "_")] = value
    return options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one episode of an agent and grade it")
    p.add_argument("competition", help="id or alias")
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    p.add_argument("--no-live", action="store_true", help="print one line per step instead of a live display")
    p.add_argument("--json", action="store_true", help="print the episode result as JSON")
    add_env_arguments(p)
    add_agent_arguments(p)
    p.set_defaults(func=cmd_run)

    from mle_env.agents.human import HELP as PLAY_COMMANDS

    p = sub.add_parser("play", help="step through an episode yourself at the terminal",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="At the episode's prompt: " + PLAY_COMMANDS.strip("\n"))
    p.add_argument("competition", help="id or alias")
    p.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    p.add_argument("--agent", default="human",
                   help="the interactive policy: human, or your own (package.module:Class, path/to/file.py:Class)")
    p.add_argument("-o", "--agent-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an option of the agent (VALUE is parsed as JSON when it can be)")
    add_env_arguments(p)
    p.set_defaults(func=cmd_play)


class LiveDisplay:
    """A rich live panel: step, elapsed time, budget left, the last action and the tail of its output, and what
    the policy says it is doing when it has a ``status()`` method (AIDE: its node, operator and best CV score).

    The panel is re-rendered four times a second by rich's refresh thread (``__rich__`` reads the clock each
    time), so the elapsed time and how long the current step has run tick while a long action runs.
    """

    def __init__(self, title: str, policy: Any = None) -> None:
        from rich.live import Live

        self.title = markup_safe(title)  # a panel's title is read as markup
        self.policy = policy
        self.started = self.step_started = time.monotonic()
        self.step = 0
        self.done = False
        self.obs: dict[str, Any] | None = None
        self.live = Live(self, console=console(), refresh_per_second=4, transient=False)

    def __rich__(self) -> Any:
        return self._render(self.step, self.obs)

    def _render(self, step: int, obs: dict[str, Any] | None) -> Any:
        from rich.panel import Panel
        from rich.text import Text

        now = time.monotonic()
        text = Text(f"step {step}   elapsed {now - self.started:.0f} s")
        if obs is not None:
            steps = int(obs["steps_left"])
            text.append(f"   time left {max(0.0, float(obs['time_left']) - (now - self.step_started)):.0f} s")
            text.append(f"   steps left {steps}" if steps >= 0 else "")
        if self.done:
            text.append("\nthe episode has ended", style="cyan")
        else:
            text.append(f"\nstep {step + 1} running for {now - self.step_started:.0f} s", style="cyan")
        status = policy_status(self.policy)
        if status:
            text.append("\n" + terminal_safe(status), style="magenta")
        if obs is not None:
            text.append(f"\nlast: {terminal_safe(str(obs['action']))} (exit {int(obs['exit_code'])})\n", style="bold")
            tail = terminal_safe(obs["stdout"] + obs["stderr"] + obs["message"]).strip().splitlines()[-8:]
            text.append("\n".join(line[:150] for line in tail), style="dim")
        return Panel(text, title=self.title)

    def update(self, step: int, obs: dict[str, Any], _reward: float = 0.0, terminated: bool = False,
               truncated: bool = False, *_: Any) -> None:
        self.step, self.obs, self.step_started = step, obs, time.monotonic()
        self.done = bool(terminated or truncated)
        self.live.refresh()

    def __enter__(self) -> LiveDisplay:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.__exit__(*exc)
        self.live.console.print()


def policy_status(policy: Any) -> str:
    """One line from the policy's ``status()`` dict ("" when it has none, or it fails)."""
    status = getattr(policy, "status", None)
    if not callable(status):
        return ""
    try:
        items = status() or {}
        return "   ".join(f"{k.replace('_', ' ')} {f'{v:.5g}' if isinstance(v, float) else v}"
                          for k, v in dict(items).items() if v is not None)
    except Exception:  # noqa: BLE001 - a display must never end the episode
        return ""


def _print_step(step: int, obs: dict[str, Any], reward: float, terminated: bool, truncated: bool,
                info: dict[str, Any]) -> None:
    action = terminal_safe(str(obs["action"]))
    print(f"step {step}: {action} exit={int(obs['exit_code'])} time_left={float(obs['time_left']):.0f}s")


@contextlib.contextmanager
def interrupts_to(policy: Any, env: Any) -> Iterator[None]:
    """While the episode runs, a Ctrl-C (SIGINT) goes to an interactive policy's ``handle_interrupt``, which
    gets ``env.cancel_action`` to stop the running action (the human agent: cancel, then end graded). Other
    policies keep Python's default: KeyboardInterrupt ends the program."""
    handle = getattr(policy, "handle_interrupt", None)
    if not callable(handle) or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda _sig, _frame: handle(env.cancel_action))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def cmd_run(args: argparse.Namespace) -> int:
    from mle_env.agents import make_policy, with_episode_seed
    from mle_env.env import make
    from mle_env.episode import run_episode

    options = env_options(args)  # a bad option fails here, before an agent or a sandbox starts
    policy = make_policy(args.agent, **with_episode_seed(args.agent, agent_options(args), args.seed))
    env = make(args.competition, **options)
    if not args.json and getattr(args, "announce_sandbox", True):  # play's agent says it itself
        sandbox = env.unwrapped
        console().print(markup_safe(f"sandbox: {sandbox.sandbox_kind} ({sandbox.sandbox_reason})"), soft_wrap=True)
    try:
        # the trajectory's header records the reset options: that is how an export names the agent (human too)
        reset_options = {"agent": args.agent}
        if args.json or args.no_live or args.agent == "human":
            with interrupts_to(policy, env.unwrapped):
                result = run_episode(env, policy, seed=args.seed, on_step=None if args.json else _print_step,
                                     options=reset_options)
        else:
            with LiveDisplay(f"{args.agent} on {env.unwrapped.competition.id}", policy) as live:
                result = run_episode(env, policy, seed=args.seed, on_step=live.update, options=reset_options)
    finally:
        env.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
        return 0 if result.status == "ok" else 1
    out = console()
    out.print(markup_safe(f"episode {result.status} ({result.end}) after {result.steps} steps in "
                          f"{result.wall_time_s:.1f} s; reward {result.reward:g}; trajectory {result.trajectory}"))
    if result.error:
        out.print(f"[red]{markup_safe(result.error.strip().splitlines()[-1])}[/red]")  # [images] etc. stay intact
    if result.grade is not None:
        print_report(result.grade)
    return 0 if result.status == "ok" else 1


def cmd_play(args: argparse.Namespace) -> int:
    args.json, args.no_live, args.announce_sandbox = False, True, False
    return cmd_run(args)
