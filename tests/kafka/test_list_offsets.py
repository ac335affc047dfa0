"""ListOffsets on Apache Kafka and on the bundled broker side by side: the same records (their
timestamps out of order: 1000, 3000, 2000), asked at every version a current client sends (v1-v5,
v6-v8 flexible) for the latest, the earliest, the earliest local (-4, v8) and the record with the
largest timestamp (-3, KIP-734: what confluent-kafka 2.x's OffsetSpec.max_timestamp() and
kafka-python 3.x's offsets lookups send), and by timestamp: both brokers give the same error
codes, offsets, timestamps and leader epochs.

CTest runs it in the kafka labels (EXACTLY_KAFKA_CLUSTER names the running Kafka cluster,
EXACTLY_BROKER_BIN the bundled broker's binary); without a Kafka cluster the Kafka half skips and
says so. /usr/bin/python3 (Debian's confluent-kafka for producing; the requests are encoded by
tests/wire, the codec the conformance scenarios use).
"""
import pathlib
import sys
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402  (puts tests/wire on the path)
import wire  # noqa: E402
from apis import LIST_OFFSETS  # noqa: E402

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -1, -2, -3, -4
TIMESTAMPS = [1000, 3000, 2000]


def list_offsets(host, port, version, topic, timestamp):
    """One partition (0) asked at `version`: (error, timestamp, offset, leader epoch)."""
    partition = {"partition_index": 0, "current_leader_epoch": -1, "timestamp": timestamp}
    answer = wire.call_once(host, port, LIST_OFFSETS, version,
                            client_id="exactly-side-by-side-test", timeout=10,
                            replica_id=-1, isolation_level=0,
                            topics=[{"name": topic, "partitions": [partition]}])
    [t] = answer["topics"]
    assert t["name"] == topic
    [p] = t["partitions"]
    assert p["partition_index"] == 0
    return p["error_code"], p["timestamp"], p["offset"], p.get("leader_epoch")


def answers(bootstrap):
    """Every question of this test asked of the broker at `bootstrap`: {(version, ts): answer}."""
    topic = f"offsets-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 1, -1)]).values():
        f.result()
    kafka_cluster.wait_served(bootstrap, topic)
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
