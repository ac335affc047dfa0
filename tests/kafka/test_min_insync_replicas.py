"""min.insync.replicas above a topic's replication factor, on Apache Kafka and on the bundled
broker side by side: both accept the topic and cap the setting at the replication factor (Kafka
3.7+), so both answer acks=all and acks=1 on a replication-factor-1 topic with
min.insync.replicas=2.

CTest runs it in the kafka labels (EXACTLY_KAFKA_CLUSTER names the running Kafka cluster,
EXACTLY_BROKER_BIN the bundled broker's binary); without a Kafka cluster the Kafka half skips and
says so (the fixtures: conftest.py). /usr/bin/python3 (Debian's confluent-kafka).
"""
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic


def produce_one(bootstrap, topic, acks):
    """The delivery error code of one record sent with `acks` (0: delivered)."""
    results = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks,
                         "message.timeout.ms": 10000, "retries": 0})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: results.append(err))
    producer.flush(30)
    assert len(results) == 1, "no delivery report"
    return 0 if results[0] is None else results[0].code()


def wait_for_leader(bootstrap, topic, seconds=30):
    """Until each broker of `bootstrap` names the topic's leader: a Kafka cluster's brokers learn
    a new topic asynchronously, and a producer asking one that has not yet gets no partition."""
    deadline = time.monotonic() + seconds
    for server in bootstrap.split(","):
        admin = AdminClient({"bootstrap.servers": server})
        while True:
            md = admin.list_topics(topic, timeout=10)
            t = md.topics.get(topic)
            if t is not None and t.error is None and t.partitions and \
                    all(p.leader >= 0 for p in t.partitions.values()):
                break
            assert time.monotonic() < deadline, f"{server} never named a leader of {topic}"
            time.sleep(0.1)


def check(bootstrap):
    topic = f"min-isr-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # Replication factor 1, min.insync.replicas 2: accepted at creation.
    for f in admin.create_topics([NewTopic(topic, 1, 1, config={"min.insync.replicas": "2"})],
                                 operation_timeout=30).values():
        f.result()
    wait_for_leader(bootstrap, topic)
    assert produce_one(bootstrap, topic, "all") == 0
    assert produce_one(bootstrap, topic, "1") == 0


def test_bundled_broker_caps_min_insync_replicas_at_the_replication_factor(bundled):
    check(bundled)


def test_kafka_caps_min_insync_replicas_at_the_replication_factor(kafka):
    check(kafka)
