"""Clients written elsewhere following leader changes on a 3-broker bundled cluster (issue 19).

kcat, kafka-python and confluent-kafka-python (an idempotent producer, a transactional
producer, a consumer group) run unchanged against `exactly-broker --brokers 3` while the test
kills the leader of a partition they are using (the admin port's `kill node=N`), and, in most
tests, restarts that broker and kills the next leader. Topics have replication factor 3 and
min.insync.replicas=2, so one broker down never stops acks=all. Every test counts records:
what a client was told was written is read back once, in order per partition (kafka-python's
producer has no idempotence: at least once there, see its test).

Coordinators do not fail over yet (issue 20): the broker that coordinates a test's group or
transactional id is never killed; the test asks FindCoordinator which one it is.

    EXACTLY_BROKER_BIN=build/broker-stub/exactly-broker \\
      /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider tests/interop/test_cluster_failover.py
"""
import collections
import os
import pathlib
import signal
import socket
import subprocess
import time
import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaPythonTopicPartition
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Int8, Int16, Int32, Schema, String

import kafka_raw

ROOT = pathlib.Path(__file__).resolve().parents[2]
BROKERS = 3
PARTITIONS = 3
# Generous: a loaded 2-core machine, and a failover the clients must notice and retry through.
TIMEOUT = 120.0


class FindCoordinatorResponse_v1(Response):
    # kafka-python 2.0.2's GroupCoordinatorResponse_v1 lacks throttle_time_ms, so it misreads v1.
    API_KEY = 10
    API_VERSION = 1
    SCHEMA = Schema(
        ('throttle_time_ms', Int32),
        ('error_code', Int16),
        ('error_message', String('utf-8')),
        ('node_id', Int32),
        ('host', String('utf-8')),
        ('port', Int32))


class FindCoordinatorRequest_v1(Request):
    API_KEY = 10
    API_VERSION = 1
    RESPONSE_TYPE = FindCoordinatorResponse_v1
    SCHEMA = Schema(('key', String('utf-8')), ('key_type', Int8))


GROUP, TRANSACTION = 0, 1


