"""A minimal Parquet writer for the synthetic EEGs and spectrograms (no pyarrow needed).

One row group, every column REQUIRED, PLAIN-encoded and uncompressed, in one data page; the file metadata
is Thrift's compact protocol, as the Parquet format specifies. Enough for pandas, pyarrow and fastparquet
to read the file back; not a general writer.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

import numpy as np

# Thrift's compact varint is protobuf's (ULEB128)
from mle_env.prepare.tfrecord import _encode_varint as _varint

_FLOAT, _DOUBLE = 4, 5  # Parquet physical types
_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12  # Thrift compact field types


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


class _Struct:
    """A Thrift compact struct, fields added in increasing id order."""

    def __init__(self) -> None:
        self.data, self.last = bytearray(), 0

    def _field(self, fid: int, ftype: int) -> None:
        self.data.append(((fid - self.last) << 4) | ftype)
        self.last = fid

    def i32(self, fid: int, value: int) -> _Struct:
        self._field(fid, _I32)
        self.data += _zigzag(value)
        return self

    def i64(self, fid: int, value: int) -> _Struct:
        self._field(fid, _I64)
        self.data += _zigzag(value)
        return self

    def string(self, fid: int, value: str) -> _Struct:
        self._field(fid, _BINARY)
        raw = value.encode()
        self.data += _varint(len(raw)) + raw
        return self

    def struct(self, fid: int, value: _Struct) -> _Struct:
        self._field(fid, _STRUCT)
        self.data += value.end()
        return self

    def items(self, fid: int, etype: int, values: Iterable[bytes]) -> _Struct:
        values = list(values)
        self._field(fid, _LIST)
        short = len(values) < 15
        self.data += bytes([(len(values) << 4) | etype]) if short else bytes([0xF0 | etype]) + _varint(len(values))
        for v in values:
            self.data += v
        return self

    def end(self) -> bytes:
        return bytes(self.data) + b"\0"


def parquet_bytes(columns: dict[str, np.ndarray]) -> bytes:
    """A Parquet file holding ``columns`` (name -> 1-D float32 or float64 array, all one length)."""
    n_rows = len(next(iter(columns.values())))
    body, chunks, schema = bytearray(b"PAR1"), [], [_Struct().string(4, "schema").i32(5, len(columns))]
    for name, values in columns.items():
        ptype = _FLOAT if values.dtype == np.float32 else _DOUBLE
        data = np.asarray(values, dtype="<f4" if ptype == _FLOAT else "<f8").tobytes()
        page = _Struct().i32(1, 0).i32(2, len(data)).i32(3, len(data))
        page.struct(5, _Struct().i32(1, n_rows).i32(2, 0).i32(3, 3).i32(4, 3))
        offset, header = len(body), page.end()
        body += header + data
        meta = (_Struct().i32(1, ptype).items(2, _I32, [_zigzag(0)]).items(3, _BINARY, [_varint(len(name.encode()))
                + name.encode()]).i32(4, 0).i64(5, n_rows).i64(6, len(header) + len(data))
                .i64(7, len(header) + len(data)).i64(9, offset))
        chunks.append(_Struct().i64(2, offset).struct(3, meta))
        schema.append(_Struct().i32(1, ptype).i32(3, 0).string(4, name))
    size = len(body) - 4
    group = _Struct().items(1, _STRUCT, [c.end() for c in chunks]).i64(2, size).i64(3, n_rows)
    footer = (_Struct().i32(1, 1).items(2, _STRUCT, [s.end() for s in schema]).i64(3, n_rows)
              .items(4, _STRUCT, [group.end()]).end())
    return bytes(body) + footer + struct.pack("<I", len(footer)) + b"PAR1"
