"""Kafka requests encoded by hand, for side-by-side tests that need versions and fields the
Python clients do not send: request header v1 (v2 for flexible versions: a tagged-field count
after the client id), compact arrays and strings and tagged fields from a flexible version on,
and a reader for the answers."""
import socket
import struct


def uvarint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


class Writer:
    """A request body at one version; `flexible` switches to compact lengths and tags."""

    def __init__(self, flexible):
        self.flexible, self.data = flexible, b""

    def int8(self, v):
        self.data += struct.pack(">b", v)
        return self

    def int32(self, v):
        self.data += struct.pack(">i", v)
        return self

    def int64(self, v):
        self.data += struct.pack(">q", v)
        return self

    def string(self, s):
        b = s.encode()
        self.data += (uvarint(len(b) + 1) if self.flexible else struct.pack(">h", len(b))) + b
        return self

    def array_length(self, n):
        self.data += uvarint(n + 1) if self.flexible else struct.pack(">i", n)
        return self

    def tags(self):
        if self.flexible:
            self.data += b"\x00"
        return self


class Reader:
    def __init__(self, data, flexible):
        self.data, self.pos, self.flexible = data, 0, flexible

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def int16(self):
        return self.take(">h")

    def int32(self):
        return self.take(">i")

    def int64(self):
        return self.take(">q")

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def tags(self):
        if not self.flexible:
            return
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()

    def string(self):
        n = self.uvarint() - 1 if self.flexible else self.take(">h")
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def array_length(self):
        return self.uvarint() - 1 if self.flexible else self.take(">i")


def call(host, port, api_key, version, body, flexible, correlation_id=7):
    """Sends one request (`body` already encoded) and returns a Reader positioned after the
    response header."""
    client = b"exactly-side-by-side-test"
    header = struct.pack(">hhi", api_key, version, correlation_id)
    header += struct.pack(">h", len(client)) + client
    if flexible:
        header += b"\x00"
    frame = header + body
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            data += chunk
    r = Reader(data[4:], flexible)
    assert r.int32() == correlation_id
    # ApiVersions answers with header v0 at every version; everything else flexible with v1.
    if flexible and api_key != 18:
        r.tags()
    return r