class Cluster:
    """exactly-broker --brokers 3 with its admin port, in one process. With a data dir, so
    that a killed broker restarts with the log it had, as a real one would."""

    def __init__(self, workdir):
        binary = os.environ.get("EXACTLY_BROKER_BIN",
                                str(ROOT / "build/broker-stub/exactly-broker"))
        if not os.path.exists(binary):
            pytest.fail(f"exactly-broker binary not found at {binary}; build first")
        self.log_path = workdir / "broker.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--port", "0", "--brokers", str(BROKERS), "--admin-port", "0",
             "--data-dir", str(workdir / "data")],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        # First line bootstrap.servers=h:p1,h:p2,h:p3, then admin=127.0.0.1:PORT.
        first, second = self.proc.stdout.readline(), self.proc.stdout.readline()
        if not first.startswith("bootstrap.servers=") or not second.startswith("admin="):
            self.stop()
            raise RuntimeError(f"exactly-broker did not start: {first!r} {second!r}\n"
                               f"{self.log_tail()}")
        self.bootstrap_servers = first.strip().split("=", 1)[1]
        self.admin_port = int(second.strip().rsplit(":", 1)[1])

    def log_tail(self, lines=60):
        text = self.log_path.read_text(errors="replace").splitlines()
        return "broker stderr (last lines):\n" + "\n".join(text[-lines:])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def admin(self, command):
        """One admin-port command; returns what follows "ok"."""
        with socket.create_connection(("127.0.0.1", self.admin_port), timeout=30) as s:
            s.sendall(command.encode() + b"\n")
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        reply = reply.decode().strip()
        if reply != "ok" and not reply.startswith("ok "):
            raise AssertionError(f"admin {command!r} answered {reply!r}\n{self.log_tail()}")
        return reply[2:].strip()

    def wait_for(self, condition, what, timeout=TIMEOUT):
        """Polls `condition` until it holds; the deadline only guards against a hang. `what`
        names what is awaited (a callable: called for the message)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                what = what() if callable(what) else what
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n"
                                     f"{self.log_tail()}")
            time.sleep(0.05)

    def create_topic(self, topic, partitions=PARTITIONS):
        self.admin(f"create-topic name={topic} partitions={partitions} "
                   f"replication-factor={BROKERS} min-insync-replicas=2")
        self.wait_in_sync(topic, partitions)

    def partition(self, topic, p):
        """{'leader', 'epoch', 'replicas', 'isr'} from describe-partition."""
        fields = dict(kv.split("=", 1) for kv in
                      self.admin(f"describe-partition topic={topic} partition={p}").split())

        def nodes(text):  # "2,3,1", or "-" for none
            return [] if text == "-" else [int(n) for n in text.split(",")]

        return {"leader": int(fields["leader"]), "epoch": int(fields["epoch"]),
                "replicas": nodes(fields["replicas"]), "isr": nodes(fields["isr"])}

    def offsets(self, topic, p):
        """{'log_start', 'hwm', 'lso', 'leo'} at the partition's leader."""
        return {k: int(v) for k, v in (kv.split("=", 1) for kv in
                                       self.admin(f"offsets topic={topic} partition={p}").split())}

    def wait_in_sync(self, topic, partitions=PARTITIONS):
        """Every partition of `topic` has a leader and all brokers in its ISR."""
        self.wait_for(lambda: all(
            (d := self.partition(topic, p))["leader"] > 0 and len(d["isr"]) == BROKERS
            for p in range(partitions)), f"every replica of {topic} in sync")

    def kill_leader(self, topic, p, spare=()):
        """Kills the broker leading topic[p] (never one in `spare`); returns its node id once
        another replica leads the partition."""
        before = self.partition(topic, p)
        victim = before["leader"]
        assert victim not in spare, f"{topic}[{p}] is led by {victim}, which must stay up"
        self.admin(f"kill node={victim}")
        self.wait_for(lambda: (d := self.partition(topic, p))["leader"] not in (victim, -1)
                      and d["epoch"] > before["epoch"], f"a new leader of {topic}[{p}]")
        return victim

    def restart(self, node, topic, partitions=PARTITIONS):
        """Starts a killed broker again and waits until it is back in every ISR of `topic`."""
        self.admin(f"restart node={node} mode=crash")
        self.wait_in_sync(topic, partitions)

    def leader_other_than(self, topic, spare):
        """A partition of `topic` whose leader is not `spare`."""
        for p in range(PARTITIONS):
            if self.partition(topic, p)["leader"] != spare:
                return p
        raise AssertionError(f"every partition of {topic} is led by {spare}")


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    rc = c.stop()
    assert rc == 0, f"exactly-broker exited with {rc}\n{c.log_tail()}"


def find_coordinator(cluster, key, key_type):
    """The node id coordinating group / transactional id `key`."""
    found = []

    def ask():
        r = kafka_raw.send(cluster.bootstrap_servers, FindCoordinatorRequest_v1(key, key_type))
        if r.error_code == 0:
            found.append(r.node_id)
        return bool(found)

    cluster.wait_for(ask, f"the coordinator of {key}")
    return found[0]


def read_back(cluster, topic, isolation="read_uncommitted", partitions=PARTITIONS):
    """Every record of `topic` from the beginning to each partition's end, with a confluent
    consumer: {partition: [(offset, value)]}."""
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                  "group.id": f"reader-{uuid.uuid4()}", "enable.auto.commit": False,
                  "enable.partition.eof": True, "isolation.level": isolation})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    records = {p: [] for p in range(partitions)}
    at_end = set()  # partitions whose last event was end-of-partition

    def done():
        for m in c.consume(500, timeout=0.2):
            if m.error() is None:
                records[m.partition()].append((m.offset(), m.value().decode()))
                at_end.discard(m.partition())
            elif m.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(m.partition())
            elif m.error().fatal():
                raise AssertionError(f"reading {topic}: {m.error()}")
        return len(at_end) == partitions

    try:
        cluster.wait_for(done, f"the end of every partition of {topic}")
    finally:
        c.close()
    return records


def confluent_produce(cluster, topic, values):
    """Writes value v to partition i % PARTITIONS with an idempotent acks=all producer."""
    failed = []

    def on_delivery(err, msg):
        if err is not None:
            failed.append((msg.value(), str(err)))

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                         "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                         "message.timeout.ms": int(TIMEOUT * 1000)})
    for i, v in enumerate(values):
        producer.produce(topic, value=v, partition=i % PARTITIONS, on_delivery=on_delivery)
    assert producer.flush(TIMEOUT) == 0
    assert failed == []


