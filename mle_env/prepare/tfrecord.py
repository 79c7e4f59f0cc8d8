"""Just enough of TFRecord and ``tf.train.Example`` to read, split and clean Kaggle's shards without TensorFlow
(siim-isic-melanoma-classification, cassava-leaf-disease-classification).

A TFRecord file is a sequence of records: ``uint64 length``, ``uint32 masked CRC-32C of the length``,
``data``, ``uint32 masked CRC-32C of the data`` (little-endian). Each record's data is a serialized
``Example``: field 1 ``Features``, whose field 1 repeats map entries ``{1: key (string), 2: Feature}``;
a ``Feature`` holds ``bytes_list`` (1), ``float_list`` (2) or ``int64_list`` (3), each a list in field 1.
Only the protobuf wire format is parsed here, so features we do not read are carried over byte for byte.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

_MASK_DELTA = 0xA282EAD8
_LEN, _VARINT, _I64, _I32 = 2, 0, 1, 5


def _table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def _crc32c_python(data: bytes) -> int:
    crc, table = 0xFFFFFFFF, _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc32c_function() -> Callable[[bytes], int]:
    """A C implementation when one is installed (google-crc32c or crc32c), else pure Python (slow: ~10 MB/s)."""
    try:
        import google_crc32c

        return lambda data: google_crc32c.value(bytes(data))
    except ImportError:
        pass
    try:
        import crc32c

        return crc32c.crc32c
    except ImportError:
        return _crc32c_python


crc32c = _crc32c_function()


def masked_crc(data: bytes) -> int:
    """TFRecord's masked CRC-32C (Castagnoli) of ``data``."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def read_records(path: Path) -> Iterator[bytes]:
    """The data of every record in a TFRecord file (lengths are CRC-checked; data CRCs are not, for speed)."""
    with open(path, "rb") as f:
        while header := f.read(12):
            if len(header) < 12:
                raise ValueError(f"{path} ends in the middle of a record header")
            length, length_crc = struct.unpack("<QI", header)
            if masked_crc(header[:8]) != length_crc:
                raise ValueError(f"{path} has a corrupt record length")
            data = f.read(length)
            if len(data) < length or len(f.read(4)) < 4:
                raise ValueError(f"{path} ends in the middle of a record")
            yield data


def write_records(path: Path, records: Iterable[bytes]) -> int:
    """Write records as a TFRecord file; returns how many."""
    count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for data in records:
            length = struct.pack("<Q", len(data))
            f.write(length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data)))
            count += 1
    return count


# --- protobuf wire format ----------------------------------------------------------------------------
def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, bytes, int, int]]:
    """(field number, payload, start, end) of each length-delimited field of a message (the only kind
    Example, Features and the map entries hold); fields of other wire types are skipped."""
    pos = 0
    while pos < len(buf):
        start = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, pos = _varint(buf, pos)
        elif wire in (_I64, _I32):
            pos += 8 if wire == _I64 else 4
        elif wire == _LEN:
            size, pos = _varint(buf, pos)
            pos += size
            yield number, buf[pos - size:pos], start, pos
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


def _feature_entries(example: bytes) -> Iterator[tuple[str, bytes, bytes]]:
    """(name, Feature message, whole map entry) for each feature of a serialized Example."""
    for number, features, _, _ in _fields(example):
        if number != 1:
            continue
        for entry_number, entry, start, end in _fields(features):
            if entry_number == 1:
                parts = {n: payload for n, payload, _, _ in _fields(entry)}
                yield parts.get(1, b"").decode("utf-8"), parts.get(2, b""), features[start:end]


def feature_bytes(example: bytes, name: str) -> list[bytes]:
    """The values of the ``bytes_list`` feature ``name`` of a serialized Example ([] if absent)."""
    for key, feature, _ in _feature_entries(example):
        if key == name:
            return [value for kind, values, _, _ in _fields(feature) if kind == 1
                    for n, value, _, _ in _fields(values) if n == 1]
    return []


def shard_strings(path: Path, name: str) -> list[str]:
    """The UTF-8 values of the ``bytes_list`` feature ``name`` over every record of the shard at ``path``, in
    record order (e.g. the ``image_name`` of each example: which ids a shard holds)."""
    return [value.decode("utf-8") for record in read_records(path) for value in feature_bytes(record, name)]


def without_features(example: bytes, names: set[str]) -> bytes:
    """The Example re-serialized without the features in ``names``; the others are kept byte for byte."""
    kept = b"".join(entry for key, _, entry in _feature_entries(example) if key not in names)
    return _len_field(1, kept)


def encode_example(features: dict[str, bytes | list[bytes] | list[int] | list[float]]) -> bytes:
    """Serialize an Example: bytes (or a list of bytes) become a bytes_list, ints an int64_list, floats a
    float_list (packed, as TensorFlow writes them)."""
    entries = b""
    for name, value in features.items():
        if isinstance(value, bytes):
            value = [value]
        if all(isinstance(v, bytes) for v in value):
            feature = _len_field(1, b"".join(_len_field(1, v) for v in value))
        elif all(isinstance(v, int) for v in value):
            packed = b"".join(_encode_varint(int(v) & 0xFFFFFFFFFFFFFFFF) for v in value)
            feature = _len_field(3, _len_field(1, packed))
        else:
            feature = _len_field(2, _len_field(1, struct.pack(f"<{len(value)}f", *value)))
        entries += _len_field(1, _len_field(1, name.encode("utf-8")) + _len_field(2, feature))
    return _len_field(1, entries)
