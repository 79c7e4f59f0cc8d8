"""Which node to work on next: AIDE's policy (drafts, then debug with some probability, else improve the
best), with an optional UCT choice of the node to improve."""

from __future__ import annotations

import math
import random

from mle_env.scaffolds.aide.config import AideConfig
from mle_env.scaffolds.aide.journal import Journal, Node


def next_move(
    journal: Journal, config: AideConfig, rng: random.Random, lower_is_better: bool
) -> tuple[str, Node | None]:
    """(operator, parent): ("draft", None), ("debug", buggy leaf) or ("improve", good node)."""
    drafts = [n for n in journal.nodes if n.operator == "draft"]
    if len(drafts) < config.num_drafts:
        return "draft", None
    if rng.random() < config.debug_prob:
        leaves = journal.buggy_leaves(config.max_debug_depth)
        if leaves:
            return "debug", rng.choice(leaves)
    good = journal.good()
    if not good:
        return "draft", None
    if config.search == "uct":
        return "improve", _uct(journal, good, config.uct_c, lower_is_better)
    return "improve", journal.best(lower_is_better)


def _uct(journal: Journal, good: list[Node], c: float, lower_is_better: bool) -> Node:
    scores = [n.score for n in good]
    low, high = min(scores), max(scores)
    spread = (high - low) or 1.0
    total = len(journal.nodes)

    def value(node: Node) -> float:
        quality = (node.score - low) / spread
        if lower_is_better:
            quality = 1.0 - quality
        visits = len(journal.children(node))
        return quality + c * math.sqrt(math.log(total + 1) / (1 + visits))

    return max(good, key=value)
