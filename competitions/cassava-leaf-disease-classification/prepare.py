"""Two of Kaggle's 16 training TFRecord shards become the test set, as MLE-bench splits: a 90/10 random split
of the sorted list of shard files; the rows of train.csv whose image is in a test shard are the test rows
(both parts keep train.csv's row order).

Shards are published renumbered from 00 in the split's order, keeping the record count in the name
(``ld_train00-1338.tfrec``, ``ld_test00-1338.tfrec``). The test shards are rewritten without the
``target`` feature that training shards carry (and Kaggle's test shards do not); every other byte of
every example is kept. See the label-leak issue in competition.toml.
"""

from pathlib import Path

from mle_env.prepare import tfrecord
from mle_env.prepare.helpers import PrepareContext, copy_files, place_files, read_csv, split, write_csv

LABEL_FEATURES = {"target"}
SAMPLE_LABEL = 4


def _renamed(shard: Path, part: str, number: int) -> str:
    return f"ld_{part}{number:02d}-{shard.stem.split('-')[1]}.tfrec"


def prepare(ctx: PrepareContext) -> None:
    shards = sorted(p for p in ctx.raw_file("train_tfrecords").iterdir() if p.is_file() and p.suffix == ".tfrec")
    train_shards, test_shards = split(shards, 0.1, 0)
    test_ids = {name for shard in test_shards for name in tfrecord.shard_strings(shard, "image_name")}
    old = read_csv(ctx.raw_file("train.csv"))
    in_test = old["image_id"].isin(test_ids)
    train, test = old[~in_test], old[in_test]
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.private / "test.csv")
    write_csv(test.assign(label=SAMPLE_LABEL), ctx.public / "sample_submission.csv")

    link = ctx.may_link(ctx.raw)
    place_files(((s, ctx.public / "train_tfrecords" / _renamed(s, "train", i)) for i, s in enumerate(train_shards)),
                link)
    for i, shard in enumerate(test_shards):
        tfrecord.write_records(ctx.public / "test_tfrecords" / _renamed(shard, "test", i),
                               (tfrecord.without_features(r, LABEL_FEATURES) for r in tfrecord.read_records(shard)))
    images = ctx.raw_file("train_images")
    copy_files(train["image_id"], images, ctx.public / "train_images", link)
    copy_files(test["image_id"], images, ctx.public / "test_images", link)
    copy_files(["label_num_to_disease_map.json"], ctx.raw, ctx.public, link)
