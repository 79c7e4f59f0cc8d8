"""The TFRecord / tf.train.Example code that splits and cleans SIIM's shards without TensorFlow."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from synthetic_raw import siim_tfrecord

tfrecord = siim_tfrecord()


def test_crc32c_matches_the_standard_check_value() -> None:
    assert tfrecord._crc32c_python(b"123456789") == 0xE3069283  # CRC-32C (Castagnoli) check value
    assert tfrecord.crc32c(b"123456789") == 0xE3069283
    crc = 0xE3069283
    assert tfrecord.masked_crc(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_records_round_trip_and_corruption_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "x.tfrec"
    assert tfrecord.write_records(path, [b"one", b"", b"three" * 100]) == 3
    assert list(tfrecord.read_records(path)) == [b"one", b"", b"three" * 100]
    data = bytearray(path.read_bytes())
    data[0] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupt record length"):
        list(tfrecord.read_records(path))
    path.write_bytes(struct.pack("<Q", 10))
    with pytest.raises(ValueError, match="middle of a record header"):
        list(tfrecord.read_records(path))


def test_features_are_read_and_dropped_byte_for_byte() -> None:
    example = tfrecord.encode_example({"image": b"\xff\xd8jpeg", "image_name": b"ISIC_1", "target": [1],
                                       "age_approx": [45.5]})
    assert tfrecord.feature_bytes(example, "image_name") == [b"ISIC_1"]
    assert tfrecord.feature_bytes(example, "absent") == []
    cleaned = tfrecord.without_features(example, {"target"})
    assert [k for k, _, _ in tfrecord._feature_entries(cleaned)] == ["image", "image_name", "age_approx"]
    assert cleaned == tfrecord.encode_example({"image": b"\xff\xd8jpeg", "image_name": b"ISIC_1", "age_approx": [45.5]})


def test_encoding_agrees_with_the_protobuf_runtime() -> None:
    """Parse our bytes with Google's protobuf runtime, given tf.train.Example's schema written here."""
    descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    from google.protobuf import descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="example.proto", package="tf", syntax="proto3")
    lists = (("bytes_list", "BytesList", field.TYPE_BYTES), ("float_list", "FloatList", field.TYPE_FLOAT),
             ("int64_list", "Int64List", field.TYPE_INT64))
    feature = proto.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, message, kind) in enumerate(lists, start=1):
        proto.message_type.add(name=message).field.add(name="value", number=1, type=kind, label=field.LABEL_REPEATED)
        feature.field.add(name=name, number=number, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                          type_name=f".tf.{message}", oneof_index=0)
    features = proto.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                    type_name=".tf.Feature")
    features.field.add(name="feature", number=1, type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED,
                       type_name=".tf.Features.FeatureEntry")
    proto.message_type.add(name="Example").field.add(name="features", number=1, type=field.TYPE_MESSAGE,
                                                     label=field.LABEL_OPTIONAL, type_name=".tf.Features")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    example_class = message_factory.GetMessageClass(pool.FindMessageTypeByName("tf.Example"))

    parsed = example_class.FromString(tfrecord.encode_example({"image_name": b"ISIC_7", "target": [1, -2],
                                                               "age": [1.5]}))
    assert list(parsed.features.feature["image_name"].bytes_list.value) == [b"ISIC_7"]
    assert list(parsed.features.feature["target"].int64_list.value) == [1, -2]
    assert list(parsed.features.feature["age"].float_list.value) == [1.5]
    theirs = example_class()
    theirs.features.feature["image_name"].bytes_list.value.append(b"ISIC_8")
    theirs.features.feature["diagnosis"].bytes_list.value.append(b"nevus")
    serialized = theirs.SerializeToString()
    assert tfrecord.feature_bytes(serialized, "image_name") == [b"ISIC_8"]
    cleaned = example_class.FromString(tfrecord.without_features(serialized, {"diagnosis"}))
    assert list(cleaned.features.feature) == ["image_name"]
