"""Competition folders shipped with mle-env (package data: competition.toml, description.md, scripts).

Each subfolder is one competition named by its id; the registry reads them by path, not by import.
"""
