"""AideConfig: every knob of the AIDE-style search, one documented field each."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class AideConfig:
    proposer: str = "offline"
    """Where new solutions come from: "llm" (an LLM writes plans and code) or "offline" (templates)."""
    num_drafts: int = 5
    """Independent first solutions written before any improving or debugging."""
    debug_prob: float = 0.5
    """After the drafts, the chance of debugging a buggy leaf (when one is debuggable) instead of improving."""
    max_debug_depth: int = 3
    """Debug attempts in a row on one line of solutions before it is given up."""
    max_nodes: int = 20
    """Most solutions to run in one episode (the time and step budgets may stop the search earlier)."""
    search: str = "greedy"
    """How the node to improve is chosen: "greedy" (the best so far, as in AIDE) or "uct" (upper confidence
    bound over the tree: value of a node plus uct_c * sqrt(ln N / (1 + its children)))."""
    uct_c: float = 0.5
    """Exploration weight of the UCT search (scores are normalised to [0, 1] first)."""
    node_timeout: float = 600.0
    """Seconds one solution may run; never more than the episode's time left minus ``reserve``."""
    reserve: float = 60.0
    """Seconds kept back at the end for validating and submitting."""
    seed: int = 0
    """Seeds the search's random choices and the offline proposer's mutations."""
    cv_folds: int = 5
    """Offline proposer: folds of the cross-validation its programs score themselves with (1: one 20 %
    hold-out). More folds cost time but make the choice of the best node less noisy."""
    fork: bool = False
    """Branch each improve and debug child from its parent node's episode state: the child runs in a fork
    (``MLEEnv.fork``) of the episode as it was right after the parent ran, so it finds the parent's files and
    none of its siblings', instead of in the one shared sandbox. The best node's submission is brought into
    the episode itself by re-running that node there at the end, when it ran in a branch (needs
    ``run_episode`` or ``policy.bind_env(env)``)."""
    journal: str | None = None
    """The journal file (JSONL, one line per node). An existing journal of the same competition is resumed.
    Default: next to the episode's trajectory, with the suffix .aide.jsonl."""
    program: str = "whole"
    """LLM proposer: what the model writes. "whole" (default, as aideml does): whole programs; "fill": only the
    features and the estimator, the harness writing the rest (hold-out split, the competition's metric, the
    submission file); "auto": fill in where the competition allows it (one target column, a metric the
    harness scores), whole programs elsewhere. Filling in is what makes small local models (1.5B) produce
    valid submissions: choose it for them."""
    repairs: str = "all"
    """LLM proposer, fill-in programs: the repairs of the model's code switched on (:mod:`mle_env.agents.repairs`):
    "all" (default), "none" or names separated by commas. Each node lists those that fired (``repairs``: at
    assembly, with a diff of the part as written against the part as run, and at run time)."""
    memory_chars: int = 4000
    """Size cap of the summary of earlier nodes given to the LLM proposer."""
    output_chars: int = 2000
    """Characters of a node's output head and tail kept in the journal and shown to the LLM proposer."""
    llm: dict[str, Any] = field(default_factory=dict)
    """LLMConfig overrides for the LLM proposer (model, base_url, api_key, temperature, max_tokens)."""

    @classmethod
    def from_options(cls, **options: Any) -> AideConfig:
        """Build from flat options; LLM settings (model, base_url, api_key, ...) go into ``llm``."""
        names = {f.name for f in fields(cls)}
        llm_keys = {"model", "base_url", "api_key", "temperature", "max_tokens"}
        unknown = set(options) - names - llm_keys
        if unknown:
            from mle_env.agents import AgentError

            raise AgentError(f"unknown aide option(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(names))}")
        llm = dict(options.pop("llm", {}) or {})
        llm.update({k: options.pop(k) for k in list(options) if k in llm_keys})
        return cls(**options, llm=llm)
