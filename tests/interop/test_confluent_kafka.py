"""confluent-kafka-python (librdkafka) against the exactly-broker binary: an idempotent producer,
a consumer group of two members, manual commits and a consumer resuming from them. Every test
checks the exact records each consumer got."""
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "ck-orders"
PARTITIONS = 4


def wait_for(condition, what, timeout=90.0):
    """Calls `condition` until it holds; the timeout only guards against a hung broker."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")


def produce(bootstrap, first, last):
    """Writes p<partition>-<n> for n in [first, last) to each partition with an idempotent
    producer; returns the (partition, offset, value) of every delivery."""
    delivered, failed = [], []

    def on_delivery(err, msg):
        if err is not None:
            failed.append(err)
        else:
            delivered.append((msg.partition(), msg.offset(), msg.value().decode()))

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                         "linger.ms": 5})
    for n in range(first, last):
        for p in range(PARTITIONS):
            producer.produce(TOPIC, key=str(n), value=f"p{p}-{n}", partition=p,
                             on_delivery=on_delivery)
    assert producer.flush(60) == 0
    assert failed == []
    return delivered


def create_topic(bootstrap):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(TOPIC, num_partitions=PARTITIONS,
                                            replication_factor=1)])
    futures[TOPIC].result(timeout=30)


def expected(partitions, first, last):
    return {(p, n, f"p{p}-{n}") for p in partitions for n in range(first, last)}


class Member:
    """A subscribed consumer with manual commits that records its assignment and its reads."""

    def __init__(self, bootstrap, group, commit=True):
        self.commit = commit
        self.assignment = set()
        self.records = []
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500, "partition.assignment.strategy": "range"})
        self.consumer.subscribe([TOPIC], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer, partitions):
        self.assignment = {tp.partition for tp in partitions}

    def _on_revoke(self, consumer, partitions):
        self.assignment = set()

    def poll(self):
        msg = self.consumer.poll(0.02)
        if msg is None:
            return
        if msg.error():
            assert msg.error().code() != KafkaError._FATAL, msg.error()
            return
        self.records.append((msg.partition(), msg.offset(), msg.value().decode()))
        if self.commit:
            self.consumer.commit(message=msg, asynchronous=False)

    def close(self):
        self.consumer.close()


def poll_until(members, condition, what):
    def step():
        for m in members:
            m.poll()
        return condition()
    wait_for(step, what)


def drain(members, seconds=0.5):
    """Keeps polling a little: a duplicate delivery would arrive now."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for m in members:
            m.poll()


def test_idempotent_producer_writes_each_record_once(broker_factory):
    b = broker_factory("--default-partitions", str(PARTITIONS))
    delivered = produce(b.bootstrap_servers, 0, 100)
    assert len(delivered) == 400
    assert sorted((p, o) for p, o, _ in delivered) == [
        (p, n) for p in range(PARTITIONS) for n in range(100)]
    assert set(delivered) == expected(range(PARTITIONS), 0, 100)
    reader = Consumer({"bootstrap.servers": b.bootstrap_servers, "group.id": "ck-reader",
                       "enable.auto.commit": False})
    reader.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    got = []

    def poll():
        msg = reader.poll(0.05)
        if msg is not None and not msg.error():
            got.append((msg.partition(), msg.offset(), msg.value().decode()))
        return len(got) >= 400

    wait_for(poll, "400 records")
    reader.close()
    assert sorted(got) == sorted(delivered)


def test_group_of_two_with_manual_commits_and_resume(broker_factory):
    b = broker_factory("--default-partitions", str(PARTITIONS))
    create_topic(b.bootstrap_servers)
    group = "ck-group"
    a = Member(b.bootstrap_servers, group)
    c = Member(b.bootstrap_servers, group)
    poll_until([a, c], lambda: len(a.assignment) == 2 and len(c.assignment) == 2
               and a.assignment | c.assignment == set(range(PARTITIONS)), "a 2/2 split")
    a_parts, c_parts = set(a.assignment), set(c.assignment)
    produce(b.bootstrap_servers, 0, 30)
    poll_until([a, c], lambda: len(a.records) + len(c.records) >= 120, "120 records")
    drain([a, c])
    assert len(a.records) == 60 and len(c.records) == 60
    assert set(a.records) == expected(a_parts, 0, 30)
    assert set(c.records) == expected(c_parts, 0, 30)

    a.close()  # leaves the group; c takes every partition and resumes at the commits
    poll_until([c], lambda: c.assignment == set(range(PARTITIONS)), "c owning all partitions")
    before = len(c.records)
    produce(b.bootstrap_servers, 30, 40)
    poll_until([c], lambda: len(c.records) >= before + 40, "40 more records")
    drain([c])
    after = c.records[before:]
    assert len(after) == 40
    assert set(after) == expected(range(PARTITIONS), 30, 40)
    committed = c.consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)],
                                     timeout=30)
    assert [tp.offset for tp in committed] == [40] * PARTITIONS
    c.close()

    # A new member of the group starts exactly after the commits.
    produce(b.bootstrap_servers, 40, 45)
    d = Member(b.bootstrap_servers, group)
    poll_until([d], lambda: len(d.records) >= 20, "the 20 records after the commits")
    drain([d])
    assert len(d.records) == 20
    assert set(d.records) == expected(range(PARTITIONS), 40, 45)
    d.close()


def test_commits_survive_broker_restart(broker_factory, tmp_path):
    data = str(tmp_path / "data")
    b = broker_factory("--default-partitions", str(PARTITIONS), data_dir=data)
    produce(b.bootstrap_servers, 0, 10)
    m = Member(b.bootstrap_servers, "ck-durable", commit=False)
    # Read everything, but commit only up to offset 6 of each partition.
    poll_until([m], lambda: len(m.records) >= 40, "40 records")
    m.consumer.commit(offsets=[TopicPartition(TOPIC, p, 6) for p in range(PARTITIONS)],
                      asynchronous=False)
    m.close()
    assert b.stop() == 0

    b2 = broker_factory("--default-partitions", str(PARTITIONS), data_dir=data)
    m2 = Member(b2.bootstrap_servers, "ck-durable")
    poll_until([m2], lambda: len(m2.records) >= 16, "the records after the commits")
    drain([m2])
    assert len(m2.records) == 16
    assert set(m2.records) == expected(range(PARTITIONS), 6, 10)
    m2.close()
