"""``mle-env run`` (one episode of an agent, with a live display) and ``mle-env play`` (you are the agent)."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from mle_env.cli.competitions import console, print_report


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
    p.add_argument("--reward", default="medal", choices=REWARD_NAMES)


def add_agent_arguments(p: argparse.ArgumentParser) -> None:
    """Agent options shared by run and eval; unset ones are not passed to the agent."""
    p.add_argument("--agent", default="baseline", help="baseline, react, aide or human")
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
                 gpus=args.gpus, record_dir=args.record_dir, reward=args.reward)
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
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-live", action="store_true", help="print one line per step instead of a live display")
    p.add_argument("--json", action="store_true", help="print the episode result as JSON")
    add_env_arguments(p)
    add_agent_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("play", help="step through an episode yourself at the terminal")
    p.add_argument("competition", help="id or alias")
    p.add_argument("--seed", type=int, default=0)
    add_env_arguments(p)
    p.set_defaults(func=cmd_play)


class LiveDisplay:
    """A rich live panel: step, elapsed time, budget left, the last action and the tail of its output."""

    def __init__(self, title: str) -> None:
        from rich.live import Live

        self.title = title
        self.started = time.monotonic()
        self.live = Live(self._render(0, None), console=console(), refresh_per_second=4, transient=False)

    def _render(self, step: int, obs: dict[str, Any] | None) -> Any:
        from rich.panel import Panel
        from rich.text import Text

        text = Text(f"step {step}   elapsed {time.monotonic() - self.started:.0f} s")
        if obs is not None:
            steps = int(obs["steps_left"])
            text.append(f"   time left {float(obs['time_left']):.0f} s")
            text.append(f"   steps left {steps}" if steps >= 0 else "")
            text.append(f"\nlast: {obs['action']} (exit {int(obs['exit_code'])})\n", style="bold")
            tail = (obs["stdout"] + obs["stderr"] + obs["message"]).strip().splitlines()[-8:]
            text.append("\n".join(line[:150] for line in tail), style="dim")
        return Panel(text, title=self.title)

    def update(self, step: int, obs: dict[str, Any], *_: Any) -> None:
        self.live.update(self._render(step, obs))

    def __enter__(self) -> LiveDisplay:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.__exit__(*exc)
        self.live.console.print()


def _print_step(step: int, obs: dict[str, Any], reward: float, terminated: bool, truncated: bool,
                info: dict[str, Any]) -> None:
    print(f"step {step}: {obs['action']} exit={int(obs['exit_code'])} time_left={float(obs['time_left']):.0f}s")


def cmd_run(args: argparse.Namespace) -> int:
    from mle_env.agents import make_policy
    from mle_env.env import make
    from mle_env.episode import run_episode

    options = env_options(args)  # a bad option fails here, before an agent or a sandbox starts
    policy = make_policy(args.agent, **agent_options(args))
    env = make(args.competition, **options)
    try:
        if args.json or args.no_live or args.agent == "human":
            result = run_episode(env, policy, seed=args.seed, on_step=None if args.json else _print_step)
        else:
            with LiveDisplay(f"{args.agent} on {env.unwrapped.competition.id}") as live:
                result = run_episode(env, policy, seed=args.seed, on_step=live.update)
    finally:
        env.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
        return 0 if result.status == "ok" else 1
    out = console()
    out.print(f"episode {result.status} ({result.end}) after {result.steps} steps in {result.wall_time_s:.1f} s; "
              f"reward {result.reward:g}; trajectory {result.trajectory}")
    if result.error:
        out.print(f"[red]{result.error.strip().splitlines()[-1]}[/red]")
    if result.grade is not None:
        print_report(result.grade)
    return 0 if result.status == "ok" else 1


def cmd_play(args: argparse.Namespace) -> int:
    args.agent, args.json, args.no_live, args.agent_option = "human", False, True, []
    return cmd_run(args)