def test_idempotent_producer_through_two_leader_kills(cluster):
    """3000 records from one idempotent producer while the leader of partition 0 is killed
    (a third of the way), then, once it is back in sync, the leader of partition 1 (two
    thirds). Every record is acknowledged, none fails, and the log holds each exactly once, in
    the order produced, at the offset its delivery report gave."""
    topic, n = "ck-idempotent", 3000
    cluster.create_topic(topic)
    acked, failed = {}, []

    def on_delivery(err, msg):
        if err is not None:
            failed.append((msg.value().decode(), str(err)))
        else:
            acked[msg.value().decode()] = (msg.partition(), msg.offset())

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                         "enable.idempotence": True, "acks": "all", "linger.ms": 5,
                         "message.timeout.ms": int(TIMEOUT * 1000)})
    victims = []
    for i in range(n):
        if i == n // 3:
            victims.append(cluster.kill_leader(topic, 0))
        elif i == 2 * n // 3:
            # Two brokers down would leave the ISR below min.insync.replicas.
            cluster.restart(victims[0], topic)
            victims.append(cluster.kill_leader(topic, 1))
        producer.produce(topic, value=str(i), partition=i % PARTITIONS, on_delivery=on_delivery)
        if i % 10 == 0:
            # Pace the loop so that the records go out in many requests around each kill.
            producer.poll(0.005)
    assert producer.flush(TIMEOUT) == 0
    assert failed == []
    assert len(acked) == n

    cluster.restart(victims[1], topic)
    log = read_back(cluster, topic)
    for p in range(PARTITIONS):
        assert [v for _, v in log[p]] == [str(i) for i in range(p, n, PARTITIONS)], p
        assert all(acked[v] == (p, offset) for offset, v in log[p]), p


def test_transactions_commit_and_abort_across_leader_kills(cluster):
    """30 transactions of 60 records over 3 partitions from one transactional producer. The
    leader of a partition the transaction writes to is killed in the middle of transaction 10
    (committed) and, after that broker is back, a leader again in the middle of transaction 20
    (aborted); transaction 15 is aborted with every broker up. Neither killed broker is the
    transaction coordinator. Every commit and abort succeeds; a read_committed consumer sees
    exactly the committed transactions' records, once each and in order per partition, and a
    read_uncommitted one sees the aborted records too (so they did reach the log)."""
    topic, txn_id, txns, per_txn = "ck-transactions", "ck-failover-txn", 30, 60
    cluster.create_topic(topic)
    coordinator = find_coordinator(cluster, txn_id, TRANSACTION)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers,
                         "transactional.id": txn_id, "acks": "all", "linger.ms": 5,
                         "transaction.timeout.ms": int(TIMEOUT * 1000),
                         "message.timeout.ms": int(TIMEOUT * 1000)})
    producer.init_transactions(TIMEOUT)
    kill_in, abort = {10, 20}, {15, 20}
    committed = {p: [] for p in range(PARTITIONS)}
    everything = {p: [] for p in range(PARTITIONS)}
    victim = None
    for t in range(txns):
        if t == 13:
            cluster.restart(victim, topic)
        producer.begin_transaction()
        values = [(j % PARTITIONS, f"t{t}-{j}") for j in range(per_txn)]
        for j, (p, v) in enumerate(values):
            if t in kill_in and j == per_txn // 2:
                victim = cluster.kill_leader(topic, cluster.leader_other_than(topic, coordinator),
                                             spare=(coordinator,))
            producer.produce(topic, value=v, partition=p)
            producer.poll(0)
        if t in abort:
            assert producer.flush(TIMEOUT) == 0  # the aborted records do reach the log
            producer.abort_transaction(TIMEOUT)
        else:
            producer.commit_transaction(TIMEOUT)
            for p, v in values:
                committed[p].append(v)
        for p, v in values:
            everything[p].append(v)

    cluster.restart(victim, topic)
    # Commit returns once the coordinator decided; the markers follow. Wait for them.
    cluster.wait_for(lambda: all((o := cluster.offsets(topic, p))["lso"] == o["hwm"]
                                 for p in range(PARTITIONS)), "every transaction marker")
    visible = read_back(cluster, topic, "read_committed")
    assert {p: [v for _, v in r] for p, r in visible.items()} == committed
    uncommitted = read_back(cluster, topic, "read_uncommitted")
    assert {p: [v for _, v in r] for p, r in uncommitted.items()} == everything


