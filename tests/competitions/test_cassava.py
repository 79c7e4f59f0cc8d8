"""cassava-leaf-disease-classification: the held-out shards are published without their labels (the leak
MLE-bench's copy has), renamed as MLE-bench renames them; training shards are copied byte for byte."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

from mle_env.competition.synthetic import load_synthetic
from mle_env.paths import CompetitionPaths
from mle_env.prepare import tfrecord
from mle_env.prepare.runner import prepare

CID = "cassava-leaf-disease-classification"


def test_test_shards_lose_only_the_label(tmp_path: Path) -> None:
    raw, home = tmp_path / "raw", tmp_path / "home"
    raw.mkdir()
    load_synthetic(CID).generate(raw)
    prepare(CID, raw_dir=raw, home=home, verify=False)
    public = CompetitionPaths(CID, home).public
    shards = sorted((raw / "train_tfrecords").glob("*.tfrec"))
    train_shards, test_shards = train_test_split(shards, test_size=0.1, random_state=0)
    expected = {f"ld_{part}{i:02d}-{s.stem.split('-')[1]}.tfrec": s
                for part, group in (("train", train_shards), ("test", test_shards)) for i, s in enumerate(group)}
    published = {p.name: p for folder in ("train_tfrecords", "test_tfrecords") for p in (public / folder).iterdir()}
    assert sorted(published) == sorted(expected)
    for name, source in expected.items():
        if name.startswith("ld_train"):
            assert published[name].read_bytes() == source.read_bytes()
            continue
        records, originals = list(tfrecord.read_records(published[name])), list(tfrecord.read_records(source))
        assert len(records) == len(originals)
        for record, original in zip(records, originals, strict=True):
            assert {key for key, _, _ in tfrecord._feature_entries(record)} == {"image", "image_name"}
            assert record == tfrecord.without_features(original, {"target"})
            assert tfrecord.feature_bytes(record, "image") == tfrecord.feature_bytes(original, "image")
    answers = pd.read_csv(CompetitionPaths(CID, home).private / "test.csv", dtype=str)
    names = [n for p in sorted((public / "test_tfrecords").iterdir()) for n in tfrecord.shard_strings(p, "image_name")]
    assert sorted(names) == sorted(answers["image_id"])
    assert sorted(p.name for p in (public / "test_images").iterdir()) == sorted(answers["image_id"])
