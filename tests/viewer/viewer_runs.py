"""What the viewer's tests look at, made for real: an evaluation of an agent that prints hostile text, an
AIDE search, and hand-written runs and journals for the cases a real run does not reach. The policies are
module-level classes so that the spawned worker processes of an evaluation can unpickle them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mle_env.agents.policy import BasePolicy

#: text an agent controls that must show as text, and never act
HOSTILE = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "javascript:window.__pwned=1",
    "[red]markup[/red]",
]
#: escape sequences that must be stripped (the text between them stays)
ANSI = "\x1b[31mRED-TEXT\x1b[0m \x1b]8;;http://x\x07LINK-TEXT\x1b]8;;\x07"


def _printf(text: str) -> str:
    """A shell command printing ``text`` exactly (octal escapes for everything but plain characters)."""
    spelled = "".join(c if c.isalnum() or c in " .,:=-_" else f"\\{ord(c):03o}" for c in text)
    return f"printf '{spelled}\\n'"


class HostileAgent(BasePolicy):
    """Prints hostile strings and a long output, writes a code file, submits the sample submission; records an
    LLM call and a harness repair whose diff is hostile too."""

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        super().reset(obs, info)
        self.n = 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | str:
        self.n += 1
        if self.n == 1:
            self.annotate(llm={"model": "test-model", "prompt_tokens": 1234, "completion_tokens": 56, "cost": 0.0012})
            return " && ".join([*(_printf(h) for h in HOSTILE), _printf(ANSI), "seq 1 100"])
        if self.n == 2:
            diff = "--- model\n+++ ran\n@@ -1 +1 @@\n-print('<script>window.__pwned=1</script>')\n+print('fixed')\n"
            self.annotate(repairs={"fired": [{"name": "harness_work", "what": "x"}], "diff": diff})
            return {"type": "python", "code": "import sys\n# a comment\nprint('" + HOSTILE[1] + "', file=sys.stderr)\n"
                                              "open('code/train.py', 'w').write('x = 1  # <b>bold</b>\\n')\n"}
        if self.n == 3:
            return "mkdir -p code && cp data/sample_submission.csv submission/submission.csv"
        return {"type": "submit"}


def evaluate_hostile(out: Path, competition: str, seeds: int = 2) -> Path:
    """A real ``mle-env eval`` of :class:`HostileAgent` (local sandbox, one worker) into ``out``."""
    from mle_env.evaluation import EvalConfig, evaluate

    evaluate(EvalConfig(agent="hostile", policy_factory=HostileAgent, competitions=[competition], seeds=seeds,
                        out=out, env_options={"sandbox": "local"}))
    return out


class QuickProposer:
    """AIDE's proposer for tests: drafts that print a CV score (the second draft crashes), improvements that
    change a line; every plan carries hostile text."""

    needs_profile = False

    def __init__(self) -> None:
        self.n = 0

    def propose(self, operator: str, parent: Any, ctx: Any) -> Any:
        from mle_env.scaffolds.aide.proposer import Proposal

        self.n += 1
        lines = ["import pandas as pd", "test = pd.read_csv('data/test.csv')",
                 "pd.DataFrame({'id': test['id'], 'target': 0.5}).to_csv('submission/submission.csv', index=False)",
                 f"print('VALIDATION_SCORE: {0.5 + self.n / 10}')"]
        if self.n == 2:
            lines.insert(0, "raise SystemExit('<script>window.__pwned=1</script>')")
        if parent is not None:
            lines.insert(1, f"C = {self.n}  # improved from node {parent.id}")
        return Proposal(plan=f"{operator} {self.n}: {HOSTILE[0]} {HOSTILE[1]}", code="\n".join(lines) + "\n")


def aide_episode(competition: str, record_dir: Path, max_nodes: int = 4) -> dict[str, Any]:
    """A real AIDE episode on the local sandbox with :class:`QuickProposer`; returns the episode's info."""
    import mle_env
    from mle_env.scaffolds.aide.policy import AidePolicy

    policy = AidePolicy(custom_proposer=QuickProposer(), max_nodes=max_nodes, num_drafts=2, node_timeout=60)
    env = mle_env.make(competition, sandbox="local", record_dir=record_dir, log_test_scores=True)
    try:
        result = mle_env.run_episode(env, policy, seed=0)
    finally:
        env.close()
    return {"trajectory": result.trajectory, "grade": result.grade}


