"""The offline proposer: drafts, mutates and repairs mlkit pipeline configs, so the whole tree search
runs without any LLM.

- draft: the i-th pipeline family for the data type; the first draft is exactly the baseline agent's
  pipeline, so the search starts from the baseline's solution.
- improve: the parent's config with one hyperparameter (or the seed) changed at random.
- debug: a repair chosen from the failure: a timeout or memory kill trains on half the rows with less
  work; any other failure falls back to another family.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

from mle_env.agents.baseline import default_configs
from mle_env.agents.mlkit import settings
from mle_env.agents.scripted import program
from mle_env.scaffolds.aide.journal import Node
from mle_env.scaffolds.aide.proposer import Proposal, SearchContext

# Drafts after the baseline's pipeline, per data type.
EXTRA_DRAFTS: dict[str, list[dict[str, Any]]] = {
    "tabular": [{"family": "hgb", "params": {"learning_rate": 0.03, "max_iter": 800, "max_leaf_nodes": 15}},
                {"family": "linear", "params": {}}, {"family": "forest", "params": {}},
                {"family": "extra_trees", "params": {}}, {"family": "knn", "params": {"k": 15}}],
    "text": [{"family": "linear", "params": {"C": 4.0, "min_df": 1}},
             {"family": "linear", "params": {"C": 10.0, "chars": False, "min_df": 1}},
             {"family": "linear", "params": {"C": 30.0, "chars": False, "word_ngrams": 3}},
             {"family": "linear", "params": {"C": 1.0, "chars": False}}],
    "image": [{"family": "svm", "params": {"C": 10.0, "pca": 80}}, {"family": "knn", "params": {"k": 5, "pca": 40}},
              {"family": "linear", "params": {"C": 0.1, "pca": 50}}, {"family": "forest", "params": {"pca": 0}}],
}

# param -> ("log", low, high) | ("int", low, high) | ("choice", [values])
SPACE: dict[str, dict[str, tuple]] = {
    "hgb": {"learning_rate": ("log", 0.01, 0.3), "max_iter": ("int", 100, 2000), "max_leaf_nodes": ("int", 7, 127),
            "l2": ("choice", [0.0, 0.1, 1.0, 10.0]), "min_samples_leaf": ("int", 5, 80)},
    "forest": {"n_estimators": ("int", 100, 800), "min_samples_leaf": ("int", 1, 8),
               "max_features": ("choice", ["sqrt", 0.3, 0.5, 1.0])},
    "extra_trees": {"n_estimators": ("int", 100, 800), "min_samples_leaf": ("int", 1, 8),
                    "max_features": ("choice", ["sqrt", 0.3, 0.5, 1.0])},
    "linear": {"C": ("log", 0.01, 100.0), "word_ngrams": ("choice", [1, 2, 3]), "char_ngrams": ("choice", [4, 5, 6]),
               "min_df": ("choice", [1, 2, 3]), "chars": ("choice", [True, False])},
    "knn": {"k": ("choice", [3, 5, 10, 20, 40]), "weights": ("choice", ["uniform", "distance"])},
    "svm": {"C": ("log", 0.5, 100.0), "pca": ("choice", [30, 50, 80, 120]), "whiten": ("choice", [False, True])},
}
TEXT_ONLY = {"word_ngrams", "char_ngrams", "min_df", "chars"}


def _mutate(value: Any, spec: tuple, rng: random.Random) -> Any:
    kind = spec[0]
    if kind == "choice":
        options = [v for v in spec[1] if v != value] or spec[1]
        return rng.choice(options)
    low, high = spec[1], spec[2]
    current = value if isinstance(value, (int, float)) and value > 0 else math.sqrt(low * high)
    proposed = current * math.exp(rng.gauss(0, 0.6))
    proposed = min(high, max(low, proposed))
    return int(round(proposed)) if kind == "int" else round(proposed, 5)


class OfflineProposer:
    """See the module docstring. Programs run in code/node_<id>/ and import mlkit from code/."""

    needs_profile = True

    def __init__(self, seed: int = 0, cv_folds: int = 5) -> None:
        self.rng = random.Random(seed)
        self.cv_folds = cv_folds

    def drafts(self, profile: dict[str, Any]) -> list[dict[str, Any]]:
        """The baseline's first pipeline, then the other drafts of the data type."""
        return default_configs(profile)[:1] + EXTRA_DRAFTS[profile["data_type"]]

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        assert ctx.profile is not None
        if operator == "draft":
            drafts = self.drafts(ctx.profile)
            config = copy.deepcopy(drafts[sum(n.operator == "draft" for n in ctx.journal.nodes) % len(drafts)])
            plan = f"draft: {config['family']} with {config['params'] or 'its defaults'}"
        elif operator == "improve":
            assert parent is not None and parent.config is not None
            config, plan = self._improve(parent.config, ctx.profile)
        else:
            assert parent is not None and parent.config is not None
            config, plan = self._debug(parent, ctx.profile)
        config["params"]["cv"] = self.cv_folds
        return Proposal(plan=plan, code=program(ctx.profile, config, "submission/submission.csv", code_dir=".."),
                        config=config)

    def _improve(self, config: dict[str, Any], profile: dict[str, Any]) -> tuple[dict[str, Any], str]:
        new = copy.deepcopy(config)
        space = {k: v for k, v in SPACE[new["family"]].items()
                 if profile["data_type"] == "text" or k not in TEXT_ONLY}
        if not space or self.rng.random() < 0.1:
            new["params"]["seed"] = new["params"].get("seed", 0) + 1
            return new, f"improve: same {new['family']} pipeline with seed {new['params']['seed']}"
        name = self.rng.choice(sorted(space))
        old = settings(profile, new["family"], new["params"])[name]
        new["params"][name] = _mutate(old, space[name], self.rng)
        return new, f"improve: {new['family']} with {name} {old!r} -> {new['params'][name]!r}"

    def _debug(self, node: Node, profile: dict[str, Any]) -> tuple[dict[str, Any], str]:
        new = copy.deepcopy(node.config)
        params = new["params"]
        reason = (node.bug_reason + node.output).lower()
        if node.timed_out or "memory" in reason or node.exit_code in (-9, 137):
            params["train_fraction"] = round(params.get("train_fraction", 1.0) / 2, 3)
            for key in ("max_iter", "n_estimators"):
                if key in params:
                    params[key] = max(50, params[key] // 2)
            return new, f"debug: the run was too slow or too big, so train on {params['train_fraction']:.0%} of rows"
        families = [c for c in self.drafts(profile) if c["family"] != new["family"]]
        fallback = copy.deepcopy(families[node.debug_depth % len(families)]) if families else new
        return fallback, f"debug: {new['family']} failed ({node.bug_reason[:80]}); try {fallback['family']} instead"
