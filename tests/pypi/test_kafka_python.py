"""kafka-python 3 (pure Python; it picks each request's version from the broker's ApiVersions)
against the broker: produce and consume, eager and cooperative groups, idempotence, transactions
read back at both isolation levels, send_offsets_to_transaction, and the Admin API, with the
transaction admin calls (KIP-664) and ListGroups v5's type filter."""
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, OffsetAndMetadata, \
    TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, NewPartitions, \
    NewTopic, OffsetSpec
from kafka.admin._configs import ConfigFilterType
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer import IsolationLevel

from conftest import now_ms, unique, wait_for_value, wait_until
from kafka_python_support import PolledMember, subscribe

TIMEOUT_MS = 30_000  # for each blocking client call


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap,
                              request_timeout_ms=TIMEOUT_MS)
    yield client
    client.close()


def create_topic(admin, partitions):
    name = unique("kp")
    # Kafka's broker learns of the topic from the controller a moment after the answer.
    admin.create_topics([NewTopic(name, partitions, 1)], wait_for_metadata=True)
    return name


def produce(broker, topic, records, **conf):
    """Sends (partition, value[, timestamp ms]) records; returns their (partition, offset) in
    order, each delivery checked."""
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5, **conf)
    futures = [producer.send(topic, value=value, partition=partition,
                             timestamp_ms=timestamp[0] if timestamp else None)
               for partition, value, *timestamp in records]
    producer.flush(TIMEOUT_MS / 1000)
    delivered = [(m.partition, m.offset)
                 for m in (f.get(timeout=TIMEOUT_MS / 1000) for f in futures)]
    producer.close()
    return delivered


