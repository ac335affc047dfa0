"""Kafka's own kafka-transactions.sh (org.apache.kafka.tools.TransactionsCommand 3.9.1, resolved
from Maven Central by scripts/kafka.sh fetch --tools) against the bundled broker and against
Apache Kafka: the tool lists, describes, finds and aborts transactions the same way on both, and
both brokers refuse a stray transactional batch with the same error.

CTest runs it in the kafka labels: EXACTLY_KAFKA_CLUSTER names the running Kafka cluster,
EXACTLY_BROKER_BIN the bundled broker's binary. /usr/bin/python3 (Debian's confluent-kafka and
kafka-python).
"""
import contextlib
import os
import pathlib
import subprocess
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.client_async import KafkaClient
from kafka.protocol.api import Request, Response
from kafka.protocol.produce import ProduceRequest
from kafka.protocol.types import Int16, Int32, Int64, Schema, String
from kafka.record.default_records import DefaultRecordBatchBuilder

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402

TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"
INVALID_PRODUCER_ID_MAPPING = 49
INVALID_TXN_STATE = 48


class InitProducerIdResponse_v0(Response):
    API_KEY = 22
    API_VERSION = 0
    SCHEMA = Schema(('throttle_time_ms', Int32), ('error_code', Int16),
                    ('producer_id', Int64), ('producer_epoch', Int16))


class InitProducerIdRequest_v0(Request):
    API_KEY = 22
    API_VERSION = 0
    RESPONSE_TYPE = InitProducerIdResponse_v0
    SCHEMA = Schema(('transactional_id', String('utf-8')), ('transaction_timeout_ms', Int32))


class Broker:
    """One of the two brokers under test: its bootstrap servers and where its coordinator and
    partition leaders are."""

    def __init__(self, bootstrap, leader_of, coordinator_of):
        self.bootstrap = bootstrap
        self.leader_of = leader_of
        self.coordinator_of = coordinator_of


@pytest.fixture(scope="module")
def tools():
    try:
        kafka_cluster.fetch_tools(quiet=True)
    except kafka_cluster.Unavailable as e:
        pytest.skip(f"Kafka's tools cannot be had here: {e}")


@contextlib.contextmanager
def bundled_broker(*flags):
    """The bundled broker's binary on a free port: one node, leader and coordinator of all."""
    with kafka_cluster.bundled_broker(*flags) as bootstrap:
        yield Broker(bootstrap, lambda topic, p: 1, lambda txn_id: 1)


@pytest.fixture(scope="module")
def bundled(tools):
    # Verification off, so that a stray batch can open a hanging transaction to find.
    with bundled_broker("--transaction_partition_verification=false") as broker:
        yield broker


@pytest.fixture(scope="module")
def kafka(tools):
    directory = os.environ.get("EXACTLY_KAFKA_CLUSTER")
    if not directory:
        pytest.skip("needs an Apache Kafka cluster (EXACTLY_KAFKA_CLUSTER, set by the kafka labels)")
    cluster = kafka_cluster.KafkaCluster.attach(directory)
    return Broker(cluster.bootstrap_servers, cluster.leader,
                  lambda txn_id: cluster.coordinator(txn_id))


def tool(broker, *args):
    done = subprocess.run(kafka_cluster.tool_command(
        TRANSACTIONS, ["--bootstrap-server", broker.bootstrap, *args]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)
    assert done.returncode == 0, f"kafka-transactions.sh {' '.join(args)}: {done.stderr[-2000:]}"
    return done.stdout


def table(output):
    """The tool's tab-separated table as a list of {column: value}."""
    lines = [line for line in output.splitlines() if line.strip()]
    header = [c.strip() for c in lines[0].split("\t") if c.strip()]
    return [dict(zip(header, (c.strip() for c in line.split("\t")))) for line in lines[1:]]


def new_topic(broker, name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(name, 1, -1)]).values():
        f.result()
    broker.leader_of(name, 0)  # waits until it is served


def raw_client(broker):
    client = KafkaClient(bootstrap_servers=broker.bootstrap, client_id="exactly-tool-test")
    client.poll(future=client.cluster.request_update())
    return client


def call(client, node, request):
    for _ in range(400):
        if client.ready(node):
            break
        client.poll(timeout_ms=50)
    future = client.send(node, request)
    client.poll(future=future, timeout_ms=30000)
    assert future.succeeded(), future.exception
    return future.value


def stray_produce(broker, topic, transactional_id, producer_id, producer_epoch):
    """A transactional batch for partition 0 that no AddPartitionsToTxn announced; its error."""
    batch = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=1,
                                      producer_id=producer_id, producer_epoch=producer_epoch,
                                      base_sequence=0, batch_size=1 << 20)
    batch.append(0, timestamp=int(time.time() * 1000), key=b"k", value=b"stray", headers=[])
    records = bytes(batch.build())
    # A topic just created may not be served by its leader yet (UNKNOWN_TOPIC_OR_PARTITION,
    # NOT_LEADER_OR_FOLLOWER): retried, as a client would.
    client = raw_client(broker)
    try:
        deadline = time.monotonic() + 60
        while True:
            response = call(client, broker.leader_of(topic, 0), ProduceRequest[3](
                transactional_id=transactional_id, required_acks=-1, timeout=10000,
                topics=[(topic, [(0, records)])]))
            error = response.topics[0][1][0][1]
            if error not in (3, 6) or time.monotonic() > deadline:
                return error
            time.sleep(0.2)
    finally:
        client.close()


