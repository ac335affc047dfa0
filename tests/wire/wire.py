"""A small schema-driven codec of Kafka requests and responses: any field at any version,
including the ones a client library would never send wrong. The conformance scenarios
(tests/conformance) build every request with it; the Kafka harness (tests/kafka/kafka_cluster.py)
and the side-by-side tests of tests/kafka and tests/pypi use it for the requests they encode by
hand. apis.py beside it holds the schemas they share.

A message is a list of fields; a field is `(name, type, versions)`:

    ("topics", [("name", "string", "0+"), ("partitions", ["int32"], "0+")], "0+")

- `type` is a primitive name ("int8", "int16", "int32", "int64", "uint16", "bool", "float64",
  "string", "bytes", "uuid", "records"), a one-element list `[type]` for an array of it, or a
  list of fields for an array of structs (a struct that is not an array: `("x", {"struct": [...]},
  versions)`).
- `versions` says when the field is on the wire: "0+", "3+", "0-2". Any string, bytes or array
  field takes None (written as null).

Flexible versions (KIP-482) switch to compact lengths and add an empty tagged-field section after
every struct; this codec writes no tagged fields and skips any it reads. Encoding fills missing
fields with zero values (0, "", [], False), so a scenario names only the fields it cares about.
"""
from __future__ import annotations

import socket
import struct
import uuid as uuid_module
from typing import Any, Dict, List, Optional, Sequence, Tuple

Field = Tuple[str, Any, str]


def _in_range(spec: str, version: int) -> bool:
    if spec == "none":
        return False
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    low, _, high = spec.partition("-")
    return int(low) <= version <= int(high or low)


class Api:
    """One API: its key, its first flexible version (None: never), and its two schemas."""

    def __init__(self, key: int, name: str, flexible_from: Optional[int],
                 request: Sequence[Field], response: Sequence[Field]) -> None:
        self.key, self.name, self.flexible_from = key, name, flexible_from
        self.request, self.response = list(request), list(response)

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from


# --- primitives ---------------------------------------------------------------------------

def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(n: int) -> bytes:
    return uvarint((n << 1) ^ (n >> 63))


def read_uvarint(data: bytes, pos: int) -> Tuple[int, int]:
    """The unsigned varint at `pos`, and the position after it."""
    shift = value = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


_FIXED = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H",
          "float64": ">d"}
_ZERO = {"bool": False, "string": "", "bytes": b"", "records": None,
         "uuid": "00000000-0000-0000-0000-000000000000"}


def _zero(kind: Any) -> Any:
    """The value of a field the caller did not name: arrays empty, not null."""
    if isinstance(kind, dict):
        return {}
    if isinstance(kind, list):
        return []
    return 0 if kind in _FIXED else _ZERO[kind]


class _Writer:
    def __init__(self, flexible: bool) -> None:
        self.flexible, self.out = flexible, bytearray()

    def length(self, n: Optional[int]) -> None:
        """A string, bytes or array length; None is null."""
        if self.flexible:
            self.out += uvarint(0 if n is None else n + 1)
        else:
            self.out += struct.pack(">i", -1 if n is None else n)

    def struct(self, fields: Sequence[Field], version: int, values: Dict[str, Any]) -> None:
        for name, kind, versions in fields:
            if _in_range(versions, version):
                self.value(kind, values[name] if name in values else _zero(kind), version)
        if self.flexible:
            self.out += b"\x00"

    def value(self, kind: Any, v: Any, version: int) -> None:
        if isinstance(kind, dict):
            self.struct(kind["struct"], version, v or {})
        elif isinstance(kind, list):
            self.length(None if v is None else len(v))
            for e in v or []:
                if len(kind) == 1 and isinstance(kind[0], str):
                    self.value(kind[0], e, version)
                else:
                    self.struct(kind, version, e)
        elif kind in _FIXED:
            self.out += struct.pack(_FIXED[kind], v)
        elif kind == "bool":
            self.out += b"\x01" if v else b"\x00"
        elif kind == "uuid":
            self.out += uuid_module.UUID(v).bytes
        elif kind == "string":
            if v is None:
                self.out += uvarint(0) if self.flexible else struct.pack(">h", -1)
                return
            b = v.encode()
            if self.flexible:
                self.out += uvarint(len(b) + 1)
            else:
                self.out += struct.pack(">h", len(b))
            self.out += b
        elif kind in ("bytes", "records"):
            self.length(None if v is None else len(v))
            self.out += v or b""
        else:
            raise ValueError(f"unknown type {kind!r}")


