"""AidePolicy: AIDE-style solution-tree search as a policy of MLEEnv.

The loop: look at the data; then, node after node, ask the search which operator to apply (draft,
improve the best node, or debug a buggy leaf), let the proposer write the program, run it in its own
folder (``code/node_<id>/``) with a timeout capped by the time left, read the validation score it
printed, check its submission with ``validate``, and, when it is valid and better than the incumbent
(see :func:`better`), copy it to ``./submission/submission.csv``. So the best valid submission sits in
./submission at all times and a run stopped anywhere still has an answer. Every node is appended to the
journal as it finishes; a run started with an existing journal resumes: it reruns the best node to
restore its submission, then goes on.

With ``fork=True`` (see AideConfig.fork) the tree's branches are episodes: right after a node runs, the
policy keeps a fork of the episode as that node left it (for nodes that can still get children), and each
improve or debug child runs in a fork of its parent's state, stepped by the policy itself (each fork has
its own trajectory naming its parent). Drafts, promotion and the final submission stay in the episode;
a better child found in a branch is re-run there once, at the end.
"""

from __future__ import annotations

import math
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from gymnasium.error import ResetNeeded

from mle_env.agents.baseline import INSPECT
from mle_env.agents.program_template import BEGIN
from mle_env.agents.repairs import fired_at_run
from mle_env.agents.scripted import (
    Script,
    ScriptedPolicy,
    budget_timeout,
    fold_scores,
    install_mlkit,
    last_json,
    profile_action,
    validation_score,
)
from mle_env.agents.task_facts import PREVIEW
from mle_env.errors import MleEnvError
from mle_env.scaffolds.aide.config import AideConfig
from mle_env.scaffolds.aide.failures import classify
from mle_env.scaffolds.aide.journal import Journal, Node
from mle_env.scaffolds.aide.proposer import Proposer, SearchContext
from mle_env.scaffolds.aide.search import next_move

_STEPS_PER_NODE = 3  # run, validate, promote
_EOF = "MLE_ENV_AIDE_EOF"


def run_action(node: Node, timeout: float) -> dict[str, Any]:
    """A shell action that saves the node's program in code/node_<id>/ and runs it there."""
    folder = f"code/node_{node.id}"
    return {"type": "shell", "timeout": timeout, "code": (
        f"mkdir -p {folder}/submission && ln -sfn ../../data {folder}/data\n"
        f"cat > {folder}/solution.py <<'{_EOF}'\n{node.code.rstrip()}\n{_EOF}\n"
        f"cd {folder} && python3 solution.py"
    )}


def promote_action(node: Node) -> dict[str, Any]:
    """Copy the node's submission to ./submission/submission.csv in one rename (never half-written)."""
    return {"type": "shell", "code": f"cp {node.submission_path} submission/.candidate.csv && "
                                     "mv submission/.candidate.csv submission/submission.csv"}


def better(node: Node, best: Node | None, lower_is_better: bool) -> bool:
    """Whether ``node`` should replace the incumbent ``best``.

    When both scored themselves on the same cross-validation folds, the improvement must be larger than
    one standard error of the paired per-fold differences: taking the maximum of many noisy scores
    otherwise favours lucky nodes that do worse on the test set. Without fold scores, a better score wins.
    """
    if node.buggy or node.score is None:
        return False
    if best is None or best.score is None:
        return True
    sign = -1.0 if lower_is_better else 1.0
    if len(node.fold_scores) > 1 and len(node.fold_scores) == len(best.fold_scores):
        diffs = [sign * (a - b) for a, b in zip(node.fold_scores, best.fold_scores, strict=True)]
        return statistics.fmean(diffs) > statistics.stdev(diffs) / math.sqrt(len(diffs))
    return sign * (node.score - best.score) > 0


def _step(branch: Any, action: dict[str, Any]) -> dict[str, Any]:
    """Step a branch (a fork of the episode) and return its observation."""
    return branch.step(action)[0]


