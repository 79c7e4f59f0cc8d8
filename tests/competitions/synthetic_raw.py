"""Synthetic raw data in Kaggle's layout for every MLE-bench competition whose folder has a synthetic.py.

The generators live in ``competitions/<id>/synthetic.py`` (conventions in
:mod:`mle_env.competition.synthetic`); this module keeps the mapping id -> generator for tests and tools.
"""

from __future__ import annotations

from mle_env.competition.synthetic import Generator, siim_tfrecord, synthetic_generators

GENERATORS: dict[str, Generator] = synthetic_generators()

__all__ = ["GENERATORS", "Generator", "siim_tfrecord"]
