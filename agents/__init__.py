"""Agents: the policies that drive MLEEnv (shipped as ``mle_env.agents``).

``make_policy(spec, **options)`` builds one; the classes are imported only when asked for, so listing
agents costs nothing and an agent's extra (``openai`` for the LLM agents) is needed only to use it. A spec
is a bundled agent's name, or your own policy class:

- ``baseline``: scripted and offline; picks a pipeline by data type and submits (agents/baseline.py).
- ``react``: an LLM issues shell/python actions step by step (agents/react.py).
- ``aide``: AIDE-style solution-tree search with an LLM or an offline proposer (scaffolds/aide/).
- ``human``: you, at a terminal (agents/human.py; ``mle-env play``).
- ``package.module:Class``: a class in an importable module (the current directory is tried too).
- ``path/to/file.py:Class``: a class in a Python file, imported from that path (no package needed).

A spec is a string, so it travels to worker processes and Ray tasks as it is and is resolved there
(:func:`absolute_spec` makes a file spec independent of the working directory first).
"""

from mle_env.agents.loading import (
    AGENTS,
    AgentError,
    absolute_spec,
    is_file_spec,
    make_policy,
    policy_class,
    takes_option,
    with_episode_seed,
)
from mle_env.agents.policy import BasePolicy, Policy

__all__ = ["AGENTS", "AgentError", "BasePolicy", "Policy", "absolute_spec", "is_file_spec", "make_policy",
           "policy_class", "takes_option", "with_episode_seed"]
