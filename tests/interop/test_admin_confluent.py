"""confluent-kafka-python's AdminClient (librdkafka underneath) against the exactly-broker binary:
create topics with configs, describe and alter configs, add partitions, delete records, delete
and re-create topics, and the errors Kafka answers; every result checked through metadata,
config descriptions and watermarks. confluent-kafka 1.7.0 has no delete_records, so records are
deleted with a DeleteRecords request sent by kafka-python's protocol layer (kafka_raw.py).
"""
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (AdminClient, ConfigResource, ConfigSource, NewPartitions,
                                   NewTopic)

import kafka_raw

TIMEOUT = 30


def admin_for(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def result(future):
    """The future's result, or the Kafka error code it failed with."""
    try:
        return future.result(timeout=TIMEOUT)
    except KafkaException as e:
        return e.args[0].code()


def create(admin, *topics, validate_only=False):
    futures = admin.create_topics(list(topics), operation_timeout=TIMEOUT,
                                  validate_only=validate_only)
    return {name: result(f) for name, f in futures.items()}


def partition_count(admin, topic):
    md = admin.list_topics(timeout=TIMEOUT)
    return len(md.topics[topic].partitions) if topic in md.topics else None


def describe(admin, topic):
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    return result(admin.describe_configs([resource])[resource])


def alter(admin, topic, configs):
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config=configs)
    return result(admin.alter_configs([resource])[resource])


def producer_for(broker):
    return Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0,
                     "allow.auto.create.topics": False})


def produce(producer, topic, partition, value, key=b"k"):
    """Produces one record in its own batch; returns its delivery error code (None if none)."""
    outcome = []
    producer.produce(topic, value=value, key=key, partition=partition,
                     on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(TIMEOUT)
    assert len(outcome) == 1
    return outcome[0].code() if outcome[0] is not None else None


def watermarks(broker, topic, partition):
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "watermarks"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT)
    finally:
        c.close()


def consume_from(broker, topic, partition, offset, expected):
    """Records (offset, value) from `offset` with auto.offset.reset=error, and the first error."""
    c = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "reader",
                  "auto.offset.reset": "error", "enable.auto.commit": False})
    records, error = [], None
    try:
        c.assign([TopicPartition(topic, partition, offset)])
        for _ in range(300):
            if len(records) >= expected:
                break
            m = c.poll(0.1)
            if m is None:
                continue
            if m.error():
                error = m.error().code()
                break
            records.append((m.offset(), m.value()))
    finally:
        c.close()
    return records, error


TOPIC_CONFIGS = {
    "cleanup.policy": "delete",
    "retention.ms": "3600000",
    "retention.bytes": "1048576",
    "max.message.bytes": "65536",
    "min.insync.replicas": "1",
    "message.timestamp.type": "LogAppendTime",
}


