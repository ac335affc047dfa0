"""aiokafka (asyncio, pure Python) against the broker: produce and consume, an eager group,
idempotence, transactions read back at both isolation levels, send_offsets_to_transaction, and
what its admin client offers.

Not here, because aiokafka 0.14 has none of them: a cooperative rebalance (its assignors, range,
round robin and sticky, are all eager), IncrementalAlterConfigs, altering or deleting a group's
offsets and deleting groups from the admin client, the transaction admin calls, and ListOffsets'
largest timestamp (-3). Offsets by time and the
log's ends are asked through the consumer, which is where aiokafka has them.
"""
import asyncio
import functools

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, \
    TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

from conftest import async_wait_for_value, async_wait_until, now_ms, unique


def synchronous(test):
    """Runs an async test in its own event loop (no pytest plugin needed)."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        asyncio.run(test(*args, **kwargs))
    return run


async def started(client):
    await client.start()
    return client


async def create_topic(broker, partitions):
    admin = await started(AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap))
    try:
        name = unique("ak")
        await admin.create_topics([NewTopic(name, partitions, 1)])

        # Kafka's broker learns of the topic from the controller a moment after the answer.
        async def known():
            [described] = await admin.describe_topics([name])
            return described["error_code"] == 0 and len(described["partitions"]) == partitions

        await async_wait_until(known, f"{name} in the metadata")
        return name
    finally:
        await admin.close()


async def produce(broker, topic, records, **conf):
    """Sends (partition, value[, timestamp ms]) records; returns their (partition, offset) in
    order, each delivery checked."""
    producer = await started(AIOKafkaProducer(bootstrap_servers=broker.bootstrap,
                                              linger_ms=5, **conf))
    try:
        futures = [await producer.send(topic, value=value, partition=partition,
                                       timestamp_ms=timestamp[0] if timestamp else None)
                   for partition, value, *timestamp in records]
        delivered = []
        for future in futures:
            metadata = await future
            delivered.append((metadata.partition, metadata.offset))
        return delivered
    finally:
        await producer.stop()


async def consume_to_end(broker, topic, partitions, **conf):
    """Every record of `topic` from the start, up to each partition's end offset when called
    (with no transaction open, the same at both isolation levels), in the order read."""
    consumer = await started(AIOKafkaConsumer(
        topic, bootstrap_servers=broker.bootstrap, group_id=unique("g"),
        auto_offset_reset="earliest", enable_auto_commit=False, **conf))
    try:
        parts = [TopicPartition(topic, p) for p in range(partitions)]
        ends = await consumer.end_offsets(parts)
        records = []

        async def pump():
            for batch in (await consumer.getmany(timeout_ms=200)).values():
                records.extend(batch)

        async def at_end():
            return len(consumer.assignment()) == partitions and \
                all([await consumer.position(tp) >= ends[tp] for tp in parts])

        await async_wait_until(at_end,
                               lambda: f"{topic}: read {len(records)}, to end offsets {ends}",
                               pump)
        return records
    finally:
        await consumer.stop()


@synchronous
async def test_produce_consume(broker):
    topic = await create_topic(broker, 3)
    records = [(i % 3, b"v%d" % i) for i in range(30)]
    delivered = await produce(broker, topic, records)
    for p in range(3):
        assert [o for (part, o) in delivered if part == p] == list(range(10))
    read = await consume_to_end(broker, topic, 3)
    assert sorted((r.partition, r.offset, r.value) for r in read) == \
        sorted((p, o, v) for (p, v), (_, o) in zip(records, delivered))


class Recorder(ConsumerRebalanceListener):
    """Records what the group protocol revoked and assigned, with the member's name."""

    def __init__(self, name, events):
        self.name, self.events = name, events

    def on_partitions_revoked(self, revoked):
        self.events.append((self.name, "revoke", sorted(tp.partition for tp in revoked)))

    def on_partitions_assigned(self, assigned):
        self.events.append((self.name, "assign", sorted(tp.partition for tp in assigned)))


