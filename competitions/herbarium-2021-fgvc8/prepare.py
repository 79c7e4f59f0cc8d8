"""Herbarium 2021: the labelled ``train`` images split per category (see
:func:`mle_env.prepare.coco_split.herbarium_folders`)."""

from mle_env.prepare.coco_split import herbarium_folders
from mle_env.prepare.helpers import PrepareContext


def prepare(ctx: PrepareContext) -> None:
    herbarium_folders(ctx, **ctx.params)
