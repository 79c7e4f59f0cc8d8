"""MLE-bench's split of Kaggle's 15 labelled kidney images, 12 to train and 3 to test
(``train_test_split(train_size=12, test_size=3, random_state=0)``). Public: the new ``train.csv``, the
dataset information of the 15 images, ``train/`` (TIFF, glomerulus polygons ``<id>.json``, anatomical
structure ``<id>-anatomical-structure.json``) and ``test/`` (TIFF and anatomical structure only, plus a copy
of the sample submission, as MLE-bench leaves it). The test ``<id>.json`` files are the answers drawn as
polygons, so unlike MLE-bench they are not published. Private: ``test.csv`` (id, encoding, width_pixels,
height_pixels) and ``gold_submission.csv``."""

from sklearn.model_selection import train_test_split

from mle_env.prepare.helpers import PrepareContext, copy_files, read_csv, write_csv

INFO = "HuBMAP-20-dataset_information.csv"


def prepare(ctx: PrepareContext) -> None:
    labelled = read_csv(ctx.raw_file("train.csv"))
    info = read_csv(ctx.raw_file(INFO))
    train, test = train_test_split(labelled, train_size=12, test_size=3, random_state=0)
    info["id"] = info["image_file"].str.replace(".tiff", "")
    info = info[info["id"].isin(labelled["id"])]
    test = test.merge(info[["id", "width_pixels", "height_pixels"]], on="id")
    write_csv(info.drop(columns=["id"]), ctx.public / INFO)
    write_csv(train, ctx.public / "train.csv")
    write_csv(test, ctx.private / "test.csv")
    sample = test[["id"]].assign(predicted="")
    write_csv(sample, ctx.public / "sample_submission.csv")
    write_csv(test[["id"]].assign(predicted=test["encoding"]), ctx.private / "gold_submission.csv")
    source = ctx.raw_file("train")
    link = ctx.may_link(source)
    copy_files([f"{i}{suffix}" for i in train["id"] for suffix in (".tiff", ".json", "-anatomical-structure.json")],
               source, ctx.public / "train", link)
    copy_files([f"{i}{suffix}" for i in test["id"] for suffix in (".tiff", "-anatomical-structure.json")],
               source, ctx.public / "test", link)
    write_csv(sample, ctx.public / "test" / "sample_submission.csv")
