"""Agents: the policies that drive MLEEnv (shipped as ``mle_env.agents``).

``make_policy(name, **options)`` builds one by name; the classes are imported only when asked for, so
listing agents costs nothing and an agent's extra (``openai`` for the LLM agents) is needed only to use it.

- ``baseline``: scripted and offline; picks a pipeline by data type and submits (agents/baseline.py).
- ``react``: an LLM issues shell/python actions step by step (agents/react.py).
- ``aide``: AIDE-style solution-tree search with an LLM or an offline proposer (scaffolds/aide/).
- ``human``: you, at a terminal (agents/human.py; ``mle-env play``).
"""

from __future__ import annotations

import importlib
from typing import Any

from mle_env.agents.policy import BasePolicy, Policy

AGENTS: dict[str, str] = {
    "baseline": "mle_env.agents.baseline:BaselinePolicy",
    "react": "mle_env.agents.react:ReactPolicy",
    "aide": "mle_env.scaffolds.aide.policy:AidePolicy",
    "human": "mle_env.agents.human:HumanPolicy",
}


def make_policy(name: str, **options: Any) -> Policy:
    """The agent called ``name``, built with ``options``.

    Raises:
        ValueError: no agent has that name (the message lists them).
    """
    try:
        module, cls = AGENTS[name].split(":")
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}") from None
    return getattr(importlib.import_module(module), cls)(**options)


__all__ = ["AGENTS", "BasePolicy", "Policy", "make_policy"]
