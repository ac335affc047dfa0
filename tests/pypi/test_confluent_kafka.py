"""confluent-kafka from PyPI (its wheel's own librdkafka) against the broker: produce and consume,
eager and cooperative groups, idempotence, transactions read back at both isolation levels,
send_offsets_to_transaction, the Admin API, and what a KIP-848 consumer gets."""
import functools
import logging
import warnings

import confluent_kafka
import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, Producer, \
    TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, \
    NewPartitions, NewTopic, OffsetSpec, ResourceType

from conftest import api_versions, now_ms, unique, wait_for_value, wait_until

TIMEOUT = 30  # seconds, for each blocking client call


def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def create_topic(broker, partitions):
    name, client = unique("ck"), admin(broker)  # the client must outlive its futures
    client.create_topics([NewTopic(name, partitions, 1)])[name].result(TIMEOUT)
    # Kafka's broker learns of the topic from the controller a moment after the answer.
    wait_until(lambda: len(client.list_topics(name, timeout=TIMEOUT).topics[name].partitions)
               == partitions, f"{name} in the metadata")
    return name


def produce(broker, topic, records, **conf):
    """Sends (partition, value[, timestamp]) records; returns their (partition, offset) in
    order, each delivery checked."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, **conf})
    delivered = [None] * len(records)

    def on_delivery(index, err, msg):
        assert err is None, err
        delivered[index] = (msg.partition(), msg.offset())

    for index, (partition, value, *timestamp) in enumerate(records):
        producer.produce(topic, value=value, partition=partition,
                         on_delivery=functools.partial(on_delivery, index),
                         timestamp=timestamp[0] if timestamp else 0)
    assert producer.flush(TIMEOUT) == 0
    assert None not in delivered
    return delivered


def read_to_end(consumer, partitions, what):
    """Polls a subscribed consumer (enable.partition.eof) until it is at the end of each of its
    `partitions` partitions (for read_committed, at the last stable offset): the messages, in
    the order read."""
    messages, at_end = [], set()

    def pump():
        msg = consumer.poll(0.2)
        if msg is None:
            return
        if msg.error():
            assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error()
            at_end.add(msg.partition())
        else:
            at_end.discard(msg.partition())
            messages.append(msg)

    wait_until(lambda: len(at_end) == partitions,
               lambda: f"{what}: read {len(messages)}, at the end of partitions "
                       f"{sorted(at_end)} of {partitions}", pump)
    return messages


def consume_to_end(broker, topic, partitions, **conf):
    """Every record of `topic` from the start, in a group of its own."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("g"),
                         "auto.offset.reset": "earliest", "enable.partition.eof": True,
                         "enable.auto.commit": False, **conf})
    consumer.subscribe([topic])
    try:
        return read_to_end(consumer, partitions, topic)
    finally:
        consumer.close()


def test_produce_consume(broker):
    topic = create_topic(broker, 3)
    records = [(i % 3, b"v%d" % i) for i in range(30)]
    delivered = produce(broker, topic, records)
    # Each partition's records got consecutive offsets from 0, in the order sent.
    for p in range(3):
        assert [o for (part, o) in delivered if part == p] == list(range(10))
    messages = consume_to_end(broker, topic, 3)
    assert sorted((m.partition(), m.offset(), m.value()) for m in messages) == \
        sorted((p, o, v) for (p, v), (_, o) in zip(records, delivered))


def group_member(broker, group, topic, strategy, events, name):
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                         "partition.assignment.strategy": strategy,
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    # The callbacks record what the group protocol did; the client then (incrementally, for
    # cooperative) assigns or revokes by itself.
    consumer.subscribe(
        [topic],
        on_assign=lambda c, parts: events.append((name, "assign", partitions_of(parts))),
        on_revoke=lambda c, parts: events.append((name, "revoke", partitions_of(parts))))
    return consumer


def partitions_of(topic_partitions):
    return sorted(tp.partition for tp in topic_partitions)


def run_group(broker, strategy):
    """Two members of one group on 4 partitions: the first gets all, then they split 2/2, then
    the first gets all back when the second leaves. Returns the rebalance callbacks' events."""
    topic, group, events = create_topic(broker, 4), unique("g"), []
    every = [0, 1, 2, 3]
    c1 = group_member(broker, group, topic, strategy, events, "c1")
    wait_until(lambda: partitions_of(c1.assignment()) == every,
               lambda: f"c1 alone owns every partition; events {events}", lambda: c1.poll(0.1))
    c2 = group_member(broker, group, topic, strategy, events, "c2")

    def split():
        a1, a2 = partitions_of(c1.assignment()), partitions_of(c2.assignment())
        return len(a1) == len(a2) == 2 and sorted(a1 + a2) == every

    wait_until(split, lambda: f"c1, c2 own 2 partitions each; events {events}",
               lambda: (c1.poll(0.1), c2.poll(0.1)))
    moved = partitions_of(c2.assignment())
    c2.close()  # LeaveGroup
    wait_until(lambda: partitions_of(c1.assignment()) == every,
               lambda: f"c1 owns every partition again; events {events}", lambda: c1.poll(0.1))
    history = list(events)  # before close() revokes what c1 has
    c1.close()
    return history, moved