def hostile_journal(path: Path) -> Path:
    """A hand-written AIDE journal: four nodes (buggy, valid, best, a debug child), every text hostile."""
    text = "\n".join(HOSTILE) + "\n" + ANSI
    header = {"type": "header", "competition_id": "tiny-comp", "metric": {"name": "auc", "lower_is_better": False}}
    nodes = [
        {"id": 0, "parent": None, "operator": "draft", "plan": "plan " + text, "code": "x = 1\nprint(x)\n",
         "buggy": True, "failure": "syntax", "bug_reason": text, "output_head": text, "output_tail": "",
         "score": None, "created_at": 1000.0, "run_time_s": 1.5, "exit_code": 1},
        {"id": 1, "parent": None, "operator": "draft", "plan": "second",
         "code": "y = 2\nprint('VALIDATION_SCORE: 0.7')\n",
         "buggy": False, "failure": "ok", "score": 0.7, "validation": "valid", "created_at": 1010.0,
         "test_score": {"score": 0.69, "medal": "bronze", "valid": True}},
        {"id": 2, "parent": 1, "operator": "improve", "plan": "improve " + text,
         "code": "y = 3  # <script>window.__pwned=1</script>\nprint('VALIDATION_SCORE: 0.9')\n", "buggy": False,
         "failure": "ok", "score": 0.9, "validation": "valid", "created_at": 1030.0, "promoted": True,
         "output_head": "line\n" * 60, "test_score": {"score": 0.88, "medal": "gold", "valid": True}},
        {"id": 3, "parent": 0, "operator": "debug", "plan": "debug", "code": "x = 1\nprint(x + 1)\n", "buggy": True,
         "failure": "no_score", "created_at": 1050.0},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in [header, *({"type": "node", **n} for n in nodes)]) + "\n")
    return path


def synthetic_run(out: Path, episodes: list[dict[str, Any]], scheduled: dict[str, int] | None = None) -> Path:
    """A hand-written run folder: config.json, results.jsonl, and for each episode given with ``steps`` a
    small episode folder under trajectories/."""
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for n, e in enumerate(episodes):
        record = {"competition_id": e["cid"], "split": e.get("split", "practice"), "seed": e["seed"],
                  "attempt": e.get("attempt", 0), "agent": e.get("agent", "synthetic"),
                  "status": e.get("status", "ok"), "end": e.get("end", "submitted"), "grade": e.get("grade"),
                  "reward": 0.0, "steps": len(e.get("steps", [])), "wall_time_s": e.get("wall", 10.0 + n),
                  "error": e.get("error"), "trajectory": None,
                  "disclosure": {"llm": {"calls": 1, "prompt_tokens": 10, "completion_tokens": 5, "cost": 0.01}}}
        if "steps" in e:
            folder = out / "trajectories" / f"{e['cid']}-{n:05d}"
            write_trajectory(folder / "trajectory.jsonl", e["cid"], e["seed"], e["steps"], e.get("grade"),
                             fork=e.get("fork"))
            record["trajectory"] = e.get("recorded", str(folder / "trajectory.jsonl"))
        records.append(record)
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    cids = sorted({e["cid"] for e in episodes})
    config = {"agent": "synthetic", "competitions": cids, "seeds": max(e["seed"] for e in episodes) + 1,
              "splits": {c: "practice" for c in cids}, "scheduled": scheduled or {}}
    (out / "config.json").write_text(json.dumps(config))
    return out


def write_trajectory(path: Path, cid: str, seed: int, steps: list[str], grade: dict[str, Any] | None,
                     fork: dict[str, Any] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "header", "format": 1, "competition_id": cid, "competition_version": 0, "seed": seed,
              "sandbox": "local", "time_limit": 60, "task": f"# {cid}\nthe task", "episode_id": os.urandom(8).hex(),
              **({"fork": fork} if fork else {})}
    lines = [header]
    for n, text in enumerate(steps, 1):
        lines.append({"type": "step", "step": n, "kind": "shell", "action": {"type": "shell", "code": f"echo {n}"},
                      "stdout": text, "stderr": "", "message": "", "exit_code": 0, "timed_out": False,
                      "started_at": float(n), "duration_s": 0.1, "time_left": 50.0, "steps_left": -1})
    lines.append({"type": "footer", "status": "submitted", "steps": len(steps), "elapsed_s": 3.0, "reward": 1.0,
                  "grade": grade})
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def grade(score: float, medal: str | None = None) -> dict[str, Any]:
    tiers = {"gold": 3, "silver": 2, "bronze": 1}
    return {"competition_id": "x", "score": score, "valid_submission": True, "medal": medal,
            "medal_tier": tiers.get(medal or "", 0), "any_medal": medal is not None, "above_median": medal is not None,
            "is_lower_better": False, "percentile": 0.5, "gold_threshold": 0.9}


def listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and modification time (to show nothing was written)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    st = root.stat()
    out["."] = (st.st_size, st.st_mtime_ns)
    return out
