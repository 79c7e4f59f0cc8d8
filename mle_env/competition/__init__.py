"""Competition specs (competition.toml) and the registry that resolves ids and aliases."""

from mle_env.competition.registry import Registry, get_spec, register_competition, registry, reset_registry
from mle_env.competition.spec import SPLITS, CompetitionSpec, CompetitionSpecErrors, load_spec

__all__ = [
    "SPLITS",
    "CompetitionSpec",
    "CompetitionSpecErrors",
    "Registry",
    "get_spec",
    "load_spec",
    "register_competition",
    "registry",
    "reset_registry",
]