def test_eager_group(broker):
    events, moved = run_group(broker, "range")
    # Eager: c1 gave up everything when c2 joined, then got back what c2 did not get.
    kept = sorted({0, 1, 2, 3} - set(moved))
    c1 = [e for e in events if e[0] == "c1"]
    revoked_all = ("c1", "revoke", [0, 1, 2, 3])
    assert revoked_all in c1 and ("c1", "assign", kept) in c1[c1.index(revoked_all):], events
    assert ("c2", "assign", moved) in events, events


def test_cooperative_group(broker):
    events, moved = run_group(broker, "cooperative-sticky")
    # Cooperative: c1 was revoked only what moved to c2, and later given only that back (the
    # client also reports empty increments: left out).
    assert [e for e in events if e[0] == "c1" and e[2]] == [
        ("c1", "assign", [0, 1, 2, 3]), ("c1", "revoke", moved), ("c1", "assign", moved)], events


def test_idempotent_producer(broker):
    topic = create_topic(broker, 1)
    values = [b"i%d" % i for i in range(100)]
    delivered = produce(broker, topic, [(0, v) for v in values],
                        **{"enable.idempotence": True, "max.in.flight": 5})
    assert delivered == [(0, i) for i in range(100)]
    assert [m.value() for m in consume_to_end(broker, topic, 1)] == values


def transactional_producer(broker):
    producer = Producer({"bootstrap.servers": broker.bootstrap,
                         "transactional.id": unique("tid"), "transaction.timeout.ms": 30000})
    producer.init_transactions(TIMEOUT)
    return producer


def test_transactions_read_committed(broker):
    topic = create_topic(broker, 1)
    producer = transactional_producer(broker)
    for prefix, commit in (("c", True), ("a", False), ("l", True)):
        producer.begin_transaction()
        for i in range(5):
            producer.produce(topic, value=f"{prefix}{i}".encode(), partition=0)
        if commit:
            producer.commit_transaction(TIMEOUT)
        else:
            producer.flush(TIMEOUT)
            producer.abort_transaction(TIMEOUT)
    # 15 records and 3 markers: committed 0-4 (marker 5), aborted 6-10 (11), committed 12-16 (17).
    # Kafka writes a transaction's markers after EndTxn answers: wait for the last one.
    watcher = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("g")})
    wait_for_value(lambda: watcher.get_watermark_offsets(TopicPartition(topic, 0), TIMEOUT),
                   (0, 18), "watermarks")
    watcher.close()
    committed = consume_to_end(broker, topic, 1, **{"isolation.level": "read_committed"})
    assert [(m.offset(), m.value()) for m in committed] == \
        [(o, b"c%d" % o) for o in range(5)] + [(12 + i, b"l%d" % i) for i in range(5)]
    everything = consume_to_end(broker, topic, 1, **{"isolation.level": "read_uncommitted"})
    assert [m.offset() for m in everything] == \
        list(range(0, 5)) + list(range(6, 11)) + list(range(12, 17))
    assert [m.value() for m in everything][5:10] == [b"a%d" % i for i in range(5)]


def test_send_offsets_to_transaction(broker):
    source, sink, group = create_topic(broker, 2), create_topic(broker, 1), unique("g")
    produce(broker, source, [(i % 2, b"s%d" % i) for i in range(10)])
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "enable.partition.eof": True, "isolation.level": "read_committed"})
    consumer.subscribe([source])
    read = read_to_end(consumer, 2, source)
    assert len(read) == 10
    producer = transactional_producer(broker)
    sources = [TopicPartition(source, p) for p in (0, 1)]

    def copy_in_transaction(commit):
        producer.begin_transaction()
        for msg in read:
            producer.produce(sink, value=msg.value(), partition=0)
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), TIMEOUT)
        (producer.commit_transaction if commit else producer.abort_transaction)(TIMEOUT)

    copy_in_transaction(commit=False)  # its offsets must not count
    assert [tp.offset for tp in consumer.committed(sources, TIMEOUT)] == \
        [confluent_kafka.OFFSET_INVALID] * 2
    copy_in_transaction(commit=True)
    # Kafka applies a transaction's offsets with its markers, after EndTxn answers.
    wait_until(lambda: [tp.offset for tp in consumer.committed(sources, TIMEOUT)] == [5, 5],
               "the transaction's offsets committed")
    consumer.close()
    copied = consume_to_end(broker, sink, 1, **{"isolation.level": "read_committed"})
    assert sorted(m.value() for m in copied) == sorted(b"s%d" % i for i in range(10))


