"""Data preparation: sources of raw files, shared prepare helpers, atomic installation, leaderboards."""

from mle_env.prepare.helpers import PrepareContext
from mle_env.prepare.runner import PrepareResult, prepare

__all__ = ["PrepareContext", "PrepareResult", "prepare"]