def test_create_topic_with_configs_then_describe(broker):
    admin = admin_for(broker)
    assert create(admin, NewTopic("orders", 3, 1, config=TOPIC_CONFIGS)) == {"orders": None}
    assert partition_count(admin, "orders") == 3
    configs = describe(admin, "orders")
    for name, value in TOPIC_CONFIGS.items():
        entry = configs[name]
        assert entry.value == value, name
        assert entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value, name
        assert not entry.is_default and not entry.is_read_only, name
    synonyms = configs["retention.ms"].synonyms
    assert [(s.name, s.value, s.source) for s in synonyms.values()] == [
        ("retention.ms", "3600000", ConfigSource.DYNAMIC_TOPIC_CONFIG.value),
        ("log.retention.ms", "-1", ConfigSource.DEFAULT_CONFIG.value)]
    assert configs["segment.bytes"].value == "1073741824"
    assert configs["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    assert configs["segment.bytes"].is_default


def test_create_topic_errors(broker):
    admin = admin_for(broker)
    assert create(admin, NewTopic("taken", 1, 1)) == {"taken": None}
    outcome = create(admin,
                     NewTopic("taken", 1, 1),
                     NewTopic("zero", 0, 1),
                     NewTopic("replicated", 1, broker.brokers + 1),
                     NewTopic("bad name!", 1, 1),
                     NewTopic("unknown-config", 1, 1, config={"no.such.config": "1"}),
                     NewTopic("bad-value", 1, 1, config={"max.message.bytes": "big"}),
                     NewTopic("ok", 2, 1))
    assert outcome == {
        "taken": KafkaError.TOPIC_ALREADY_EXISTS,
        "zero": KafkaError.INVALID_PARTITIONS,
        "replicated": KafkaError.INVALID_REPLICATION_FACTOR,
        "bad name!": KafkaError.TOPIC_EXCEPTION,
        "unknown-config": KafkaError.INVALID_CONFIG,
        "bad-value": KafkaError.INVALID_CONFIG,
        "ok": None,
    }
    topics = admin.list_topics(timeout=TIMEOUT).topics
    assert "ok" in topics and "zero" not in topics and "unknown-config" not in topics

    # validate_only: the same answers, nothing created.
    assert create(admin, NewTopic("dry-run", 4, 1), validate_only=True) == {"dry-run": None}
    assert create(admin, NewTopic("dry-run", 1, broker.brokers + 1), validate_only=True) == {
        "dry-run": KafkaError.INVALID_REPLICATION_FACTOR}
    assert partition_count(admin, "dry-run") is None


def test_describe_broker_and_unknown_topic(broker):
    admin = admin_for(broker)
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = result(admin.describe_configs([resource])[resource])
    assert configs["broker.id"].value == "1"
    assert configs["broker.id"].is_read_only
    assert configs["message.max.bytes"].value == "1048588"
    assert describe(admin, "no-such-topic") == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_alter_configs_take_effect(broker):
    admin = admin_for(broker)
    assert create(admin, NewTopic("limits", 1, 1, config={"max.message.bytes": "1024",
                                                        "segment.ms": "100000"})) == {
        "limits": None}
    producer = producer_for(broker)
    assert produce(producer, "limits", 0, b"x" * 2000) == KafkaError.MSG_SIZE_TOO_LARGE
    for i in range(20):
        assert produce(producer, "limits", 0, b"v%d" % i) is None
    assert watermarks(broker, "limits", 0) == (0, 20)

    # AlterConfigs replaces the whole set: segment.ms returns to its default.
    assert alter(admin, "limits", {"max.message.bytes": "4096", "retention.bytes": "300"}) is None
    configs = describe(admin, "limits")
    assert configs["max.message.bytes"].value == "4096"
    assert configs["retention.bytes"].value == "300"
    assert configs["segment.ms"].value == "604800000"
    assert configs["segment.ms"].source == ConfigSource.DEFAULT_CONFIG.value
    # retention.bytes: the oldest whole batches went as soon as the config changed.
    low, high = watermarks(broker, "limits", 0)
    assert 0 < low < 20 and high == 20
    records, error = consume_from(broker, "limits", 0, 0, 1)
    assert error == KafkaError._AUTO_OFFSET_RESET and records == []
    records, error = consume_from(broker, "limits", 0, low, 20 - low)
    assert error is None
    assert records == [(i, b"v%d" % i) for i in range(low, 20)]
    # max.message.bytes: the large record now fits.
    assert produce(producer, "limits", 0, b"x" * 2000) is None

    assert alter(admin, "limits", {"bogus.config": "1"}) == KafkaError.INVALID_CONFIG
    assert alter(admin, "limits", {"retention.ms": "-5"}) == KafkaError.INVALID_CONFIG
    assert alter(admin, "missing", {"retention.ms": "1"}) == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert describe(admin, "limits")["max.message.bytes"].value == "4096"


def test_create_partitions(broker):
    admin = admin_for(broker)
    assert create(admin, NewTopic("grow", 2, 1)) == {"grow": None}
    futures = admin.create_partitions([NewPartitions("grow", 5)], operation_timeout=TIMEOUT)
    assert result(futures["grow"]) is None
    assert partition_count(admin, "grow") == 5
    assert produce(producer_for(broker), "grow", 4, b"in partition 4") is None
    assert watermarks(broker, "grow", 4) == (0, 1)
    for total, code in ((3, KafkaError.INVALID_PARTITIONS), (5, KafkaError.INVALID_PARTITIONS)):
        futures = admin.create_partitions([NewPartitions("grow", total)])
        assert result(futures["grow"]) == code
    futures = admin.create_partitions([NewPartitions("absent", 3)])
    assert result(futures["absent"]) == KafkaError.UNKNOWN_TOPIC_OR_PART
    # A replica on a broker the cluster does not have.
    futures = admin.create_partitions([NewPartitions("grow", 6,
                                                     replica_assignment=[[broker.brokers + 1]])])
    assert result(futures["grow"]) == KafkaError.INVALID_REPLICA_ASSIGNMENT
    assert partition_count(admin, "grow") == 5


def test_delete_records(broker):
    admin = admin_for(broker)
    assert create(admin, NewTopic("trim", 2, 1)) == {"trim": None}
    producer = producer_for(broker)
    for i in range(10):
        assert produce(producer, "trim", 0, b"v%d" % i) is None
    for i in range(3):
        assert produce(producer, "trim", 1, b"w%d" % i) is None

    assert kafka_raw.delete_records(broker.bootstrap_servers, "trim", {0: 4, 1: -1}) == {
        0: (0, 4), 1: (0, 3)}
    assert watermarks(broker, "trim", 0) == (4, 10)
    assert watermarks(broker, "trim", 1) == (3, 3)
    records, error = consume_from(broker, "trim", 0, 0, 1)
    assert error == KafkaError._AUTO_OFFSET_RESET and records == []
    records, error = consume_from(broker, "trim", 0, 4, 6)
    assert error is None
    assert records == [(i, b"v%d" % i) for i in range(4, 10)]

    # Above the high watermark: OFFSET_OUT_OF_RANGE (1); unknown partition (3); below the
    # start: nothing changes.
    assert kafka_raw.delete_records(broker.bootstrap_servers, "trim", {0: 11, 7: 0}) == {
        0: (1, -1), 7: (3, -1)}
    assert kafka_raw.delete_records(broker.bootstrap_servers, "trim", {0: 2}) == {0: (0, 4)}


def test_delete_and_recreate_topic(broker):
    admin = admin_for(broker)
    assert create(admin, NewTopic("doomed", 2, 1, config={"retention.ms": "5000"})) == {
        "doomed": None}
    producer = producer_for(broker)
    for i in range(5):
        assert produce(producer, "doomed", 0, b"old%d" % i) is None

    futures = admin.delete_topics(["doomed", "never-was"], operation_timeout=TIMEOUT)
    assert {t: result(f) for t, f in futures.items()} == {
        "doomed": None, "never-was": KafkaError.UNKNOWN_TOPIC_OR_PART}
    assert partition_count(admin, "doomed") is None

    assert create(admin, NewTopic("doomed", 1, 1)) == {"doomed": None}
    assert partition_count(admin, "doomed") == 1
    assert watermarks(broker, "doomed", 0) == (0, 0)
    assert describe(admin, "doomed")["retention.ms"].value == "-1"
    assert produce(producer_for(broker), "doomed", 0, b"new") is None
    records, error = consume_from(broker, "doomed", 0, 0, 1)
    assert error is None and records == [(0, b"new")]


def test_admin_changes_survive_restart(broker_factory, tmp_path):
    data = str(tmp_path / "data")
    b = broker_factory(data_dir=data)
    admin = admin_for(b)
    assert create(admin, NewTopic("kept", 1, 1, config={"max.message.bytes": "2048"}),
                  NewTopic("gone", 1, 1)) == {"kept": None, "gone": None}
    producer = producer_for(b)
    for i in range(6):
        assert produce(producer, "kept", 0, b"v%d" % i) is None
    assert result(admin.create_partitions([NewPartitions("kept", 3)])["kept"]) is None
    assert alter(admin, "kept", {"max.message.bytes": "4096", "retention.ms": "86400000"}) is None
    assert kafka_raw.delete_records(b.bootstrap_servers, "kept", {0: 2}) == {0: (0, 2)}
    assert result(admin.delete_topics(["gone"])["gone"]) is None
    assert b.stop() == 0

    b2 = broker_factory(data_dir=data)
    admin = admin_for(b2)
    assert partition_count(admin, "kept") == 3
    assert partition_count(admin, "gone") is None
    configs = describe(admin, "kept")
    assert configs["max.message.bytes"].value == "4096"
    assert configs["retention.ms"].value == "86400000"
    assert watermarks(b2, "kept", 0) == (2, 6)
    assert produce(producer_for(b2), "kept", 1, b"x" * 5000) == KafkaError.MSG_SIZE_TOO_LARGE
