"""Evaluation at scale: many episodes (local pool, Ray), pass@k and SEM, reports and plots."""

from mle_env.evaluation.report import summarize
from mle_env.evaluation.runner import EvalConfig, EvaluationAborted, evaluate, preflight
from mle_env.evaluation.stats import pass_at_k

__all__ = ["EvalConfig", "EvaluationAborted", "evaluate", "pass_at_k", "preflight", "summarize"]