def test_consumer_group_keeps_consuming_from_new_leaders(cluster):
    """One member of a confluent consumer group (subscribe, offsets committed synchronously
    after each batch it processed) reads 1500 records while the leader of a partition is
    killed once it has read 500; 750 more are written after that kill, and once it has read
    1800 the first broker is restarted, a second leader is killed and 750 more are written.
    Neither killed broker is the group's coordinator. It gets all 3000 records, each exactly
    once, in order per partition, and its committed offsets end at each partition's end."""
    topic, group = "ck-group", "ck-failover-group"
    cluster.create_topic(topic)
    coordinator = find_coordinator(cluster, group, GROUP)
    batches = [[f"b{b}-{i}" for i in range(size)] for b, size in enumerate((1500, 750, 750))]
    confluent_produce(cluster, topic, batches[0])
    total = sum(len(b) for b in batches)

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    seen = []  # (partition, offset, value)
    victims = []

    def consume():
        messages = consumer.consume(100, timeout=0.5)
        for m in messages:
            if m.error() is not None:
                assert not m.error().fatal(), m.error()
                continue
            seen.append((m.partition(), m.offset(), m.value().decode()))
        if messages:
            consumer.commit(asynchronous=False)
        if not victims and len(seen) >= 500:
            victims.append(cluster.kill_leader(
                topic, cluster.leader_other_than(topic, coordinator), spare=(coordinator,)))
            confluent_produce(cluster, topic, batches[1])
        elif len(victims) == 1 and len(seen) >= 1800:
            cluster.restart(victims[0], topic)
            victims.append(cluster.kill_leader(
                topic, cluster.leader_other_than(topic, coordinator), spare=(coordinator,)))
            confluent_produce(cluster, topic, batches[2])
        return len(seen) >= total

    try:
        cluster.wait_for(consume, lambda: f"{total} records consumed ({len(seen)} were)")
        assert len(victims) == 2
        assert collections.Counter(v for _, _, v in seen) == collections.Counter(
            v for b in batches for v in b)
        for p in range(PARTITIONS):
            mine = [(o, v) for q, o, v in seen if q == p]
            assert [o for o, _ in mine] == list(range(len(mine))), p
            assert [v for _, v in mine] == [v for b in batches for v in b[p::PARTITIONS]], p
        committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)],
                                       timeout=TIMEOUT)
        assert {tp.partition: tp.offset for tp in committed} == {
            p: sum(len(b[p::PARTITIONS]) for b in batches) for p in range(PARTITIONS)}
    finally:
        consumer.close()


