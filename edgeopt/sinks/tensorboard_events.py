"""TensorBoard event files without TensorFlow: scalars written (and read back) in the TFRecord/protobuf format.

An event file is a sequence of TFRecords (``uint64 length``, masked CRC-32C of the length, the data, masked CRC-32C
of the data), each an ``Event`` protobuf: ``wall_time`` (1, double), ``step`` (2, int64), ``file_version`` (3,
string: the first record, ``brain.Event:2``), ``summary`` (5) holding ``Value`` entries with ``tag`` (1) and
``simple_value`` (2, float). That subset is all a scalar needs, so it is encoded here by hand: no dependency;
``tensorboard --logdir DIR`` (``pip install tensorboard``) shows the files.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_bytes

_CRC_TABLE: list[int] = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecords use."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@dataclass(frozen=True)
class Scalar:
    """One point of one curve."""

    tag: str
    step: int
    value: float
    wall_time: float


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        bits, value = value & 0x7F, value >> 7
        out.append(bits | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return _varint(number << 3 | wire) + payload


def _event(wall_time: float, step: int = 0, *, version: str | None = None, tag: str = "", value: float = 0.0) -> bytes:
    body = _field(1, 1, struct.pack("<d", wall_time)) + _field(2, 0, _varint(step))
    if version is not None:
        text = version.encode()
        return body + _field(3, 2, _varint(len(text)) + text)
    tag_bytes = tag.encode()
    val = _field(1, 2, _varint(len(tag_bytes)) + tag_bytes) + _field(2, 5, struct.pack("<f", value))
    summary = _field(1, 2, _varint(len(val)) + val)
    return body + _field(5, 2, _varint(len(summary)) + summary)


def _record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


def write_scalars(logdir: Path, scalars: Iterable[Scalar]) -> Path:
    """Write ``scalars`` as one new event file under ``logdir`` (created); returns its path."""
    logdir.mkdir(parents=True, exist_ok=True)
    now = time.time()
    data = _record(_event(now, version="brain.Event:2"))
    data += b"".join(_record(_event(s.wall_time, s.step, tag=s.tag, value=s.value)) for s in scalars)
    path = logdir / f"events.out.tfevents.{int(now)}.{socket.gethostname()}.edgeopt"
    atomic_write_bytes(path, data)
    return path


# -- reading (tests, and anyone without tensorboard) ------------------------------------------------------------
def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _fields(buf: bytes) -> Iterator[tuple[int, Any]]:
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
            yield number, value
        elif wire == 1:
            yield number, struct.unpack_from("<d", buf, pos)[0]
            pos += 8
        elif wire == 5:
            yield number, struct.unpack_from("<f", buf, pos)[0]
            pos += 4
        elif wire == 2:
            size, pos = _read_varint(buf, pos)
            yield number, buf[pos:pos + size]
            pos += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def read_scalars(path: Path) -> list[Scalar]:
    """Every scalar of an event file, checking each record's CRCs.

    Raises:
        ValueError: a truncated file or a CRC mismatch.
    """
    data, pos, out = path.read_bytes(), 0, []
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError(f"{path}: truncated record header at byte {pos}")
        length_bytes = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        if struct.unpack_from("<I", data, pos + 8)[0] != masked_crc(length_bytes):
            raise ValueError(f"{path}: length CRC mismatch at byte {pos}")
        body = data[pos + 12:pos + 12 + length]
        if struct.unpack_from("<I", data, pos + 12 + length)[0] != masked_crc(body):
            raise ValueError(f"{path}: data CRC mismatch at byte {pos}")
        pos += 16 + length
        out.extend(_scalars_of(body))
    return out


def _scalars_of(event: bytes) -> list[Scalar]:
    wall, step, found = 0.0, 0, []
    for number, value in _fields(event):
        if number == 1:
            wall = float(value)
        elif number == 2:
            step = int(value)
        elif number == 5:
            for _, entry in _fields(value):
                parts = dict(_fields(entry))
                found.append((bytes(parts.get(1, b"")).decode(), float(parts.get(2, 0.0))))
    return [Scalar(tag, step, value, wall) for tag, value in found]