def consume_to_end(broker, topic, partitions, **conf):
    """Every record of `topic` from the start, in a group of its own, up to each partition's
    end offset when called (no transaction is open then: the same at both isolation levels),
    in the order read."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=unique("g"),
                             auto_offset_reset="earliest", enable_auto_commit=False, **conf)
    parts = [TopicPartition(topic, p) for p in range(partitions)]
    ends = consumer.end_offsets(parts)
    subscribe(consumer, [topic])
    records = []

    def pump():
        for batch in consumer.poll(timeout_ms=200).values():
            records.extend(batch)

    wait_until(lambda: len(consumer.assignment()) == partitions and
               all(consumer.position(tp) >= ends[tp] for tp in parts),
               lambda: f"{topic}: read {len(records)} records, to end offsets {ends}", pump)
    consumer.close()
    return records


def test_produce_consume(broker, admin):
    topic = create_topic(admin, 3)
    records = [(i % 3, b"v%d" % i) for i in range(30)]
    delivered = produce(broker, topic, records)
    for p in range(3):
        assert [o for (part, o) in delivered if part == p] == list(range(10))
    read = consume_to_end(broker, topic, 3)
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


def run_group(broker, admin, assignor):
    """Two members of one group on 4 partitions: the first gets all, then they split 2/2, then
    the first gets all back when the second leaves. Returns the listeners' events and what
    moved to the second member."""
    topic, group, events = create_topic(admin, 4), unique("g"), []
    every = [0, 1, 2, 3]

    def member(name):
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group,
                                 partition_assignment_strategy=(assignor,),
                                 session_timeout_ms=6000, heartbeat_interval_ms=500)
        subscribe(consumer, [topic], listener=Recorder(name, events))
        return PolledMember(name, consumer)

    c1 = member("c1")
    wait_until(lambda: c1.owned() == every, lambda: f"c1 alone owns all; events {events}")
    c2 = member("c2")
    wait_until(lambda: len(c1.owned()) == len(c2.owned()) == 2 and
               sorted(c1.owned() + c2.owned()) == every,
               lambda: f"c1, c2 own 2 partitions each; events {events}")
    moved = c2.owned()
    c2.close()  # LeaveGroup
    wait_until(lambda: c1.owned() == every, lambda: f"c1 owns all again; events {events}")
    history = list(events)  # before close() revokes what c1 has
    c1.close()
    return history, moved


def test_eager_group(broker, admin):
    events, moved = run_group(broker, admin, RangePartitionAssignor)
    # Eager: c1 gave up everything when c2 joined, then got back what c2 did not get.
    kept = sorted({0, 1, 2, 3} - set(moved))
    c1 = [e for e in events if e[0] == "c1"]
    revoked_all = ("c1", "revoke", [0, 1, 2, 3])
    assert revoked_all in c1 and ("c1", "assign", kept) in c1[c1.index(revoked_all):], events
    assert ("c2", "assign", moved) in events, events


def test_cooperative_group(broker, admin):
    events, moved = run_group(broker, admin, CooperativeStickyAssignor)
    # Cooperative: c1 was revoked only what moved to c2, and later given only that back
    # (empty increments left out).
    assert [e for e in events if e[0] == "c1" and e[2]] == [
        ("c1", "assign", [0, 1, 2, 3]), ("c1", "revoke", moved), ("c1", "assign", moved)], events


def test_idempotent_producer(broker, admin):
    topic = create_topic(admin, 1)
    values = [b"i%d" % i for i in range(100)]
    delivered = produce(broker, topic, [(0, v) for v in values], enable_idempotence=True,
                        max_in_flight_requests_per_connection=5)
    assert delivered == [(0, i) for i in range(100)]
    assert [r.value for r in consume_to_end(broker, topic, 1)] == values


def transactional_producer(broker, transactional_id=None):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap,
                             transactional_id=transactional_id or unique("tid"),
                             transaction_timeout_ms=30000)
    producer.init_transactions()
    return producer


def test_transactions_read_committed(broker, admin):
    topic = create_topic(admin, 1)
    producer = transactional_producer(broker)
    for prefix, commit in (("c", True), ("a", False), ("l", True)):
        producer.begin_transaction()
        for i in range(5):
            producer.send(topic, value=f"{prefix}{i}".encode(), partition=0)
        if commit:
            producer.commit_transaction()
        else:
            producer.flush()
            producer.abort_transaction()
    producer.close()
    # 15 records and 3 markers: committed 0-4 (marker 5), aborted 6-10 (11), committed 12-16 (17).
    # Kafka writes a transaction's markers after EndTxn answers: wait for the last one.
    tp = TopicPartition(topic, 0)
    wait_for_value(lambda: admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset, 18,
                   "end offset")
    committed = consume_to_end(broker, topic, 1, isolation_level="read_committed")
    assert [(r.offset, r.value) for r in committed] == \
        [(o, b"c%d" % o) for o in range(5)] + [(12 + i, b"l%d" % i) for i in range(5)]
    everything = consume_to_end(broker, topic, 1, isolation_level="read_uncommitted")
    assert [r.offset for r in everything] == \
        list(range(0, 5)) + list(range(6, 11)) + list(range(12, 17))
    assert [r.value for r in everything][5:10] == [b"a%d" % i for i in range(5)]


def test_send_offsets_to_transaction(broker, admin):
    source, sink, group = create_topic(admin, 2), create_topic(admin, 1), unique("g")
    produce(broker, source, [(i % 2, b"s%d" % i) for i in range(10)])
    consumer = KafkaConsumer(source, bootstrap_servers=broker.bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             isolation_level="read_committed")
    read = []
    wait_until(lambda: len(read) == 10, lambda: f"read {len(read)} of 10",
               lambda: [read.extend(b) for b in consumer.poll(timeout_ms=200).values()])
    producer = transactional_producer(broker)
    sources = [TopicPartition(source, p) for p in (0, 1)]

    def copy_in_transaction(commit):
        producer.begin_transaction()
        for record in read:
            producer.send(sink, value=record.value, partition=0)
        offsets = {tp: OffsetAndMetadata(consumer.position(tp), "", -1) for tp in sources}
        producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
        (producer.commit_transaction if commit else producer.abort_transaction)()

    copy_in_transaction(commit=False)  # its offsets must not count
    assert [consumer.committed(tp) for tp in sources] == [None, None]
    copy_in_transaction(commit=True)
    # Kafka applies a transaction's offsets with its markers, after EndTxn answers.
    wait_until(lambda: [consumer.committed(tp) for tp in sources] == [5, 5],
               lambda: f"committed {[consumer.committed(tp) for tp in sources]}, not [5, 5]")
    consumer.close()
    producer.close()
    copied = consume_to_end(broker, sink, 1, isolation_level="read_committed")
    assert sorted(r.value for r in copied) == sorted(b"s%d" % i for i in range(10))


def configs_set(admin, topic):
    """The topic's own values (not defaults) of the configs the test changes."""
    result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                    config_filter=ConfigFilterType.ALL)
    configs = result["topic"][topic]
    assert configs["cleanup.policy"]["value"] == "delete"
    return {name: configs[name]["value"] for name in ("retention.ms", "max.message.bytes")
            if configs[name]["config_source"] == "DYNAMIC_TOPIC_CONFIG"}


