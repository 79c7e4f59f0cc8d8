"""Evaluation at scale: many episodes (local pool or Ray), pass@k and SEM, reports and plots."""

from mle_env.evaluation.report import summarize
from mle_env.evaluation.runner import EvalConfig, evaluate
from mle_env.evaluation.stats import pass_at_k

__all__ = ["EvalConfig", "evaluate", "pass_at_k", "summarize"]
