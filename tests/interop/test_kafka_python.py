"""kafka-python 2.0.2 (pure Python, its own protocol code) against the exactly-broker binary:
a producer, a consumer group of two members splitting a topic, commits, and a consumer that
resumes from them. Every test checks the exact records each consumer got."""
import threading
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

TOPIC = "kp-orders"
PARTITIONS = 4


def wait_for(condition, what, timeout=90.0):
    """Polls `condition` until it holds; the timeout only guards against a hung broker."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def produce(bootstrap, first, last):
    """Writes value p<partition>-<n> for n in [first, last) to each partition."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=5)
    futures = [producer.send(TOPIC, key=f"{n}".encode(), value=f"p{p}-{n}".encode(), partition=p)
               for n in range(first, last) for p in range(PARTITIONS)]
    producer.flush()
    offsets = [f.get(timeout=30) for f in futures]
    producer.close()
    return offsets


def create_topic(bootstrap):
    """Creates the topic (the broker auto-creates it with --default-partitions) without records."""
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    wait_for(lambda: producer.partitions_for(TOPIC) == set(range(PARTITIONS)), "the topic")
    producer.close()


def expected(partitions, first, last):
    return {(p, n, f"p{p}-{n}") for p in partitions for n in range(first, last)}


class GroupMember:
    """A KafkaConsumer in its own thread (kafka-python consumers are not thread-safe): it polls,
    records what it reads, commits each record synchronously, and publishes its assignment."""

    def __init__(self, bootstrap, group):
        self.records = []
        self.assignment = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.error = None
        self.consumer = KafkaConsumer(
            TOPIC, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
            auto_offset_reset="earliest", session_timeout_ms=6000, heartbeat_interval_ms=500,
            request_timeout_ms=310000)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.stop.is_set():
                batches = self.consumer.poll(timeout_ms=100)
                with self.lock:
                    self.assignment = {tp.partition for tp in self.consumer.assignment()}
                for tp, records in batches.items():
                    for r in records:
                        with self.lock:
                            self.records.append((r.partition, r.offset, r.value.decode()))
                        self.consumer.commit(
                            {tp: OffsetAndMetadata(r.offset + 1, f"kp@{r.offset + 1}")})
        except Exception as e:  # reported by the test thread
            self.error = e
        finally:
            self.consumer.close()  # LeaveGroup

    def got(self):
        with self.lock:
            return list(self.records)

    def partitions(self):
        with self.lock:
            return set(self.assignment)

    def close(self):
        self.stop.set()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive()
        assert self.error is None, repr(self.error)


def values(records):
    return {(p, o, v) for p, o, v in records}


def test_producer_writes_exact_records(broker_factory):
    b = broker_factory("--default-partitions", str(PARTITIONS))
    metadata = produce(b.bootstrap_servers, 0, 25)
    assert sorted((m.partition, m.offset) for m in metadata) == [
        (p, n) for p in range(PARTITIONS) for n in range(25)]
    consumer = KafkaConsumer(bootstrap_servers=b.bootstrap_servers, enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    consumer.assign([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
    got = []

    def poll():
        for records in consumer.poll(timeout_ms=200).values():
            got.extend((r.partition, r.offset, r.value.decode()) for r in records)
        return len(got) >= 100

    wait_for(poll, "100 records")
    consumer.poll(timeout_ms=500)  # nothing more may come
    consumer.close()
    assert len(got) == 100
    assert set(got) == expected(range(PARTITIONS), 0, 25)


def test_group_of_two_splits_commits_and_resumes(broker_factory):
    b = broker_factory("--default-partitions", str(PARTITIONS))
    create_topic(b.bootstrap_servers)
    group = "kp-group"
    a = GroupMember(b.bootstrap_servers, group)
    c = GroupMember(b.bootstrap_servers, group)
    try:
        wait_for(lambda: len(a.partitions()) == 2 and len(c.partitions()) == 2
                 and a.partitions() | c.partitions() == set(range(PARTITIONS)),
                 "a 2/2 split of the partitions")
        a_parts, c_parts = a.partitions(), c.partitions()
        produce(b.bootstrap_servers, 0, 26)
        wait_for(lambda: len(a.got()) + len(c.got()) >= 104, "104 records between the two")
        time.sleep(0.5)  # a duplicate delivery would arrive here
        # Each member read exactly its own partitions, each record once.
        assert len(a.got()) == 52 and len(c.got()) == 52
        assert values(a.got()) == expected(a_parts, 0, 26)
        assert values(c.got()) == expected(c_parts, 0, 26)

        # One member leaves; the other takes over and resumes from the commits.
        a.close()
        wait_for(lambda: c.partitions() == set(range(PARTITIONS)), "the survivor owning all")
        before = len(c.got())
        produce(b.bootstrap_servers, 26, 36)
        wait_for(lambda: len(c.got()) >= before + 40, "40 more records")
        time.sleep(0.5)
        after = c.got()[before:]
        assert len(after) == 40
        assert values(after) == expected(range(PARTITIONS), 26, 36)
    finally:
        a.close()
        c.close()

    # The commits are on the broker, with their metadata: a new member resumes exactly there.
    produce(b.bootstrap_servers, 36, 41)
    d = GroupMember(b.bootstrap_servers, group)
    try:
        wait_for(lambda: len(d.got()) >= 20, "the 20 records after the commits")
        time.sleep(0.5)
        assert len(d.got()) == 20
        assert values(d.got()) == expected(range(PARTITIONS), 36, 41)
    finally:
        d.close()
    checker = KafkaConsumer(bootstrap_servers=b.bootstrap_servers, group_id=group,
                            enable_auto_commit=False)
    for p in range(PARTITIONS):
        assert checker.committed(TopicPartition(TOPIC, p)) == 41
    checker.close()


def test_commits_survive_broker_restart(broker_factory, tmp_path):
    data = str(tmp_path / "data")
    b = broker_factory("--default-partitions", str(PARTITIONS), data_dir=data)
    produce(b.bootstrap_servers, 0, 10)
    consumer = KafkaConsumer(bootstrap_servers=b.bootstrap_servers, group_id="kp-durable",
                             enable_auto_commit=False)
    commits = {TopicPartition(TOPIC, p): OffsetAndMetadata(3 + p, f"meta-{p}")
               for p in range(PARTITIONS)}
    consumer.commit(commits)
    consumer.close()
    assert b.stop() == 0

    b2 = broker_factory("--default-partitions", str(PARTITIONS), data_dir=data)
    m = GroupMember(b2.bootstrap_servers, "kp-durable")
    try:
        # Each partition resumes at its commit, 3 + p.
        remaining = sum(10 - (3 + p) for p in range(PARTITIONS))
        wait_for(lambda: len(m.got()) >= remaining, "the records after the commits")
        time.sleep(0.5)
        assert len(m.got()) == remaining
        assert values(m.got()) == {(p, n, f"p{p}-{n}") for p in range(PARTITIONS)
                                   for n in range(3 + p, 10)}
    finally:
        m.close()
