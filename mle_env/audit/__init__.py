"""Reviewing recorded episodes for rule violations before their results count (``mle-env audit``).

- :mod:`.checks`: checks that need no model (a hand-written submission, network use, reading outside the
  workspace, calls to an LLM API, validate used as an oracle);
- :mod:`.questions`: MLE-bench's three questions asked of any OpenAI-compatible model;
- :mod:`.similarity`: the episode's code against reference solutions;
- :mod:`.runner`: all of them over a run, written as audit.csv and audit.json.
"""

from mle_env.audit.checks import CHECKS, Finding
from mle_env.audit.questions import QUESTIONS
from mle_env.audit.runner import AUDIT_CSV, AUDIT_JSON, audit, audit_episode

__all__ = ["AUDIT_CSV", "AUDIT_JSON", "CHECKS", "QUESTIONS", "Finding", "audit", "audit_episode"]