@synchronous
async def test_eager_group(broker):
    """Two members of one group on 4 partitions: the first gets all, then they split 2/2, then
    the first gets all back when the second leaves."""
    topic, group, events = await create_topic(broker, 4), unique("g"), []
    every = [0, 1, 2, 3]

    async def member(name):
        consumer = await started(AIOKafkaConsumer(
            bootstrap_servers=broker.bootstrap, group_id=group,
            partition_assignment_strategy=(RangePartitionAssignor,),
            session_timeout_ms=6000, heartbeat_interval_ms=500))
        consumer.subscribe([topic], listener=Recorder(name, events))
        return consumer

    def owned(consumer):
        return sorted(tp.partition for tp in consumer.assignment())

    async def poll(*consumers):
        for consumer in consumers:
            await consumer.getmany(timeout_ms=100)

    c1 = await member("c1")
    await async_wait_until(lambda: owned(c1) == every,
                           lambda: f"c1 alone owns all; events {events}",
                           lambda: poll(c1))
    c2 = await member("c2")
    await async_wait_until(lambda: len(owned(c1)) == len(owned(c2)) == 2 and
                           sorted(owned(c1) + owned(c2)) == every,
                           lambda: f"c1, c2 own 2 partitions each; events {events}",
                           lambda: poll(c1, c2))
    moved = owned(c2)
    await c2.stop()  # LeaveGroup
    await async_wait_until(lambda: owned(c1) == every,
                           lambda: f"c1 owns all again; events {events}", lambda: poll(c1))
    await c1.stop()
    # Eager: c1 gave up everything when c2 joined, then got back what c2 did not get.
    kept = sorted({0, 1, 2, 3} - set(moved))
    c1_events = [e for e in events if e[0] == "c1"]
    revoked_all = ("c1", "revoke", [0, 1, 2, 3])
    assert revoked_all in c1_events and \
        ("c1", "assign", kept) in c1_events[c1_events.index(revoked_all):], events
    assert ("c2", "assign", moved) in events, events


@synchronous
async def test_idempotent_producer(broker):
    topic = await create_topic(broker, 1)
    values = [b"i%d" % i for i in range(100)]
    delivered = await produce(broker, topic, [(0, v) for v in values], enable_idempotence=True)
    assert delivered == [(0, i) for i in range(100)]
    assert [r.value for r in await consume_to_end(broker, topic, 1)] == values


def transactional_producer(broker):
    return started(AIOKafkaProducer(bootstrap_servers=broker.bootstrap,
                                    transactional_id=unique("tid"),
                                    transaction_timeout_ms=30000))


@synchronous
async def test_transactions_read_committed(broker):
    topic = await create_topic(broker, 1)
    producer = await transactional_producer(broker)
    try:
        for prefix, commit in (("c", True), ("a", False), ("l", True)):
            await producer.begin_transaction()
            for i in range(5):
                await producer.send(topic, value=f"{prefix}{i}".encode(), partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.flush()
                await producer.abort_transaction()
    finally:
        await producer.stop()
    # 15 records and 3 markers: committed 0-4 (marker 5), aborted 6-10 (11), committed 12-16 (17).
    watcher = await started(AIOKafkaConsumer(bootstrap_servers=broker.bootstrap))
    try:
        tp = TopicPartition(topic, 0)
        # Kafka writes a transaction's markers after EndTxn answers: wait for the last one.
        await async_wait_for_value(lambda: watcher.end_offsets([tp]), {tp: 18}, "end offsets")
    finally:
        await watcher.stop()
    committed = await consume_to_end(broker, topic, 1, isolation_level="read_committed")
    assert [(r.offset, r.value) for r in committed] == \
        [(o, b"c%d" % o) for o in range(5)] + [(12 + i, b"l%d" % i) for i in range(5)]
    everything = await consume_to_end(broker, topic, 1, isolation_level="read_uncommitted")
    assert [r.offset for r in everything] == \
        list(range(0, 5)) + list(range(6, 11)) + list(range(12, 17))
    assert [r.value for r in everything][5:10] == [b"a%d" % i for i in range(5)]


@synchronous
async def test_send_offsets_to_transaction(broker):
    source, sink, group = await create_topic(broker, 2), await create_topic(broker, 1), \
        unique("g")
    await produce(broker, source, [(i % 2, b"s%d" % i) for i in range(10)])
    consumer = await started(AIOKafkaConsumer(
        source, bootstrap_servers=broker.bootstrap, group_id=group,
        auto_offset_reset="earliest", enable_auto_commit=False,
        isolation_level="read_committed"))
    producer = await transactional_producer(broker)
    try:
        read = []

        async def pump():
            for batch in (await consumer.getmany(timeout_ms=200)).values():
                read.extend(batch)

        await async_wait_until(lambda: len(read) == 10, lambda: f"read {len(read)} of 10",
                               pump)
        sources = [TopicPartition(source, p) for p in (0, 1)]

        async def copy_in_transaction(commit):
            await producer.begin_transaction()
            for record in read:
                await producer.send(sink, value=record.value, partition=0)
            offsets = {tp: await consumer.position(tp) for tp in sources}
            await producer.send_offsets_to_transaction(offsets, group)
            await (producer.commit_transaction() if commit else producer.abort_transaction())

        await copy_in_transaction(commit=False)  # its offsets must not count
        assert [await consumer.committed(tp) for tp in sources] == [None, None]
        await copy_in_transaction(commit=True)

        async def committed():
            return [await consumer.committed(tp) for tp in sources] == [5, 5]

        # Kafka applies a transaction's offsets with its markers, after EndTxn answers.
        await async_wait_until(committed, "the transaction's offsets committed")
    finally:
        await consumer.stop()
        await producer.stop()
    copied = await consume_to_end(broker, sink, 1, isolation_level="read_committed")
    assert sorted(r.value for r in copied) == sorted(b"s%d" % i for i in range(10))


async def configs_set(admin, topic):
    """The topic's own values (not defaults) of the configs the test changes."""
    [response] = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    [resource] = response.to_object()["resources"]
    assert resource["error_code"] == 0, resource
    configs = {e["config_names"]: e for e in resource["config_entries"]}
    assert configs["cleanup.policy"]["config_value"] == "delete"
    topic_config = 1  # DescribeConfigs' config_source: set on the topic
    return {name: configs[name]["config_value"] for name in ("retention.ms", "max.message.bytes")
            if configs[name]["config_source"] == topic_config}


@synchronous
async def test_admin_topics_and_configs(broker):
    admin = await started(AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap))
    try:
        topic = await create_topic(broker, 2)

        async def partitions():
            [described] = await admin.describe_topics([topic])
            return sorted(p["partition"] for p in described["partitions"])

        assert await partitions() == [0, 1]
        await admin.create_partitions({topic: NewPartitions(3)})
        await async_wait_for_value(partitions, [0, 1, 2], "partitions after CreatePartitions")

        assert await configs_set(admin, topic) == {}
        # AlterConfigs (the only kind aiokafka sends) replaces the topic's whole set.
        for changes in ({"retention.ms": "86400000", "max.message.bytes": "500000"},
                        {"retention.ms": "3600000"}):
            [response] = await admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, configs=changes)])
            assert [r[0] for r in response.resources] == [0]  # error codes
            await async_wait_for_value(lambda: configs_set(admin, topic), changes,
                                       "configs after AlterConfigs")

        # DeleteRecords moves the log start.
        await produce(broker, topic, [(0, b"d%d" % i) for i in range(10)])
        tp = TopicPartition(topic, 0)
        assert await admin.delete_records({tp: RecordsToDelete(4)}) == {tp: 4}
        assert [r.value for r in await consume_to_end(broker, topic, 3)] == \
            [b"d%d" % i for i in range(4, 10)]

        await admin.delete_topics([topic])

        async def deleted():
            return topic not in await admin.list_topics()

        await async_wait_until(deleted, f"{topic} gone from the metadata")
    finally:
        await admin.close()


