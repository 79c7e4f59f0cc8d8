"""Herbarium 2020: the labelled ``nybg2020/train`` images split per category (see
:func:`mle_env.prepare.coco_split.herbarium_folders`; the metadata is read as latin-1, as MLE-bench reads it)."""

from mle_env.prepare.coco_split import herbarium_folders
from mle_env.prepare.helpers import PrepareContext


def prepare(ctx: PrepareContext) -> None:
    herbarium_folders(ctx, **ctx.params)
