"""Log compaction on Apache Kafka and on the bundled broker side by side: the same compacted
topic, written the same way by the same client, is compacted by both to the same last record of
every key at the same offset; a tombstone stays while its delete.retention.ms runs and is gone
after it; the log start does not move; and the idempotent producer that wrote the compacted log
goes on writing to it.

Both cleaners run every second (Kafka: log.cleaner.backoff.ms=1000 in the harness's settings;
bundled: --log-cleaner-backoff-ms 1000). CTest runs it in the kafka labels (EXACTLY_KAFKA_CLUSTER
names the running Kafka cluster, EXACTLY_BROKER_BIN the bundled broker's binary); without a Kafka
cluster the Kafka half skips and says so. /usr/bin/python3 (Debian's confluent-kafka).
"""
import pathlib
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402

KEYS = 20
ROUNDS = 30
# Long enough that the tombstone is seen after the clean that removed the values it deletes.
DELETE_RETENTION_MS = 15000
CONFIGS = {
    "cleanup.policy": "compact",
    "segment.bytes": "1024",  # most of a test-sized log leaves the active segment
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": str(DELETE_RETENTION_MS),
}


@pytest.fixture(scope="module")
def bundled():
    # Its cleaner every second, as the harness runs Kafka's.
    with kafka_cluster.bundled_broker("--log-cleaner-backoff-ms", "1000") as bootstrap:
        yield bootstrap


def create_topic(bootstrap):
    name = f"compacted-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, 1, -1, config=CONFIGS)]).values():
        f.result()
    kafka_cluster.wait_served(bootstrap, name)
    return name


def write_rounds(producer, topic, first_round, rounds, keys=range(KEYS)):
    """Every key of `keys` once per round, each round acknowledged before the next (a batch or
    so per round, so that 1 KiB segments roll). Returns the delivery errors."""
    errors = []

    def report(err, _msg):
        if err is not None:
            errors.append(err)

    for r in range(first_round, first_round + rounds):
        for k in keys:
            producer.produce(topic, key=f"key-{k}", value=f"key-{k}-round-{r}", partition=0,
                             on_delivery=report)
        assert producer.flush(60) == 0
    return errors


def read_all(bootstrap, topic):
    """Every record from the start to the end: [(offset, key, value or None)]."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4()}",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = consumer.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    return out
                continue
            value = m.value()
            out.append((m.offset(), m.key().decode(), value.decode() if value is not None else None))
        raise AssertionError("the partition's end was not reached in 60 s")
    finally:
        consumer.close()


def log_start(bootstrap, topic):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"w-{uuid.uuid4()}"})
    try:
        low, _high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        return low
    finally:
        consumer.close()


def last_of_each_key(records):
    last = {}
    for offset, key, value in records:
        last[key] = (offset, value)
    return last


def scenario(bootstrap):
    """Writes, waits for the cleaner, and returns what a reader from the start then sees."""
    topic = create_topic(bootstrap)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                         "linger.ms": 0})
    assert write_rounds(producer, topic, 0, ROUNDS) == []
    producer.produce(topic, key="key-0", value=None, partition=0)  # delete key-0
    assert producer.flush(60) == 0
    assert write_rounds(producer, topic, ROUNDS, 10, keys=range(1, KEYS)) == []
    written = KEYS * ROUNDS + 1 + 10 * (KEYS - 1)

    # The cleaner removes the superseded values and key-0's, keeping key-0's tombstone.
    deadline = time.monotonic() + 120
    while True:
        records = read_all(bootstrap, topic)
        key0 = [v for _o, k, v in records if k == "key-0"]
        if len(records) < written // 2 and key0 == [None]:
            break
        assert time.monotonic() < deadline, \
            f"not compacted in 120 s: {len(records)} of {written} records, key-0: {key0}"
        time.sleep(1)
    compacted = records

    # The same idempotent producer goes on (its last batch kept its sequence), a round of keys
    # 1..19 per look, so that cleans keep coming: delete.retention.ms after the clean that kept
    # it, the tombstone goes too.
    later_rounds = 0
    deadline = time.monotonic() + DELETE_RETENTION_MS / 1000 + 120
    while True:
        assert write_rounds(producer, topic, ROUNDS + 10 + later_rounds, 1,
                            keys=range(1, KEYS)) == []
        later_rounds += 1
        records = read_all(bootstrap, topic)
        if not any(k == "key-0" for _o, k, _v in records):
            break
        assert time.monotonic() < deadline, "the tombstone outlived delete.retention.ms by 2 min"
        time.sleep(1)
    return topic, written, compacted, records, later_rounds


def expected_last(later_rounds):
    """Each key's last record, (offset, value), in the order the scenario wrote them: before
    the later rounds, and at the end."""
    last = {}
    offset = 0
    for r in range(ROUNDS):
        for k in range(KEYS):
            last[f"key-{k}"] = (offset, f"key-{k}-round-{r}")
            offset += 1
    last["key-0"] = (offset, None)
    offset += 1
    for r in range(ROUNDS, ROUNDS + 10 + later_rounds):
        if r == ROUNDS + 10:
            before = dict(last)
        for k in range(1, KEYS):
            last[f"key-{k}"] = (offset, f"key-{k}-round-{r}")
            offset += 1
    del last["key-0"]
    return before, last


@pytest.mark.parametrize("which", ["bundled", "kafka"])
def test_compaction_keeps_each_keys_last_record(which, request):
    bootstrap = request.getfixturevalue(which)
    topic, written, compacted, final, later_rounds = scenario(bootstrap)
    before, after = expected_last(later_rounds)
    # While the tombstone lived: each key's last record at its offset, key-0's the tombstone.
    assert last_of_each_key(compacted) == before
    assert len(compacted) < written // 2
    # At the end: no key-0 at all, every other key's last record at its offset.
    assert last_of_each_key(final) == after
    offsets = [o for o, _k, _v in final]
    assert offsets == sorted(set(offsets))
    assert log_start(bootstrap, topic) == 0