@synchronous
async def test_list_offsets(broker):
    """ListOffsets as aiokafka asks it, through the consumer: earliest, latest, by time."""
    topic = await create_topic(broker, 1)
    base = now_ms() - 60_000
    await produce(broker, topic, [(0, b"t0", base + 1000), (0, b"t1", base + 3000),
                                  (0, b"t2", base + 2000)])
    tp = TopicPartition(topic, 0)
    consumer = await started(AIOKafkaConsumer(bootstrap_servers=broker.bootstrap))
    try:
        assert await consumer.beginning_offsets([tp]) == {tp: 0}
        assert await consumer.end_offsets([tp]) == {tp: 3}
        found = await consumer.offsets_for_times({tp: base + 1500})
        assert (found[tp].offset, found[tp].timestamp) == (1, base + 3000)
        found = await consumer.offsets_for_times({tp: base + 500})
        assert (found[tp].offset, found[tp].timestamp) == (0, base + 1000)
        assert await consumer.offsets_for_times({tp: base + 4000}) == {tp: None}
    finally:
        await consumer.stop()


@synchronous
async def test_admin_groups(broker):
    admin = await started(AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap))
    topic, group = await create_topic(broker, 2), unique("g")
    consumer = await started(AIOKafkaConsumer(
        topic, bootstrap_servers=broker.bootstrap, group_id=group, client_id="ak-admin-member",
        enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500))
    try:
        await async_wait_until(lambda: len(consumer.assignment()) == 2,
                               "the member's assignment",
                               lambda: consumer.getmany(timeout_ms=100))
        await consumer.commit({TopicPartition(topic, 0): 2, TopicPartition(topic, 1): 1})

        assert (group, "consumer") in await admin.list_consumer_groups()
        [response] = await admin.describe_consumer_groups([group])
        [description] = response.to_object()["groups"]
        assert (description["error_code"], description["state"]) == (0, "Stable")
        [member] = description["members"]
        assert member["client_id"] == "ak-admin-member"
        assignment = ConsumerProtocolMemberAssignment.decode(member["member_assignment"])
        assert sorted(assignment.partitions()) == \
            [TopicPartition(topic, 0), TopicPartition(topic, 1)]

        offsets = await admin.list_consumer_group_offsets(group)
        assert {tp.partition: meta.offset for tp, meta in offsets.items()} == {0: 2, 1: 1}
    finally:
        await consumer.stop()
        await admin.close()
