"""AIDE-style solution-tree search (shipped as ``mle_env.scaffolds.aide``): ``AidePolicy``, ``AideConfig``."""

from mle_env.scaffolds.aide.config import AideConfig
from mle_env.scaffolds.aide.policy import AidePolicy

__all__ = ["AideConfig", "AidePolicy"]