class _Reader:
    def __init__(self, data: bytes, flexible: bool) -> None:
        self.data, self.pos, self.flexible = data, 0, flexible

    def take(self, fmt: str) -> Any:
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def uvarint(self) -> int:
        value, self.pos = read_uvarint(self.data, self.pos)
        return value

    def length(self) -> Optional[int]:
        n = self.uvarint() - 1 if self.flexible else self.take(">i")
        return None if n < 0 else n

    def skip_tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()  # the tag
                size = self.uvarint()  # read before pos is: `pos += uvarint()` loses its bytes
                self.pos += size

    def struct(self, fields: Sequence[Field], version: int) -> Dict[str, Any]:
        out = {}
        for name, kind, versions in fields:
            if _in_range(versions, version):
                out[name] = self.value(kind, version)
        self.skip_tags()
        return out

    def value(self, kind: Any, version: int) -> Any:
        if isinstance(kind, dict):
            return self.struct(kind["struct"], version)
        if isinstance(kind, list):
            n = self.length()
            if n is None:
                return None
            if len(kind) == 1 and isinstance(kind[0], str):
                return [self.value(kind[0], version) for _ in range(n)]
            return [self.struct(kind, version) for _ in range(n)]
        if kind in _FIXED:
            return self.take(_FIXED[kind])
        if kind == "bool":
            return self.take(">b") != 0
        if kind == "uuid":
            v = str(uuid_module.UUID(bytes=self.data[self.pos:self.pos + 16]))
            self.pos += 16
            return v
        if kind == "string":
            n = self.uvarint() - 1 if self.flexible else self.take(">h")
            if n < 0:
                return None
            s = self.data[self.pos:self.pos + n].decode()
            self.pos += n
            return s
        if kind in ("bytes", "records"):
            n = self.length()
            if n is None:
                return None
            b = bytes(self.data[self.pos:self.pos + n])
            self.pos += n
            return b
        raise ValueError(f"unknown type {kind!r}")


def encode_request(api: Api, version: int, correlation_id: int, client_id: Optional[str],
                   values: Dict[str, Any]) -> bytes:
    """A whole request frame: size, header (v1, or v2 when flexible), body."""
    flexible = api.flexible(version)
    header = struct.pack(">hhi", api.key, version, correlation_id)
    if client_id is None:
        header += struct.pack(">h", -1)
    else:
        b = client_id.encode()
        header += struct.pack(">h", len(b)) + b
    if flexible:
        header += b"\x00"
    w = _Writer(flexible)
    w.struct(api.request, version, values)
    body = header + bytes(w.out)
    return struct.pack(">i", len(body)) + body


def decode_response(api: Api, version: int, frame: bytes) -> Tuple[int, Dict[str, Any]]:
    """(correlation id, fields) of a response frame without its size prefix. ApiVersions answers
    with header v0 at every version (so that an old client can read it)."""
    flexible = api.flexible(version)
    r = _Reader(frame, flexible)
    correlation_id = r.take(">i")
    if flexible and api.key != 18:
        r.skip_tags()
    body = r.struct(api.response, version)
    if r.pos != len(frame):
        raise ValueError(f"{api.name} v{version}: {len(frame) - r.pos} bytes left after decoding")
    return correlation_id, body


class Connection:
    """One TCP connection to a broker, answering calls in order."""

    def __init__(self, host: str, port: int, client_id: str = "exactly-conformance",
                 timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id, self.correlation_id = client_id, 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, api: Api, version: int, **values: Any) -> int:
        self.correlation_id += 1
        self.sock.sendall(encode_request(api, version, self.correlation_id, self.client_id,
                                         values))
        return self.correlation_id

    def send_raw(self, frame: bytes) -> None:
        self.sock.sendall(frame)

    def receive(self, api: Api, version: int, expected_correlation_id: int) -> Dict[str, Any]:
        frame = self.receive_frame()
        correlation_id, body = decode_response(api, version, frame)
        assert correlation_id == expected_correlation_id, (correlation_id,
                                                           expected_correlation_id)
        return body

    def receive_frame(self) -> bytes:
        size = self._exactly(4)
        return self._exactly(struct.unpack(">i", size)[0])

    def call(self, api: Api, version: int, **values: Any) -> Dict[str, Any]:
        return self.receive(api, version, self.send(api, version, **values))

    def _exactly(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            data += chunk
        return bytes(data)


def call_once(host: str, port: int, api: Api, version: int, *, client_id: str,
              timeout: float, **values: Any) -> Dict[str, Any]:
    """One call on a connection of its own, closed after the answer: for callers that ask a
    broker a single thing (the Kafka harness, the side-by-side tests)."""
    with Connection(host, port, client_id=client_id, timeout=timeout) as conn:
        return conn.call(api, version, **values)