def test_admin_topics_and_configs(broker, admin):
    topic = create_topic(admin, 2)

    def partitions():
        [described] = admin.describe_topics([topic])
        return sorted(p["partition_index"] for p in described["partitions"])

    assert partitions() == [0, 1]
    admin.create_partitions({topic: NewPartitions(3)})
    wait_for_value(partitions, [0, 1, 2], "partitions after CreatePartitions")

    assert configs_set(admin, topic) == {}
    # AlterConfigs (legacy) replaces the topic's whole set; the incremental one changes keys.
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
        "retention.ms": "86400000", "max.message.bytes": "500000"})], incremental=False)
    wait_for_value(lambda: configs_set(admin, topic),
                   {"retention.ms": "86400000", "max.message.bytes": "500000"},
                   "configs after AlterConfigs")
    admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={
        "retention.ms": (AlterConfigOp.SET, "3600000"),
        "max.message.bytes": (AlterConfigOp.DELETE, None)})], incremental=True)
    wait_for_value(lambda: configs_set(admin, topic), {"retention.ms": "3600000"},
                   "configs after IncrementalAlterConfigs")

    # DeleteRecords moves the log start: earliest (and earliest local, -4) follow it.
    produce(broker, topic, [(0, b"d%d" % i) for i in range(10)])
    tp = TopicPartition(topic, 0)
    assert admin.delete_records({tp: 4})[tp]["low_watermark"] == 4
    assert admin.list_partition_offsets({tp: OffsetSpec.EARLIEST})[tp].offset == 4
    assert admin.list_partition_offsets({tp: OffsetSpec.EARLIEST_LOCAL})[tp].offset == 4
    assert [r.value for r in consume_to_end(broker, topic, 3)] == \
        [b"d%d" % i for i in range(4, 10)]

    admin.delete_topics([topic])
    wait_until(lambda: topic not in admin.list_topics(), f"{topic} gone from the metadata")


def test_admin_list_offsets(broker, admin):
    topic = create_topic(admin, 1)
    base = now_ms() - 60_000
    # The largest timestamp is in the middle: MAX_TIMESTAMP is not simply the last record.
    produce(broker, topic, [(0, b"t0", base + 1000), (0, b"t1", base + 3000),
                            (0, b"t2", base + 2000)])
    tp = TopicPartition(topic, 0)

    def ask(spec):
        answer = admin.list_partition_offsets({tp: spec})[tp]
        return answer.offset, answer.timestamp

    assert ask(OffsetSpec.EARLIEST)[0] == 0
    assert ask(OffsetSpec.LATEST)[0] == 3
    assert ask(base + 1500) == (1, base + 3000)  # a timestamp: the first record at or after it
    assert ask(base + 500) == (0, base + 1000)
    assert ask(base + 4000)[0] == -1
    assert ask(OffsetSpec.MAX_TIMESTAMP) == (1, base + 3000)