def test_kcat_follows_a_new_leader(cluster, kcat, tmp_path):
    """One kcat producer (acks=all, idempotent) is given 500 lines; once 200 are written the
    partition's leader is killed and the same process is given 500 more. It exits 0, a kcat
    consumer started before the kill reads the 1000 lines across it, and a new `kcat -C -e`
    reads them from the new leader: each once, in order, at offsets 0..999."""
    topic = "kcat-failover"
    cluster.create_topic(topic, partitions=1)
    common = ["-b", cluster.bootstrap_servers, "-t", topic, "-p", "0"]
    lines = [f"line-{i}" for i in range(1000)]
    expected = [f"{i}:{line}" for i, line in enumerate(lines)]
    # stderr to files: kcat logs every refused connection, which could fill a pipe.
    with open(tmp_path / "kcat-consumer.err", "w+") as consumer_err, \
            open(tmp_path / "kcat-producer.err", "w+") as producer_err:
        consumer = subprocess.Popen([kcat, "-C", *common, "-o", "beginning", "-c", "1000",
                                     "-f", "%o:%s\n"],
                                    stdout=subprocess.PIPE, stderr=consumer_err, text=True)
        producer = subprocess.Popen([kcat, "-P", *common, "-X", "acks=all",
                                     "-X", "enable.idempotence=true",
                                     "-X", f"message.timeout.ms={int(TIMEOUT * 1000)}"],
                                    stdin=subprocess.PIPE, stderr=producer_err, text=True)
        try:
            producer.stdin.write("".join(f"{line}\n" for line in lines[:500]))
            producer.stdin.flush()
            # kcat reads its input in blocks (2 KiB here): the last lines of this half wait in
            # the pipe for the next, so wait for fewer than 500.
            cluster.wait_for(lambda: cluster.offsets(topic, 0)["hwm"] >= 200,
                             "200 lines written")
            cluster.kill_leader(topic, 0)
            producer.stdin.write("".join(f"{line}\n" for line in lines[500:]))
            producer.stdin.close()
            rc = producer.wait(timeout=TIMEOUT)
            producer_err.seek(0)
            assert rc == 0, producer_err.read()
            out, _ = consumer.communicate(timeout=TIMEOUT)
            consumer_err.seek(0)
            assert consumer.returncode == 0, consumer_err.read()
            assert out.splitlines() == expected
        finally:
            for proc in (producer, consumer):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    result = subprocess.run([kcat, "-C", *common, "-o", "beginning", "-e", "-f", "%o:%s\n"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected


def test_kafka_python_producer_and_consumer_follow_new_leaders(cluster):
    """kafka-python's producer (acks=all, retries, one request in flight, no idempotence in
    2.0.2) sends 2000 records while the leader of partition 0 is killed halfway; every send
    succeeds, and each acknowledged offset holds its record. Its consumer (assign, no group)
    then reads every partition from the beginning while, once it has read half, the leader of
    partition 1 is killed (the first broker restarted before): it reads every offset exactly
    once. The producer may write a record twice (a response lost with its leader, then the
    retry), as Kafka's own non-idempotent producer may; every record sent is there, none is
    missing, and first copies are in send order."""
    topic, n = "kp-failover", 2000
    cluster.create_topic(topic)
    servers = cluster.bootstrap_servers.split(",")
    producer = KafkaProducer(bootstrap_servers=servers, acks="all", retries=1_000_000,
                             max_in_flight_requests_per_connection=1, linger_ms=5,
                             retry_backoff_ms=100)
    futures = []
    for i in range(n):
        if i == n // 2:
            victim = cluster.kill_leader(topic, 0)
        futures.append((str(i), producer.send(topic, value=str(i).encode(),
                                              partition=i % PARTITIONS)))
        if i % 10 == 0:
            time.sleep(0.005)  # pace: many requests around the kill
    producer.flush(timeout=TIMEOUT)
    acked = {v: (md.partition, md.offset) for v, f in futures for md in [f.get(timeout=1)]}
    producer.close()
    cluster.restart(victim, topic)

    consumer = KafkaConsumer(bootstrap_servers=servers, group_id=None,
                             enable_auto_commit=False, auto_offset_reset="earliest")
    tps = [KafkaPythonTopicPartition(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    consumer.seek_to_beginning()
    ends = consumer.end_offsets(tps)
    log = {p: [] for p in range(PARTITIONS)}
    killed = []

    def consume():
        for tp, messages in consumer.poll(timeout_ms=500, max_records=50).items():
            log[tp.partition] += [(m.offset, m.value.decode()) for m in messages]
        if not killed and sum(map(len, log.values())) >= n // 2:
            killed.append(cluster.kill_leader(topic, 1))
        return all(len(log[tp.partition]) >= ends[tp] for tp in tps)

    try:
        cluster.wait_for(consume, f"every record of {topic} consumed")
    finally:
        consumer.close()
    assert killed
    for p in range(PARTITIONS):
        offsets = [o for o, _ in log[p]]
        assert offsets == list(range(ends[KafkaPythonTopicPartition(topic, p)])), p
        sent = [str(i) for i in range(p, n, PARTITIONS)]
        values = [v for _, v in log[p]]
        assert list(dict.fromkeys(values)) == sent, p  # none missing, first copies in order
        assert all(acked[v][0] == p and values[acked[v][1]] == v for v in sent), p
    duplicates = sum(map(len, log.values())) - n
    print(f"kafka-python producer: {duplicates} records written twice")
