"""Does the dev score track the test score? AIDE's nodes scored on a dev split and on the test set.

    python benchmarks/dev_split.py [--nodes 8] [--dev-split 0.1] [--cv-folds 3] [--competitions practice]

One episode per practice competition (prepared from its PyPI source into ``$MLE_ENV_HOME``, or a temporary
home), made with ``dev_split`` and ``reward="dev_improvement"``, runs AIDE with the offline proposer.
Each node's program also predicts ``data/dev/dev.csv`` with the same fitted pipeline, and the policy sends
``score_dev`` for it before AIDE validates the node. After the episode, every node's test submission (kept
in the episode's ``code/`` artifacts) is graded on the host. Printed per competition: the nodes, the
Spearman correlation across nodes between the dev score and the test score (and, for comparison, between
AIDE's own cross-validation score and the test score), the summed shaped reward and the final medal.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

import mle_env
from mle_env.competition.registry import get_spec, list_competitions
from mle_env.prepare.runner import prepare
from mle_env.scaffolds.aide.journal import Node
from mle_env.scaffolds.aide.offline import OfflineProposer
from mle_env.scaffolds.aide.policy import AidePolicy
from mle_env.scaffolds.aide.proposer import Proposal, SearchContext

DEV_FILE = "submission/dev.csv"  # in the node's folder

# the node's pipeline is fitted twice, on the same rows with the same seed: once to predict the dev rows
# (with its cross-validation switched off, printing a score AIDE ignores), then as AIDE runs it (its
# VALIDATION_SCORE line is the last); one thread each, as the benchmark's sandboxes share few cores
PROGRAM = """import json, os, sys
for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = "1"
sys.path.insert(0, "..")
import mlkit
PROFILE = json.loads({profile!r})
CONFIG = json.loads({config!r})
DEV = dict(PROFILE, test_file="dev/dev.csv", sample="dev/sample_submission.csv",
           image_dir_test=PROFILE["image_dir_train"])
validate = mlkit.validate
mlkit.validate = lambda *args, **kwargs: (float("nan"), [])
mlkit.run(DEV, CONFIG, {dev!r})
mlkit.validate = validate
mlkit.run(PROFILE, CONFIG, "submission/submission.csv")
"""


class DevPredictingProposer(OfflineProposer):
    """The offline proposer, whose programs also write the dev rows' predictions to ``DEV_FILE``."""

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        proposal = super().propose(operator, parent, ctx)
        proposal.code = PROGRAM.format(profile=json.dumps(ctx.profile), config=json.dumps(proposal.config),
                                       dev=DEV_FILE)
        return proposal


class DevScoringAide:
    """AIDE, with a ``score_dev`` of each node's dev predictions slipped in before AIDE validates the node."""

    def __init__(self, **options: Any) -> None:
        self.aide = AidePolicy(custom_proposer=DevPredictingProposer(seed=options.get("seed", 0),
                                                                     cv_folds=options["cv_folds"]), **options)
        self.dev_scores: dict[int, float | None] = {}
        self._held: tuple[int, dict[str, Any]] | None = None

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        self.aide.reset(obs, info)

    def annotations(self) -> dict[str, Any]:
        return self.aide.annotations() if hasattr(self.aide, "annotations") else {}

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> Any:
        if self._held is not None:  # obs answers our score_dev; AIDE gets its validate now
            node, action = self._held
            self._held = None
            self.dev_scores[node] = float(obs["stdout"]) if int(obs["exit_code"]) == 0 else None
            return action
        action = self.aide.act(obs, info)
        path = action.get("path", "") if isinstance(action, dict) and action.get("type") == "validate" else ""
        if path.startswith("code/node_"):
            node = int(path.split("/")[1].removeprefix("node_"))
            self._held = (node, action)
            return {"type": "score_dev", "path": f"code/node_{node}/{DEV_FILE}"}
        return action


