"""Scores and costs of the bundled agents on the offline competitions.

    python benchmarks/agents.py [--agents baseline,aide] [--competitions insults,practice] [--sandbox local]

Runs one episode (seed 0) per agent and competition and prints the score, the medal, the wall time and the
CPU time the sandbox used (local sandbox: all processes of the episode). ``aide`` uses the offline proposer
with 8 nodes; ``react`` needs MLE_ENV_LLM_BASE_URL. Competitions must be prepared (detecting-insults needs
its leaderboard: ``mle-env prepare insults --leaderboard PATH``); practice ones are prepared on the fly.
"""

from __future__ import annotations

import argparse
import resource
import time

import mle_env
from mle_env.competition.registry import get_spec, list_competitions
from mle_env.prepare.runner import prepare

AGENT_OPTIONS = {"baseline": {}, "aide": {"proposer": "offline", "max_nodes": 8}, "react": {"max_tokens": 512}}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(agent: str, competition: str, sandbox: str, step_limit: int | None) -> dict:
    env = mle_env.make(competition, sandbox=sandbox, time_limit=1800, step_limit=step_limit)
    cpu, began = children_cpu(), time.monotonic()
    result = mle_env.run_episode(env, mle_env.make_policy(agent, **AGENT_OPTIONS[agent]), seed=0)
    env.close()
    grade = result.grade
    return {"agent": agent, "competition": competition, "status": result.status,
            "score": grade.score if grade else None, "medal": grade.to_dict()["medal"] if grade else "-",
            "wall_s": time.monotonic() - began, "cpu_s": children_cpu() - cpu, "steps": result.steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="baseline,aide")
    parser.add_argument("--competitions", default="detecting-insults-in-social-commentary,practice")
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--step-limit", type=int, help="for react: steps per episode")
    args = parser.parse_args()
    competitions = []
    for name in args.competitions.split(","):
        competitions += list_competitions("practice") if name == "practice" else [get_spec(name).id]
    for cid in competitions:
        if get_spec(cid).split == "practice":
            prepare(cid)
    print(f"{'agent':9} {'competition':40} {'score':>9} {'medal':7} {'wall':>8} {'cpu':>8} {'steps':>5}")
    for agent in args.agents.split(","):
        for cid in competitions:
            r = run(agent, cid, args.sandbox, args.step_limit)
            score = f"{r['score']:.5f}" if r["score"] is not None else r["status"]
            print(f"{agent:9} {cid:40} {score:>9} {r['medal']:7} {r['wall_s']:7.1f}s {r['cpu_s']:7.1f}s "
                  f"{r['steps']:5d}", flush=True)


if __name__ == "__main__":
    main()
