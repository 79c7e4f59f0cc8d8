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
import inspect
from typing import Any

from mle_env.agents.policy import BasePolicy, Policy
from mle_env.errors import MleEnvError

AGENTS: dict[str, str] = {
    "baseline": "mle_env.agents.baseline:BaselinePolicy",
    "react": "mle_env.agents.react:ReactPolicy",
    "aide": "mle_env.scaffolds.aide.policy:AidePolicy",
    "human": "mle_env.agents.human:HumanPolicy",
}


class AgentError(MleEnvError, ValueError):
    """Raised for an unknown agent name or an option the agent does not take."""


def make_policy(name: str, **options: Any) -> Policy:
    """The agent called ``name``, built with ``options``.

    Raises:
        AgentError: no agent has that name, or it takes no such option (the message lists what it takes).
    """
    try:
        module, cls_name = AGENTS[name].split(":")
    except KeyError:
        raise AgentError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}") from None
    cls = getattr(importlib.import_module(module), cls_name)
    parameters = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        unknown = sorted(set(options) - set(parameters))
        if unknown:
            raise AgentError(f"agent {name!r} takes no option {', '.join(map(repr, unknown))}; "
                             f"its options: {', '.join(parameters) or 'none'}")
    return cls(**options)


__all__ = ["AGENTS", "AgentError", "BasePolicy", "Policy", "make_policy"]
