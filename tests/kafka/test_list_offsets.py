"""ListOffsets on Apache Kafka and on the bundled broker side by side: the same records (their
timestamps out of order: 1000, 3000, 2000), asked at every version a current client sends (v1-v5,
v6-v8 flexible) for the latest, the earliest, the earliest local (-4, v8) and the record with the
largest timestamp (-3, KIP-734: what confluent-kafka 2.x's OffsetSpec.max_timestamp() and
kafka-python 3.x's offsets lookups send), and by timestamp: both brokers give the same error
codes, offsets, timestamps and leader epochs.

CTest runs it in the kafka labels (EXACTLY_KAFKA_CLUSTER names the running Kafka cluster,
EXACTLY_BROKER_BIN the bundled broker's binary); without a Kafka cluster the Kafka half skips and
says so. /usr/bin/python3 (Debian's confluent-kafka for producing; the requests are encoded here).
"""
import os
import pathlib
import socket
import struct
import subprocess
import sys
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -1, -2, -3, -4
TIMESTAMPS = [1000, 3000, 2000]


@pytest.fixture(scope="module")
def bundled():
    binary = os.environ.get("EXACTLY_BROKER_BIN",
                            str(kafka_cluster.ROOT / "build/broker-stub/exactly-broker"))
    proc = subprocess.Popen([binary, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("bootstrap.servers="), line
        yield line.strip().split("=", 1)[1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def kafka():
    directory = os.environ.get("EXACTLY_KAFKA_CLUSTER")
    if not directory:
        pytest.skip("needs an Apache Kafka cluster (EXACTLY_KAFKA_CLUSTER, set by the kafka labels)")
    return kafka_cluster.KafkaCluster.attach(directory).bootstrap_servers


# --- ListOffsets, encoded here (flexible from v6: compact arrays and strings, tagged fields) ---

def _uvarint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


class _Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def uvarint(self):
        shift = value = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()

    def string(self, flexible):
        n = self.uvarint() - 1 if flexible else self.take(">h")
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s


def list_offsets(host, port, version, topic, timestamp):
    """One partition (0) asked at `version`: (error, timestamp, offset, leader epoch)."""
    flexible = version >= 6
    client = b"exactly-list-offsets-test"
    header = struct.pack(">hhi", 2, version, 7) + struct.pack(">h", len(client)) + client
    if flexible:
        header += b"\x00"  # request header v2: tagged fields
    name = topic.encode()
    body = struct.pack(">i", -1)  # replica id
    if version >= 2:
        body += struct.pack(">b", 0)  # isolation level: read_uncommitted
    if flexible:
        body += _uvarint(2) + _uvarint(len(name) + 1) + name + _uvarint(2)
    else:
        body += struct.pack(">i", 1) + struct.pack(">h", len(name)) + name + struct.pack(">i", 1)
    body += struct.pack(">i", 0)  # partition
    if version >= 4:
        body += struct.pack(">i", -1)  # current leader epoch
    body += struct.pack(">q", timestamp)
    if flexible:
        body += b"\x00\x00\x00"  # partition, topic and request tagged fields
    frame = header + body
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(frame)) + frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            data += chunk
    r = _Reader(data[4:])
    assert r.take(">i") == 7  # correlation id
    if flexible:
        r.skip_tags()  # response header v1
    if version >= 2:
        r.take(">i")  # throttle time
    assert (r.uvarint() - 1 if flexible else r.take(">i")) == 1
    assert r.string(flexible) == topic
    assert (r.uvarint() - 1 if flexible else r.take(">i")) == 1
    assert r.take(">i") == 0
    error = r.take(">h")
    ts, offset = r.take(">q"), r.take(">q")
    epoch = r.take(">i") if version >= 4 else None
    return error, ts, offset, epoch


def answers(bootstrap):
    """Every question of this test asked of the broker at `bootstrap`: {(version, ts): answer}."""
    topic = f"offsets-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 1, -1)]).values():
        f.result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i, ts in enumerate(TIMESTAMPS):  # one batch each: each batch's max timestamp differs
        producer.produce(topic, key=b"k", value=f"v{i}".encode(), partition=0, timestamp=ts)
        assert producer.flush(30) == 0
    # Ask the partition's leader (the harness knows it on Kafka; the bundled broker is one node).
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    meta = kafka_cluster.metadata(host, int(port), [topic])
    leader = meta["topics"][topic]["partitions"][0]["leader"]
    host, port = meta["brokers"][leader]
    out = {}
    for version in range(1, 9):
        for ts in (LATEST, EARLIEST, MAX_TIMESTAMP, 1500, 2500, 5000) + \
                ((EARLIEST_LOCAL,) if version >= 8 else ()):
            if ts == MAX_TIMESTAMP and version < 7:
                continue  # clients send it from v7 (KIP-734)
            out[(version, ts)] = list_offsets(host, port, version, topic, ts)
    return out


EXPECTED = {
    LATEST: (0, -1, 3),
    EARLIEST: (0, -1, 0),
    EARLIEST_LOCAL: (0, -1, 0),
    MAX_TIMESTAMP: (0, 3000, 1),
    1500: (0, 3000, 1),
    2500: (0, 3000, 1),
    5000: (0, -1, -1),
}


@pytest.mark.parametrize("which", ["bundled", "kafka"])
def test_list_offsets_answers(which, request):
    got = answers(request.getfixturevalue(which))
    for (version, ts), (error, timestamp, offset, _epoch) in got.items():
        assert (error, timestamp, offset) == EXPECTED[ts], (version, ts)


def test_both_brokers_answer_alike(bundled, kafka):
    assert answers(bundled) == answers(kafka)
