"""Record batches (magic 2) built and read by hand: producer id, epoch, base sequence,
transactional and control bits are whatever a scenario asks for, so that a broker can be shown
a duplicate, a gap or a stale epoch. Uncompressed only (the scenarios compare offsets and
errors, not codecs)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from wire import read_uvarint, uvarint, varint

TRANSACTIONAL = 0x10
CONTROL = 0x20
ABORT, COMMIT = 0, 1


def _crc32c_table() -> List[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _bytes_field(b: Optional[bytes]) -> bytes:
    return varint(-1) if b is None else varint(len(b)) + b


def batch(values: Sequence[Optional[bytes]], *, keys: Optional[Sequence[Optional[bytes]]] = None,
          producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
          transactional: bool = False, base_timestamp: int = 1_700_000_000_000,
          timestamps: Optional[Sequence[int]] = None) -> bytes:
    """One batch of `values` (keys None unless given), base offset 0 as a producer sends it."""
    timestamps = list(timestamps) if timestamps else [base_timestamp] * len(values)
    keys = list(keys) if keys else [None] * len(values)
    base_ts = min(timestamps)
    records = b""
    for i, (key, value, ts) in enumerate(zip(keys, values, timestamps)):
        body = (b"\x00" + varint(ts - base_ts) + varint(i) + _bytes_field(key) +
                _bytes_field(value) + varint(0))
        records += varint(len(body)) + body
    attributes = TRANSACTIONAL if transactional else 0
    after_crc = struct.pack(">hiqqqhii", attributes, len(values) - 1, base_ts, max(timestamps),
                            producer_id, producer_epoch, base_sequence, len(values)) + records
    after_length = struct.pack(">ibI", -1, 2, crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


@dataclass
class Record:
    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]


@dataclass
class Batch:
    base_offset: int
    last_offset: int
    leader_epoch: int
    attributes: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: List[Record] = field(default_factory=list)

    @property
    def transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL)

    @property
    def control(self) -> bool:
        return bool(self.attributes & CONTROL)

    def control_type(self) -> Optional[int]:
        """ABORT or COMMIT for a control batch's marker, None otherwise."""
        if not self.control or not self.records or self.records[0].key is None:
            return None
        return struct.unpack(">hh", self.records[0].key[:4])[1]


class _Cursor:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def varint(self) -> int:
        raw, self.pos = read_uvarint(self.data, self.pos)
        return (raw >> 1) ^ -(raw & 1)  # zigzag

    def take(self, n: int) -> bytes:
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def nullable(self) -> Optional[bytes]:
        n = self.varint()
        return None if n < 0 else self.take(n)


def parse(data: Optional[bytes]) -> List[Batch]:
    """Every whole batch in a Fetch response's records (a partial batch at the end is cut off,
    as brokers may send one)."""
    batches: List[Batch] = []
    pos = 0
    data = data or b""
    while pos + 12 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        (leader_epoch, magic, crc, attributes, last_delta, base_ts, max_ts, pid, epoch, seq,
         count) = struct.unpack_from(">ibIhiqqqhii", data, pos + 12)
        assert magic == 2, f"magic {magic} at offset {base_offset}"
        assert crc == crc32c(data[pos + 21:end]), f"bad CRC at offset {base_offset}"
        assert attributes & 0x07 == 0, "compressed batches are not read here"
        b = Batch(base_offset, base_offset + last_delta, leader_epoch, attributes, base_ts, max_ts,
                  pid, epoch, seq)
        c = _Cursor(data, pos + 61)
        for _ in range(count):
            c.varint()  # length
            c.take(1)  # attributes
            ts_delta, offset_delta = c.varint(), c.varint()
            key, value = c.nullable(), c.nullable()
            for _ in range(c.varint()):
                c.nullable()
                c.nullable()
            b.records.append(Record(base_offset + offset_delta, base_ts + ts_delta, key, value))
        batches.append(b)
        pos = end
    return batches


def data_records(batches: Sequence[Batch]) -> List[Tuple[int, Optional[bytes]]]:
    """(offset, value) of every record that is not a marker."""
    return [(r.offset, r.value) for b in batches if not b.control for r in b.records]
