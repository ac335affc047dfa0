"""kafka-python's KafkaAdminClient against the exactly-broker binary: create and delete topics
(CreateTopics v3, DeleteTopics v3), with configs and the errors Kafka answers, and its other
admin calls (DescribeConfigs v2, AlterConfigs v1, CreatePartitions v1). IncrementalAlterConfigs,
which no Python client here sends, goes through kafka-python's protocol layer (kafka_raw.py).
"""
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import (InvalidConfigurationError, InvalidPartitionsError,
                          InvalidReplicationFactorError, InvalidTopicError,
                          TopicAlreadyExistsError, UnknownTopicOrPartitionError)

import kafka_raw

# Kafka's config sources and error codes, as the responses carry them.
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5
NONE, INVALID_CONFIG, INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION = 0, 40, 42, 3


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                              client_id="exactly-interop-admin")
    yield client
    client.close()


def topic_errors(response):
    return {name: code for name, code, *_ in response.topic_errors}


def partition_counts(admin):
    return {t["topic"]: len(t["partitions"]) for t in admin.describe_topics()}


def describe(admin, topic, include_synonyms=False):
    [response] = admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, topic)], include_synonyms=include_synonyms)
    [(error_code, _, _, name, entries)] = response.resources
    assert name == topic
    return error_code, {e[0]: e for e in entries}


def end_offsets(broker, topic, partitions):
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers)
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        return ([consumer.beginning_offsets(tps)[tp] for tp in tps],
                [consumer.end_offsets(tps)[tp] for tp in tps])
    finally:
        consumer.close()


def test_create_topics_with_configs(admin, broker):
    response = admin.create_topics([
        NewTopic("events", 4, 1, topic_configs={"retention.ms": "60000",
                                                "cleanup.policy": "compact,delete",
                                                "max.message.bytes": "2048"}),
        NewTopic("plain", 1, 1)])
    assert topic_errors(response) == {"events": NONE, "plain": NONE}
    counts = partition_counts(admin)
    assert counts["events"] == 4 and counts["plain"] == 1

    error_code, configs = describe(admin, "events", include_synonyms=True)
    assert error_code == NONE
    name, value, read_only, source, sensitive, synonyms = configs["retention.ms"]
    assert (value, read_only, source, sensitive) == ("60000", False, DYNAMIC_TOPIC_CONFIG, False)
    assert synonyms == [("retention.ms", "60000", DYNAMIC_TOPIC_CONFIG),
                        ("log.retention.ms", "-1", DEFAULT_CONFIG)]
    assert configs["cleanup.policy"][1] == "compact,delete"
    assert configs["max.message.bytes"][1] == "2048"
    assert configs["segment.ms"][1:4] == ("604800000", False, DEFAULT_CONFIG)

    # validate_only: accepted, nothing created.
    response = admin.create_topics([NewTopic("dry", 3, 1)], validate_only=True)
    assert topic_errors(response) == {"dry": NONE}
    assert "dry" not in partition_counts(admin)


# Each case a topic for a cluster of `brokers` brokers, and the error Kafka answers.
@pytest.mark.parametrize("make_topic, error", [
    (lambda brokers: NewTopic("events", 1, 1), TopicAlreadyExistsError),
    (lambda brokers: NewTopic("no-partitions", 0, 1), InvalidPartitionsError),
    # One replica more than there are brokers.
    (lambda brokers: NewTopic("replicated", 1, brokers + 1), InvalidReplicationFactorError),
    (lambda brokers: NewTopic("bad/name", 1, 1), InvalidTopicError),
    (lambda brokers: NewTopic("x" * 250, 1, 1), InvalidTopicError),
    (lambda brokers: NewTopic("unknown-config", 1, 1, topic_configs={"retention.hours": "1"}),
     InvalidConfigurationError),
    (lambda brokers: NewTopic("bad-config", 1, 1, topic_configs={"cleanup.policy": "sometimes"}),
     InvalidConfigurationError),
], ids=["exists", "no-partitions", "replicated", "bad-name", "long-name", "unknown-config",
        "bad-config"])
def test_create_topics_errors(admin, broker, make_topic, error):
    topic = make_topic(broker.brokers)
    admin.create_topics([NewTopic("events", 1, 1)])
    with pytest.raises(error):
        admin.create_topics([topic])
    assert topic.name == "events" or topic.name not in partition_counts(admin)


