"""The Python Processor on a cluster of 3 bundled brokers while brokers are
killed (issue 20): output = input, exactly once.

- The group coordinator killed mid-stream: the Processor must commit more
  output than was in flight at the kill (two batches) BEFORE the killed
  broker is restarted (another broker takes the group over), within 60 s.
  Until the group coordinator fails over this test fails: a group's
  coordinator is one broker, and while it is down no transaction can commit
  the group's offsets.
- Partition leaders of the input and the output killed, one at a time, each
  restarted once another replica leads.

Each input record makes one output record naming it; at the end every input
must appear exactly once in the output, counted twice: from the leaders'
logs (records of committed transactions) and by a read_committed consumer.
Every wait is a deadline against hanging, never a timing assertion."""

import collections
import threading

import pytest

import exactly
from conftest import eventually, read_committed

PARTITIONS = 3
RECORDS = 4000
BATCH = 20  # max_batch_records: one batch may be in flight at a kill


@pytest.fixture
def cluster(exactly_broker_factory, tmp_path):
    # A data dir: a killed broker restarts with what it had.
    return exactly_broker_factory(brokers=3, data_dir=tmp_path,
                                  default_partitions=PARTITIONS,
                                  transaction_abort_check_interval_ms=200)


class Pipeline:
    """Input filled, one Processor running in a thread (recreated after an
    error that ends it, as a supervisor would), output counted."""

    def __init__(self, cluster, name):
        self.c = cluster
        self.input = f"{name}-in"
        self.output = f"{name}-out"
        self.group = f"{name}-group"
        for topic in (self.input, self.output):
            cluster.create_topic(topic, PARTITIONS,
                                 {"min.insync.replicas": 2},
                                 replication_factor=3)
        with exactly.Producer(cluster.bootstrap_servers) as p:
            p.send_batch(self.input, [(f"k{i}", f"v{i}")
                                      for i in range(RECORDS)])
            p.flush(60)
        self.inputs = {(r.partition, r.offset)
                       for r in self._input_records()}
        assert len(self.inputs) == RECORDS
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _input_records(self):
        return [_At(p, r.offset) for p in range(PARTITIONS)
                for r in self.c.committed_records(self.input, p)]

    def _transform(self, message, out):
        out.send(self.output, key=message.key,
                 value=f"{message.partition}:{message.offset}")

    def _run(self):
        while not self._stop.is_set():
            try:
                p = exactly.Processor(
                    self.c.bootstrap_servers, group_id=self.group,
                    input_topics=self.input,
                    transactional_id=f"{self.group}-1",
                    transform=self._transform, max_batch_records=BATCH,
                    max_batch_time=0.05,
                    consumer_config={"session.timeout.ms": 6000,
                                     "heartbeat.interval.ms": 300},
                    producer_config={"transaction.timeout.ms": 10000,
                                     "linger.ms": 2},
                    on_error=lambda e: None)
            except exactly.Error as e:
                self.errors.append(f"create: {e!r}")
                self._stop.wait(0.2)
                continue
            try:
                while not self._stop.is_set():
                    try:
                        p.run_once()
                    except exactly.KafkaError as e:
                        if e.fatal or not e.retriable:
                            self.errors.append(f"run_once: {e!r}")
                            break
                    except exactly.Error as e:
                        self.errors.append(f"run_once: {e!r}")
                        break
            finally:
                p.close()

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=120)
        assert not self._thread.is_alive(), "the processor did not stop"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        # Also when the test failed: no processor left running on a stopped
        # cluster.
        self._stop.set()
        self._thread.join(timeout=120)

    def committed_output(self):
        """Output records of committed transactions, from the leaders' logs
        (no coordinator needed)."""
        return [r for p in range(PARTITIONS)
                for r in self.c.committed_records(self.output, p)]

    def progress(self):
        return len(self.committed_output())

    def await_in_sync(self, node):
        """Broker `node` (restarted) back in every ISR of the pipeline."""
        assert eventually(lambda: all(
            node in self.c.partition(t, p).isr
            for t in (self.input, self.output)
            for p in range(PARTITIONS)), seconds=60), \
            f"broker {node} did not catch up after its restart"

    def check_exactly_once(self):
        """Every input once in the output: from the logs, and as a
        read_committed consumer sees it."""
        assert eventually(lambda: self.progress() >= RECORDS, seconds=120), \
            f"the processor made {self.progress()} of {RECORDS} outputs " \
            f"(errors: {self.errors[-3:]})"
        self.stop()
        logged = collections.Counter(r.value for r in self.committed_output())
        read = collections.Counter(
            m.value for m in read_committed(self.c.bootstrap_servers,
                                            self.output, RECORDS,
                                            max_wait=60, settle=1.0))
        expected = collections.Counter(f"{p}:{o}".encode()
                                       for p, o in self.inputs)
        for name, seen in (("the leaders' logs", logged),
                           ("a read_committed consumer", read)):
            assert sum(seen.values()) == RECORDS, name
            assert seen == expected, (
                f"{name}: missing {len(expected - seen)}, "
                f"duplicated {sum((seen - expected).values())}")


_At = collections.namedtuple("_At", "partition offset")


def test_processor_survives_group_coordinator_kills(cluster):
    with Pipeline(cluster, "py-gc") as pipe:
        kills = 0
        # Two kills mid-stream, each with progress required before the
        # restart.
        while kills < 2 and pipe.progress() < RECORDS - 10 * BATCH:
            assert eventually(lambda: pipe.progress() > 0, seconds=60), \
                f"no output at all (errors: {pipe.errors[-3:]})"
            before = pipe.progress()
            node = cluster.faults.kill_coordinator(group=pipe.group)
            kills += 1
            assert not cluster.node_running(node)
            try:
                # Two batches may become visible after the kill without a
                # group coordinator: one committed whose markers are still
                # being written, and the next, whose offsets were sent
                # before the kill. More than that needs a coordinator of
                # the group.
                assert eventually(
                    lambda: pipe.progress() > before + 2 * BATCH,
                    seconds=60), (
                    f"no progress for 60 s after broker {node}, the "
                    f"coordinator of group {pipe.group}, was killed: "
                    f"{pipe.progress()} committed outputs, {before} at the "
                    f"kill (the group's coordinator did not fail over to "
                    f"another broker)")
                assert not cluster.node_running(node)
            finally:
                # Also after a failure: the processor can then finish.
                cluster.restart("crash", node=node)
            pipe.await_in_sync(node)
        assert kills >= 1, "the input ran out before the first kill"
        pipe.check_exactly_once()


def test_processor_survives_partition_leader_kills(cluster):
    with Pipeline(cluster, "py-pl") as pipe:
        victims = [(pipe.output, 0), (pipe.input, 1), (pipe.output, 2)]
        for topic, partition in victims:
            assert eventually(lambda: pipe.progress() > 0, seconds=60), \
                f"no output at all (errors: {pipe.errors[-3:]})"
            leader = cluster.partition(topic, partition).leader
            cluster.faults.kill(leader)
            # Down until another in-sync replica leads.
            assert eventually(
                lambda: cluster.partition(topic, partition).leader not in
                (-1, leader), seconds=60), \
                f"{topic}-{partition} got no new leader after {leader} died"
            cluster.restart("crash", node=leader)
            pipe.await_in_sync(leader)
        pipe.check_exactly_once()