def configs_set(client, topic):
    """The topic's own values (not defaults) of the configs the test changes."""
    resource = ConfigResource(ResourceType.TOPIC, topic)
    configs = client.describe_configs([resource])[resource].result(TIMEOUT)
    assert configs["cleanup.policy"].value == "delete"
    return {name: configs[name].value for name in ("retention.ms", "max.message.bytes")
            if not configs[name].is_default}


def test_admin_topics_and_configs(broker):
    client = admin(broker)
    topic = create_topic(broker, 2)

    def partitions():
        described = client.describe_topics(TopicCollection([topic]))[topic].result(TIMEOUT)
        return [p.id for p in described.partitions]

    assert partitions() == [0, 1]
    client.create_partitions([NewPartitions(topic, 3)])[topic].result(TIMEOUT)
    wait_for_value(partitions, [0, 1, 2], "partitions after CreatePartitions")

    assert configs_set(client, topic) == {}
    # AlterConfigs replaces the topic's whole set; IncrementalAlterConfigs changes one key.
    resource = ConfigResource(ResourceType.TOPIC, topic,
                              set_config={"retention.ms": "86400000", "max.message.bytes": "500000"})
    with warnings.catch_warnings():  # deprecated in favour of the incremental one, still used
        warnings.simplefilter("ignore", DeprecationWarning)
        client.alter_configs([resource])[resource].result(TIMEOUT)
    wait_for_value(lambda: configs_set(client, topic),
                   {"retention.ms": "86400000", "max.message.bytes": "500000"},
                   "configs after AlterConfigs")
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("max.message.bytes", None, incremental_operation=AlterConfigOpType.DELETE)])
    client.incremental_alter_configs([resource])[resource].result(TIMEOUT)
    wait_for_value(lambda: configs_set(client, topic), {"retention.ms": "3600000"},
                   "configs after IncrementalAlterConfigs")

    # DeleteRecords moves the log start; a consumer from the start then reads what is left.
    produce(broker, topic, [(0, b"d%d" % i) for i in range(10)])
    deleted = client.delete_records([TopicPartition(topic, 0, 4)])
    assert [r.low_watermark for r in (f.result(TIMEOUT) for f in deleted.values())] == [4]
    earliest = client.list_offsets({TopicPartition(topic, 0): OffsetSpec.earliest()})
    assert [f.result(TIMEOUT).offset for f in earliest.values()] == [4]
    assert [m.value() for m in consume_to_end(broker, topic, 3)] == \
        [b"d%d" % i for i in range(4, 10)]

    client.delete_topics([topic])[topic].result(TIMEOUT)
    wait_until(lambda: topic not in client.list_topics(timeout=TIMEOUT).topics,
               f"{topic} gone from the metadata")


def test_admin_list_offsets(broker):
    client = admin(broker)
    topic = create_topic(broker, 1)
    base = now_ms() - 60_000
    # The largest timestamp is in the middle: max_timestamp is not simply the last record.
    produce(broker, topic, [(0, b"t0", base + 1000), (0, b"t1", base + 3000),
                            (0, b"t2", base + 2000)])
    tp = TopicPartition(topic, 0)

    def ask(spec):
        result = client.list_offsets({tp: spec})[tp].result(TIMEOUT)
        return result.offset, result.timestamp

    assert ask(OffsetSpec.earliest())[0] == 0
    assert ask(OffsetSpec.latest())[0] == 3
    assert ask(OffsetSpec.for_timestamp(base + 1500)) == (1, base + 3000)
    assert ask(OffsetSpec.for_timestamp(base + 500)) == (0, base + 1000)
    assert ask(OffsetSpec.for_timestamp(base + 4000))[0] == -1
    assert ask(OffsetSpec.max_timestamp()) == (1, base + 3000)