def test_delete_topics_then_recreate(admin, broker):
    admin.create_topics([NewTopic("doomed", 2, 1, topic_configs={"retention.ms": "1000"})])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    for i in range(5):
        producer.send("doomed", value=b"old%d" % i, partition=i % 2)
    producer.flush()
    producer.close()
    assert end_offsets(broker, "doomed", [0, 1]) == ([0, 0], [3, 2])

    response = admin.delete_topics(["doomed"])
    assert dict(response.topic_error_codes) == {"doomed": NONE}
    assert "doomed" not in partition_counts(admin)
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.delete_topics(["doomed"])

    # The same name again, right away: a new, empty topic with default configs.
    response = admin.create_topics([NewTopic("doomed", 3, 1)])
    assert topic_errors(response) == {"doomed": NONE}
    assert partition_counts(admin)["doomed"] == 3
    assert end_offsets(broker, "doomed", [0, 1, 2]) == ([0, 0, 0], [0, 0, 0])
    assert describe(admin, "doomed")[1]["retention.ms"][1] == "-1"


def test_alter_configs_and_create_partitions(admin, broker):
    admin.create_topics([NewTopic("tuned", 1, 1, topic_configs={"segment.ms": "100000"})])
    [response] = [admin.alter_configs([ConfigResource(
        ConfigResourceType.TOPIC, "tuned", configs={"retention.bytes": "1000"})])]
    assert [r[0] for r in response.resources] == [NONE]
    _, configs = describe(admin, "tuned")
    assert configs["retention.bytes"][1] == "1000"
    assert configs["segment.ms"][1:4] == ("604800000", False, DEFAULT_CONFIG)

    response = admin.alter_configs([
        ConfigResource(ConfigResourceType.TOPIC, "tuned", configs={"flush.ms": "soon"}),
        ConfigResource(ConfigResourceType.TOPIC, "absent", configs={"flush.ms": "1"})])
    assert [r[0] for r in response.resources] == [INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION]

    response = admin.create_partitions({"tuned": NewPartitions(4)})
    assert topic_errors(response) == {"tuned": NONE}
    assert partition_counts(admin)["tuned"] == 4
    with pytest.raises(InvalidPartitionsError):
        admin.create_partitions({"tuned": NewPartitions(2)})


def test_describe_broker_configs(admin):
    [response] = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")])
    [(error_code, _, _, name, entries)] = response.resources
    assert (error_code, name) == (NONE, "1")
    configs = {e[0]: e for e in entries}
    assert configs["broker.id"][1:4] == ("1", True, STATIC_BROKER_CONFIG)
    assert configs["auto.create.topics.enable"][1] == "true"


def test_incremental_alter_configs(admin, broker):
    admin.create_topics([NewTopic("inc", 1, 1, topic_configs={"segment.ms": "100000"})])
    servers = broker.bootstrap_servers
    assert kafka_raw.incremental_alter_configs(servers, "inc", [
        ("retention.ms", kafka_raw.SET, "7000"),
        ("cleanup.policy", kafka_raw.APPEND, "compact")]) == NONE
    _, configs = describe(admin, "inc")
    assert configs["retention.ms"][1] == "7000"
    assert configs["cleanup.policy"][1] == "delete,compact"
    assert configs["segment.ms"][1] == "100000"

    assert kafka_raw.incremental_alter_configs(servers, "inc", [
        ("retention.ms", kafka_raw.DELETE, None),
        ("cleanup.policy", kafka_raw.SUBTRACT, "delete")]) == NONE
    _, configs = describe(admin, "inc")
    assert configs["retention.ms"][1:4] == ("-1", False, DEFAULT_CONFIG)
    assert configs["cleanup.policy"][1] == "compact"

    assert kafka_raw.incremental_alter_configs(
        servers, "inc", [("retention.ms", kafka_raw.APPEND, "1")]) == INVALID_CONFIG
    assert kafka_raw.incremental_alter_configs(
        servers, "inc", [("no.such.config", kafka_raw.SET, "1")]) == INVALID_CONFIG
    assert kafka_raw.incremental_alter_configs(
        servers, "absent", [("retention.ms", kafka_raw.SET, "1")]) == UNKNOWN_TOPIC_OR_PARTITION
    assert kafka_raw.incremental_alter_configs(
        servers, "inc", [("retention.ms", kafka_raw.SET, "1")], validate_only=True) == NONE
    assert describe(admin, "inc")[1]["retention.ms"][1] == "-1"