def test_admin_groups(broker, admin):
    topic, group = create_topic(admin, 2), unique("g")
    produce(broker, topic, [(p, b"x%d" % i) for i, p in enumerate((0, 0, 0, 1, 1))])
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group,
                             client_id="kp-admin-member", enable_auto_commit=False,
                             session_timeout_ms=6000, heartbeat_interval_ms=500)
    subscribe(consumer, [topic])
    wait_until(lambda: len(consumer.assignment()) == 2, "the member's assignment",
               lambda: consumer.poll(timeout_ms=100))
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(2, "", -1),
                     TopicPartition(topic, 1): OffsetAndMetadata(1, "", -1)})

    description = admin.describe_groups([group])[group]
    assert description["group_state"] == "Stable"
    [member] = description["members"]
    assert member["client_id"] == "kp-admin-member"
    assert member["member_assignment"]["assigned_partitions"] == \
        [{"topic": topic, "partitions": [0, 1]}]

    def listed(**filters):
        return {g["group_id"]: g for g in admin.list_groups(**filters)}

    assert (listed()[group]["group_state"], listed()[group]["group_type"]) == \
        ("Stable", "classic")
    # ListGroups v4's state filter and v5's type filter (every group here is classic).
    assert group in listed(types_filter=["classic"])
    assert group not in listed(types_filter=["consumer"])
    assert group in listed(states_filter=["Stable"])
    assert group not in listed(states_filter=["Empty"])
    consumer.close()
    # Empty once its only member has left (LeaveGroup).
    wait_for_value(lambda: group in listed(states_filter=["Empty"], types_filter=["classic"]),
                   True, "the group listed as Empty and classic")

    def offsets():
        return {tp.partition: meta.offset
                for tp, meta in admin.list_group_offsets({group: None})[group].items()}

    assert offsets() == {0: 2, 1: 1}
    admin.alter_group_offsets(group, {TopicPartition(topic, 0): OffsetAndMetadata(3, "", -1)})
    assert offsets() == {0: 3, 1: 1}
    admin.delete_group_offsets(group, [TopicPartition(topic, 1)])  # OffsetDelete
    assert offsets() == {0: 3}
    assert dict(admin.delete_groups([group])) == {group: "OK"}
    assert group not in listed()


def test_admin_transactions(broker, admin):
    """ListTransactions, DescribeTransactions and DescribeProducers (KIP-664) on an open
    transaction, then on it committed; ListOffsets at read_committed stops at its start."""
    topic, transactional_id = create_topic(admin, 1), unique("tid")
    produce(broker, topic, [(0, b"before")])
    producer = transactional_producer(broker, transactional_id)
    producer.begin_transaction()
    producer.send(topic, value=b"open", partition=0)
    producer.flush()
    tp = TopicPartition(topic, 0)

    listed = [t for ts in admin.list_transactions().values() for t in ts
              if t.transactional_id == transactional_id]
    assert [t.state.value for t in listed] == ["Ongoing"]
    producer_id = listed[0].producer_id
    assert [t.transactional_id for ts in admin.list_transactions(state_filters=["Ongoing"])
            .values() for t in ts].count(transactional_id) == 1
    assert transactional_id not in [t.transactional_id for ts in admin.list_transactions(
        state_filters=["CompleteCommit"]).values() for t in ts]

    description = admin.describe_transactions([transactional_id])[transactional_id]
    assert (description.state.value, description.producer_id, description.topic_partitions) \
        == ("Ongoing", producer_id, {tp})
    # Two producers wrote to the partition: the first record's (kafka-python is idempotent by
    # default), outside any transaction, and the transaction's.
    states = {s.producer_id: s for s in admin.describe_producers([tp])[tp].active_producers}
    assert len(states) == 2
    assert (states[producer_id].last_sequence,
            states[producer_id].current_transaction_start_offset) == (0, 1)
    [other] = [s for p, s in states.items() if p != producer_id]
    assert (other.last_sequence, other.current_transaction_start_offset) == (0, -1)
    # The last stable offset is the open transaction's first offset.
    assert admin.list_partition_offsets(
        {tp: OffsetSpec.LATEST}, isolation_level=IsolationLevel.READ_COMMITTED)[tp].offset == 1
    assert admin.list_partition_offsets({tp: OffsetSpec.LATEST})[tp].offset == 2

    producer.commit_transaction()
    producer.close()
    # The commit's markers are written after EndTxn answers: wait for them.
    wait_until(lambda: admin.describe_transactions([transactional_id])[transactional_id]
               .state.value == "CompleteCommit", "the transaction's CompleteCommit")
    wait_until(lambda: [s.current_transaction_start_offset
                        for s in admin.describe_producers([tp])[tp].active_producers] == [-1, -1],
               "no open transaction on the partition")
    assert admin.list_partition_offsets(
        {tp: OffsetSpec.LATEST}, isolation_level=IsolationLevel.READ_COMMITTED)[tp].offset == 3
