"""The package's version (pyproject.toml says the same; tests/package checks it)."""

__version__ = "0.1.0"