def make_proposer(config: AideConfig) -> Proposer:
    if config.proposer == "offline":
        from mle_env.scaffolds.aide.offline import OfflineProposer

        return OfflineProposer(seed=config.seed, cv_folds=config.cv_folds)
    if config.proposer == "llm":
        from mle_env.scaffolds.aide.llm import LLMProposer

        return LLMProposer(memory_chars=config.memory_chars, output_chars=config.output_chars, program=config.program,
                           repairs=config.repairs, **config.llm)
    raise ValueError(f"proposer must be 'llm' or 'offline', not {config.proposer!r}")


class AidePolicy(ScriptedPolicy):
    """See the module docstring; options are the fields of AideConfig (plus LLM settings).
    ``custom_proposer`` replaces the proposer the config names (e.g. one with a preconfigured LLM client)."""

    def __init__(self, custom_proposer: Proposer | None = None, **options: Any) -> None:
        super().__init__()
        self.config = AideConfig.from_options(**options)
        self._proposer = custom_proposer
        self.journal: Journal | None = None
        self._status: dict[str, Any] = {}
        self._env: Any = None  # the MLEEnv, for fork=True (bind_env)
        self._states: dict[int, Any] = {}  # node id -> a fork of the episode as that node left it
        self._in_episode: int | None = None  # the node whose submission is in the episode's ./submission
        self._fallback: int | None = None  # a node with a valid file but no score, copied there meanwhile

    def bind_env(self, env: Any) -> None:
        """The env whose episodes this policy plays (called by run_episode; needed by ``fork=True``)."""
        self._env = env

    def close(self) -> None:
        """Close the forks kept as node states."""
        for state in self._states.values():
            state.close()
        self._states = {}

    def status(self) -> dict[str, Any]:
        """What the search is doing, for a live display (read from another thread; replaced, never mutated):
        ``phase``, the current ``node`` and its ``operator``, ``nodes`` done of ``max_nodes``, the best
        node's cross-validation score (``best_cv``) and id (``best_node``)."""
        return dict(self._status)

    def _set_status(self, phase: str, node: Node | None = None, best: Node | None = None) -> None:
        journal = self.journal
        self._status = {
            "phase": phase, "node": node.id if node is not None else None,
            "operator": node.operator if node is not None else None,
            "nodes": f"{len(journal.nodes) if journal else 0}/{self.config.max_nodes}",
            "best_cv": best.score if best is not None else None, "best_node": best.id if best is not None else None,
        }

    def _journal_path(self, info: dict[str, Any]) -> Path:
        if self.config.journal:
            return Path(self.config.journal)
        trajectory = info.get("trajectory")
        if trajectory:
            return Path(trajectory).with_suffix(".aide.jsonl")
        return Path(tempfile.mkdtemp(prefix="mle-env-aide-")) / "journal.jsonl"

    def script(self, obs: dict[str, Any], info: dict[str, Any]) -> Script:
        config = self.config
        proposer = self._proposer or make_proposer(config)
        lower = bool(info["metric"]["lower_is_better"])
        header = {"competition_id": info["competition_id"], "metric": info["metric"], "config": config.__dict__,
                  "started_at": time.time()}
        self.journal = journal = Journal.open(self._journal_path(info), header)
        self.close()
        self._in_episode = self._fallback = None
        if config.fork and self._env is None:
            from mle_env.agents import AgentError

            raise AgentError("aide's fork=True forks the episode: run it with mle_env.run_episode, or call "
                             "policy.bind_env(env) before the episode starts")
        rng = random.Random(config.seed + len(journal.nodes))
        self._set_status("looking at the data")
        if proposer.needs_profile:
            obs = yield {"type": "shell", "code": INSPECT, "timeout": 60}
        else:  # a writer of programs needs exact paths and column names: a preview made for it
            obs = yield {"type": "python", "code": PREVIEW, "timeout": 60}
        preview = obs["stdout"] if int(obs["exit_code"]) == 0 else obs["stdout"] + obs["stderr"]
        profile = None
        if proposer.needs_profile:
            self._set_status("profiling the data")
            obs = yield install_mlkit()
            obs = yield profile_action(info)
            profile = last_json(obs["stdout"])
            if profile is None:
                return  # nothing the offline proposer can do; submit what there is
        ctx = SearchContext(task=obs["task"], data_preview=preview, metric=info["metric"]["name"],
                            lower_is_better=lower, journal=journal, node_timeout=config.node_timeout, profile=profile,
                            submission=info.get("submission"), domain=info.get("domain"))
        best = journal.best(lower)
        if best is not None:  # resuming: rebuild the best node's submission in this fresh sandbox
            self._set_status("rerunning the best node", best, best)
            obs = yield run_action(best, self._timeout(obs))
            if int(obs["exit_code"]) == 0:
                obs = yield promote_action(best)
                self._in_episode = best.id
        unrecorded_llm: list[dict[str, Any]] = []  # completions not yet attached to a trajectory step
        while len(journal.nodes) < config.max_nodes and self._room_for_a_node(obs):
            operator, parent = next_move(journal, config, rng, lower)
            self._status = {**self._status, "phase": f"proposing ({operator})", "node": journal.next_id(),
                            "operator": operator}
            ctx.time_left, ctx.nodes_left = float(obs["time_left"]), config.max_nodes - len(journal.nodes)
            ctx.node_timeout = min(config.node_timeout, self._timeout(obs))
            asked = time.monotonic()
            proposal = proposer.propose(operator, parent, ctx)
            thinking = time.monotonic() - asked  # the observation's time_left is this much older now
            node = Node(id=journal.next_id(), operator=operator, parent=parent.id if parent else None,
                        plan=proposal.plan, code=proposal.code, config=proposal.config, llm=proposal.llm,
                        repairs=proposal.repairs,
                        debug_depth=parent.debug_depth + 1 if operator == "debug" and parent else 0)
            unrecorded_llm += proposal.llm
            if not node.code.strip():
                node.bug_reason = "the proposer wrote no code"
                node.failure = classify(node)
                journal.append(node)
                continue
            self.annotate(aide={"node": node.id, "operator": operator, "parent": node.parent, "plan": node.plan[:500]},
                          **({"llm": unrecorded_llm} if unrecorded_llm else {}),
                          **({"repairs": node.repairs} if node.repairs else {}))
            unrecorded_llm = []
            branch = self._branch(parent) if config.fork and parent is not None else None
            if branch is not None:  # this node's steps are the branch's, and so are their annotations
                branch.annotate(**self.annotations())
            started = time.monotonic()
            self._set_status("running" if branch is None else f"running in a fork of node {parent.id}", node,
                             journal.best(lower))
            # the time left is `thinking` seconds less than the observation says; the node's own cap stays
            action = run_action(node, self._timeout({**obs, "time_left": float(obs["time_left"]) - thinking}))
            obs = (yield action) if branch is None else _step(branch, action)
            self._record_run(node, obs, time.monotonic() - started)
            if not node.buggy or (node.exit_code == 0 and not node.timed_out):  # a file without a score may
                # still be valid: it is then the fallback submission when no node scores itself
                self._set_status(f"validating (CV {node.score:.5g})" if node.score is not None else "validating",
                                 node, journal.best(lower))
                action = {"type": "validate", "path": node.submission_path}
                obs = (yield action) if branch is None else _step(branch, action)
                node.validation = obs["stdout"]
                node.test_score = self._hidden_test_score(branch, node)
                if node.validation != "valid" and not node.buggy:
                    node.buggy, node.bug_reason = True, f"the validator rejected the submission: {node.validation}"
                if node.buggy and branch is None and node.validation == "valid" and self._in_episode is None:
                    obs = yield promote_action(node)  # something valid in ./submission, however it scored
                    self._fallback = node.id if int(obs["exit_code"]) == 0 else self._fallback
            node.failure = classify(node)
            if better(node, journal.best(lower), lower):
                if branch is None:
                    obs = yield promote_action(node)
                    node.promoted = int(obs["exit_code"]) == 0
                    self._in_episode = node.id if node.promoted else self._in_episode
                else:  # the incumbent now; its submission reaches the episode at the end
                    node.promoted = True
            journal.append(node)
            if config.fork:
                self._keep_state(node, branch)
            self._set_status("buggy" if node.buggy else "done", node, journal.best(lower))
        best = journal.best(lower)
        self.close()
        if config.fork and best is not None and best.promoted and best.id != self._in_episode:
            self._set_status("re-running the best node in the episode", best, best)
            obs = yield run_action(best, self._timeout(obs))
            if int(obs["exit_code"]) == 0:
                obs = yield promote_action(best)
        self._set_status("final validation", None, journal.best(lower))
        obs = yield {"type": "validate"}

    def _hidden_test_score(self, branch: Any, node: Node) -> dict[str, Any] | None:
        """The env's hidden test grade of the file just validated (log_test_scores), kept in the journal only."""
        env = branch if branch is not None else self._env
        record = getattr(getattr(env, "unwrapped", env), "last_test_score", None)
        if (isinstance(record, dict) and record.get("source") == "validate"
                and record.get("file") == node.submission_path):
            return {k: record.get(k) for k in ("score", "medal", "valid")}
        return None

    def _branch(self, parent: Node) -> Any:
        """A fork of the episode as ``parent`` left it (None when there is no such state, or it cannot be
        forked: the child then runs in the episode itself). A buggy parent is debugged once, so its state
        goes."""
        state = self._states.get(parent.id)
        if state is None:
            return None
        try:
            return state.fork()
        except (ResetNeeded, MleEnvError, NotImplementedError):
            return None
        finally:
            if parent.buggy:
                self._states.pop(parent.id).close()

    def _keep_state(self, node: Node, branch: Any) -> None:
        """Keep the episode as ``node`` left it when the node can still get children (a good node, or a
        buggy one left to debug); a branch is itself that state (one whose episode has ended cannot be forked:
        its children run in the episode)."""
        useful = not node.buggy or node.debug_depth < self.config.max_debug_depth
        if branch is not None and not useful:
            branch.close()
        elif branch is not None:
            self._states[node.id] = branch
        elif useful:
            try:
                self._states[node.id] = self._env.fork()
            except (ResetNeeded, MleEnvError, NotImplementedError):
                pass

    def _record_run(self, node: Node, obs: dict[str, Any], seconds: float) -> None:
        limit = self.config.output_chars
        output = obs["stdout"] + ("\n" + obs["stderr"] if obs["stderr"] else "")
        node.exit_code, node.timed_out, node.run_time_s = int(obs["exit_code"]), bool(obs["timed_out"]), seconds
        # head and tail never overlap, so a short output is kept once (all of it in the head)
        node.output_head, node.output_tail = output[:limit], output[limit:][-limit:]
        node.output_cut = max(0, len(output) - 2 * limit)
        node.score = validation_score(obs["stdout"])
        node.fold_scores = fold_scores(obs["stdout"])
        node.score_source = "VALIDATION_SCORE line printed by the program" if node.score is not None else ""
        at_run = fired_at_run(obs["stdout"]) if BEGIN in node.code else []  # a fill-in program's tail announces them
        if at_run:
            node.repairs = {"fired": [], "diff": "", **(node.repairs or {}), "at_run": at_run}
        if node.timed_out:
            node.bug_reason = f"the program timed out after {seconds:.0f} s"
        elif node.exit_code != 0:
            last = obs["stderr"].strip().splitlines()[-1:] or [""]
            node.bug_reason = f"the program failed with exit code {node.exit_code}: {last[0][:300]}"
        elif node.score is None:
            node.bug_reason = "the program printed no 'VALIDATION_SCORE: <value>' line"
        node.buggy = bool(node.bug_reason)

    def _timeout(self, obs: dict[str, Any]) -> float:
        return budget_timeout(obs, self.config.node_timeout, self.config.reserve)

    def _room_for_a_node(self, obs: dict[str, Any]) -> bool:
        """Whether the steps and the time left allow one more node: the reserve, 10 s to run, and as long
        as the proposer's last three LLM calls took on average."""
        steps_left = int(obs["steps_left"])
        enough_steps = steps_left < 0 or steps_left > _STEPS_PER_NODE + 2
        calls = [c for n in (self.journal.nodes if self.journal else []) for c in n.llm][-3:]
        thinking = sum(float(c.get("latency_s", 0.0)) for c in calls) / len(calls) if calls else 0.0
        return enough_steps and float(obs["time_left"]) > self.config.reserve + 10 + thinking
