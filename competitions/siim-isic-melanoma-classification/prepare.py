"""Two of Kaggle's 16 training TFRecord shards become the test set, as MLE-bench splits (no random split).

The two shards are published again as the test shards, as MLE-bench does, but rewritten without the label
features (``target``, ``diagnosis``, ``benign_malignant``) that training shards carry and Kaggle's test
shards do not; every other byte of every example is kept.
"""

from mle_env.prepare import tfrecord
from mle_env.prepare.helpers import PrepareContext, copy_files, place_files, read_csv, write_csv

TEST_SHARDS = ("train00-2071.tfrec", "train06-2071.tfrec")
LABEL_FEATURES = {"target", "diagnosis", "benign_malignant"}
TEST_COLUMNS = ["image_name", "patient_id", "sex", "age_approx", "anatom_site_general_challenge"]


def prepare(ctx: PrepareContext) -> None:
    shards = ctx.raw / "tfrecords"
    test_ids = {name for shard in TEST_SHARDS for name in tfrecord.shard_strings(shards / shard, "image_name")}
    old = read_csv(ctx.raw_file("train.csv"))
    in_test = old["image_name"].isin(test_ids)
    train, test = old[~in_test], old[in_test]
    write_csv(train, ctx.public / "train.csv")
    write_csv(test[TEST_COLUMNS], ctx.public / "test.csv")
    write_csv(test[["image_name", "target"]], ctx.private / "test.csv")
    write_csv(test[["image_name"]].assign(target=0), ctx.public / "sample_submission.csv")

    link = ctx.may_link(ctx.raw)
    for part, rows in (("train", train), ("test", test)):
        names = list(rows["image_name"])
        copy_files([f"{n}.dcm" for n in names], ctx.raw_file("train"), ctx.public / part, link)
        copy_files([f"{n}.jpg" for n in names], ctx.raw / "jpeg" / "train", ctx.public / "jpeg" / part, link)
    counts = {"train": 0, "test": 0}
    for shard in sorted(shards.glob("train*.tfrec")):  # renumbered in order, keeping the record count suffix
        part = "test" if shard.name in TEST_SHARDS else "train"
        target = ctx.public / "tfrecords" / f"{part}{counts[part]:02d}-{shard.stem.split('-')[1]}.tfrec"
        counts[part] += 1
        if part == "train":
            place_files([(shard, target)], link)
        else:
            tfrecord.write_records(target, (tfrecord.without_features(r, LABEL_FEATURES)
                                            for r in tfrecord.read_records(shard)))