def run(cid: str, args: argparse.Namespace) -> dict[str, Any]:
    env = mle_env.make(cid, sandbox=args.sandbox, dev_split=args.dev_split, reward="dev_improvement",
                       time_limit=args.time_limit)
    policy = DevScoringAide(proposer="offline", max_nodes=args.nodes, num_drafts=args.drafts,
                            cv_folds=args.cv_folds, node_timeout=args.node_timeout, seed=0)
    rewards: list[float] = []
    began = time.monotonic()
    result = mle_env.run_episode(env, policy, seed=0, on_step=lambda step, obs, reward, *rest: rewards.append(reward))
    grader = env.unwrapped.grader
    episode = Path(result.trajectory).parent
    env.close()
    lower = get_spec(cid).metric.lower_is_better
    rows = []
    for node in policy.aide.journal.nodes if policy.aide.journal else []:
        kept = episode / node.submission_path
        test = grader.grade(kept).score if kept.is_file() else None
        rows.append({"node": node.id, "op": node.operator, "cv": node.score, "dev": policy.dev_scores.get(node.id),
                     "test": test})
    both = [r for r in rows if r["dev"] is not None and r["test"] is not None]
    with_cv = [r for r in both if r["cv"] is not None]

    def rho(key: str, part: list[dict[str, Any]]) -> float:
        if len(part) < 3:
            return float("nan")
        return float(spearmanr([r[key] for r in part], [r["test"] for r in part]).statistic)

    grade = result.grade
    return {"competition": cid, "lower_is_better": lower, "nodes": rows, "scored": len(both),
            "spearman_dev_test": rho("dev", both), "spearman_cv_test": rho("cv", with_cv),
            "reward": sum(rewards), "final_score": grade.score if grade else None,
            "medal": grade.to_dict()["medal"] if grade else "-", "wall_s": time.monotonic() - began}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competitions", default="practice")
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--drafts", type=int, default=4)
    parser.add_argument("--cv-folds", type=int, default=3)
    parser.add_argument("--dev-split", type=float, default=0.1)
    parser.add_argument("--node-timeout", type=float, default=120.0)
    parser.add_argument("--time-limit", type=float, default=900.0)
    parser.add_argument("--sandbox", default="local")
    args = parser.parse_args()
    if not os.environ.get("MLE_ENV_HOME"):
        os.environ["MLE_ENV_HOME"] = tempfile.mkdtemp(prefix="mle-env-dev-bench-")
    competitions = []
    for name in args.competitions.split(","):
        competitions += list_competitions("practice") if name == "practice" else [get_spec(name).id]
    summary = []
    for cid in competitions:
        prepare(cid)
        out = run(cid, args)
        summary.append(out)
        print(f"\n{cid} ({'lower' if out['lower_is_better'] else 'higher'} is better), {out['wall_s']:.0f} s")
        print(f"  {'node':>4} {'op':<8} {'cv':>9} {'dev':>9} {'test':>9}")
        for r in out["nodes"]:
            cells = [f"{r[k]:9.5f}" if r[k] is not None else f"{'-':>9}" for k in ("cv", "dev", "test")]
            print(f"  {r['node']:>4} {r['op']:<8} " + " ".join(cells))
        print(f"  Spearman(score_dev, test) = {out['spearman_dev_test']:.3f} over {out['scored']} nodes; "
              f"Spearman(AIDE CV, test) = {out['spearman_cv_test']:.3f}; dev_improvement reward "
              f"{out['reward']:.3f}; final test score {out['final_score']} ({out['medal']})")
    print("\ncompetition                      nodes  rho(dev,test)  rho(cv,test)  reward  medal")
    for out in summary:
        print(f"{out['competition']:<32} {out['scored']:>5}  {out['spearman_dev_test']:>13.3f}  "
              f"{out['spearman_cv_test']:>12.3f}  {out['reward']:>6.3f}  {out['medal']}")


if __name__ == "__main__":
    main()