def test_admin_groups(broker):
    client = admin(broker)
    topic, group = create_topic(broker, 2), unique("g")
    produce(broker, topic, [(p, b"x") for p in (0, 0, 0, 1, 1)])
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                         "client.id": "ck-admin-member", "enable.auto.commit": False,
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    consumer.subscribe([topic])
    wait_until(lambda: len(consumer.assignment()) == 2, "the member's assignment",
               lambda: consumer.poll(0.1))
    consumer.commit(offsets=[TopicPartition(topic, 0, 2), TopicPartition(topic, 1, 1)],
                    asynchronous=False)

    description = client.describe_consumer_groups([group])[group].result(TIMEOUT)
    assert description.state == confluent_kafka.ConsumerGroupState.STABLE
    assert [m.client_id for m in description.members] == ["ck-admin-member"]
    assert sorted((tp.topic, tp.partition) for tp in
                  description.members[0].assignment.topic_partitions) == [(topic, 0), (topic, 1)]

    def listed(**filters):
        result = client.list_consumer_groups(request_timeout=TIMEOUT, **filters).result()
        return {g.group_id: g for g in result.valid}

    assert listed()[group].state == confluent_kafka.ConsumerGroupState.STABLE
    # A type filter (ListGroups v5): every group on either broker here is classic.
    classic, consumer_type = confluent_kafka.ConsumerGroupType.CLASSIC, \
        confluent_kafka.ConsumerGroupType.CONSUMER
    assert group in listed(types={classic})
    assert group not in listed(types={consumer_type})
    assert group not in listed(states={confluent_kafka.ConsumerGroupState.EMPTY})
    consumer.close()
    # Empty once its only member has left (LeaveGroup).
    wait_for_value(lambda: [(g.state, g.type) for g in listed(
        states={confluent_kafka.ConsumerGroupState.EMPTY}).values() if g.group_id == group],
        [(confluent_kafka.ConsumerGroupState.EMPTY, classic)], "the group's listing")

    def offsets():
        request = [ConsumerGroupTopicPartitions(group)]
        result = client.list_consumer_group_offsets(request)[group].result(TIMEOUT)
        return sorted((tp.partition, tp.offset) for tp in result.topic_partitions)

    assert offsets() == [(0, 2), (1, 1)]
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 3)])]
    client.alter_consumer_group_offsets(request)[group].result(TIMEOUT)
    assert offsets() == [(0, 3), (1, 1)]
    # confluent-kafka has no OffsetDelete; it deletes the whole group.
    client.delete_consumer_groups([group])[group].result(TIMEOUT)
    assert group not in listed()


HEARTBEAT_UNSUPPORTED = "ConsumerGroupHeartbeatRequest not supported by broker"


class LogLines(logging.Handler):
    """Keeps the messages of librdkafka's log (handed to Python during poll())."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_kip848_consumer_protocol(broker):
    """What a `group.protocol=consumer` (KIP-848) consumer gets. librdkafka 2.16 needs
    ConsumerGroupHeartbeat (key 68) v1; the bundled broker offers no version of it, and Kafka
    3.9.1 only v0 (with its default settings, and with the consumer protocol enabled too). So
    librdkafka finds no usable coordinator and the consumer waits for ever with no assignment
    and no error, poll() returning nothing: only its debug log says why. A classic consumer of
    the same topic, polled alongside, gets its records meanwhile."""
    apis = api_versions(broker.bootstrap)
    if broker.kind == "bundled":
        assert 68 not in apis and 69 not in apis, apis  # ConsumerGroupHeartbeat, ...Describe
    elif apis.get(68, (0, -1))[1] >= 1:
        pytest.skip(f"this Kafka offers ConsumerGroupHeartbeat v{apis[68][1]}: KIP-848 works")
    assert apis.get(68, (0, -1))[1] < 1, apis

    topic = create_topic(broker, 2)
    produce(broker, topic, [(p, b"k") for p in (0, 1, 0, 1)])
    log = LogLines()
    logger = logging.getLogger(f"librdkafka-{topic}")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(log)
    logger.propagate = False
    errors = []
    kip848 = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("g"),
                       "group.protocol": "consumer", "auto.offset.reset": "earliest",
                       "debug": "cgrp", "logger": logger, "error_cb": errors.append})
    kip848.subscribe([topic])
    classic = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("g"),
                        "auto.offset.reset": "earliest"})
    classic.subscribe([topic])
    got = {"kip848": [], "classic": []}

    def pump():
        for name, consumer in (("kip848", kip848), ("classic", classic)):
            msg = consumer.poll(0.1)
            if msg is not None:
                got[name].append(msg.error() or msg.value())

    wait_until(lambda: len(got["classic"]) == 4 and
               any(HEARTBEAT_UNSUPPORTED in line for line in log.lines),
               lambda: f"the classic consumer's 4 records ({got}) and librdkafka's debug line "
                       f"{HEARTBEAT_UNSUPPORTED!r}", pump)
    assert (got["kip848"], kip848.assignment(), errors) == ([], [], [])
    classic.close()
    kip848.close()