def init_producer_id(broker, transactional_id):
    # A new cluster's coordinator may still be loading its log (COORDINATOR_LOAD_IN_PROGRESS,
    # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR): retried, as a client would.
    client = raw_client(broker)
    try:
        deadline = time.monotonic() + 60
        while True:
            response = call(client, broker.coordinator_of(transactional_id),
                            InitProducerIdRequest_v0(transactional_id=transactional_id,
                                                     transaction_timeout_ms=60000))
            if response.error_code not in (14, 15, 16) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        client.close()
    assert response.error_code == 0, response
    return response.producer_id, response.producer_epoch


def open_transaction(broker, topic, transactional_id):
    """A transaction left open on partition 0 with 3 records (its producer is returned, alive)."""
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": transactional_id,
                  "transaction.timeout.ms": 60000})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, key=b"k", value=b"open-%d" % i, partition=0)
    assert p.flush(30) == 0
    return p


def first_read_committed(broker, topic):
    """The first value a read_committed consumer reads from partition 0, after a plain record is
    written (it is readable only once nothing open comes before it)."""
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce(topic, value=b"after", partition=0)
    assert plain.flush(30) == 0
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": uuid.uuid4().hex,
                  "isolation.level": "read_committed", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                return m.value()
        return None
    finally:
        c.close()


def test_both_refuse_a_stray_batch_alike(bundled, kafka):
    """KIP-890 part 1: a transactional batch its coordinator does not know about. The bundled
    broker runs here with verification off, so it is asked with verification on in its own
    process."""
    with bundled_broker() as verifying:
        answers = {}
        for name, broker in (("bundled", verifying), ("kafka", kafka)):
            topic = "stray-" + uuid.uuid4().hex[:8]
            new_topic(broker, topic)
            # A transactional id no producer ever initialised.
            unknown = stray_produce(broker, topic, "never-" + uuid.uuid4().hex[:8], 4242, 0)
            # A real producer's id and epoch, but a partition it never added.
            txn_id = "unadded-" + uuid.uuid4().hex[:8]
            pid, epoch = init_producer_id(broker, txn_id)
            unadded = stray_produce(broker, topic, txn_id, pid, epoch)
            answers[name] = (unknown, unadded)
        print("stray batch answers (unknown id, partition not added):", answers)
        assert answers["kafka"] == answers["bundled"], answers
        assert answers["kafka"] == (INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE)


@pytest.mark.parametrize("which", ["bundled", "kafka"])
def test_list_describe_and_abort_an_open_transaction(which, request):
    broker = request.getfixturevalue(which)
    topic = "tool-" + uuid.uuid4().hex[:8]
    txn_id = "tool-txn-" + uuid.uuid4().hex[:8]
    new_topic(broker, topic)
    producer = open_transaction(broker, topic, txn_id)

    listed = [r for r in table(tool(broker, "list")) if r["TransactionalId"] == txn_id]
    assert len(listed) == 1 and listed[0]["TransactionState"] == "Ongoing", listed
    producer_id = listed[0]["ProducerId"]

    described = table(tool(broker, "describe", "--transactional-id", txn_id))
    assert len(described) == 1
    assert described[0]["TransactionState"] == "Ongoing"
    assert described[0]["ProducerId"] == producer_id
    assert f"{topic}-0" in described[0]["TopicPartitions"]

    producers = table(tool(broker, "describe-producers", "--topic", topic, "--partition", "0"))
    mine = [r for r in producers if r["ProducerId"] == producer_id]
    assert len(mine) == 1 and mine[0]["CurrentTransactionStartOffset"] == "0", producers

    tool(broker, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
    producers = table(tool(broker, "describe-producers", "--topic", topic, "--partition", "0"))
    mine = [r for r in producers if r["ProducerId"] == producer_id]
    assert mine and mine[0]["CurrentTransactionStartOffset"] == "None", producers
    assert first_read_committed(broker, topic) == b"after"
    producer.abort_transaction(30)


def test_find_and_abort_a_hanging_transaction_on_the_bundled_broker(bundled):
    """What KIP-664 is for: a transaction no coordinator knows, holding back read_committed
    readers (possible on the bundled broker with verification off; Kafka 3.9 refuses the batch,
    test_both_refuse_a_stray_batch_alike)."""
    topic = "hang-" + uuid.uuid4().hex[:8]
    new_topic(bundled, topic)
    assert stray_produce(bundled, topic, "ghost-" + uuid.uuid4().hex[:8], 4242, 0) == 0

    hanging = table(tool(bundled, "find-hanging", "--broker-id", "1",
                         "--max-transaction-timeout", "0"))
    mine = [r for r in hanging if r["Topic"] == topic]
    assert len(mine) == 1 and mine[0]["ProducerId"] == "4242", hanging
    assert mine[0]["StartOffset"] == "0"

    tool(bundled, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
    hanging = table(tool(bundled, "find-hanging", "--broker-id", "1",
                         "--max-transaction-timeout", "0"))
    assert not [r for r in hanging if r["Topic"] == topic], hanging
    assert first_read_committed(bundled, topic) == b"after"
