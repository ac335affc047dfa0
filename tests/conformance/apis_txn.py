"""Schemas of the transaction APIs the idempotence and transaction scenarios call
(AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit), written from Kafka's message
definitions at the client versions (v3: the first flexible one of each; v4+ of
AddPartitionsToTxn is broker-to-broker). wire.py explains the notation. Also the helpers the
two files share: a topic whose partitions take records, a partition's whole log."""
import time

from side_by_side import wait_until

from wire import Api


def now_ms() -> int:
    """The timestamp the scenarios give their records: Kafka rolls a new log segment for a batch
    whose timestamp is segment.ms (7 days) past the segment's first one, so records stamped far
    in the past would make it roll a segment before every marker."""
    return int(time.time() * 1000)


def ready_topic(broker, partitions=1):
    """A new topic once each partition answers a Fetch without error: Kafka names a leader in
    Metadata a moment before the leader takes records (NOT_LEADER_OR_FOLLOWER until then)."""
    topic = broker.topic(partitions)
    for p in range(partitions):
        wait_until(lambda: broker.fetch(topic, p, 0)["error_code"] == 0,
                   f"{topic}[{p}] to take records")
    return topic


def read_log(broker, topic, partition=0, isolation_level=0):
    """Every batch of the partition below its high watermark (read_uncommitted) or last stable
    offset (read_committed), from as many Fetches as it takes: Kafka answers a Fetch from one
    log segment only."""
    batches, offset = [], 0
    while True:
        fetched = broker.fetch(topic, partition, offset, isolation_level=isolation_level)
        end = fetched["last_stable_offset"] if isolation_level else fetched["high_watermark"]
        new = [b for b in fetched["batches"] if b.last_offset >= offset]
        if not new:
            return batches
        batches += new
        offset = new[-1].last_offset + 1
        if offset >= end:
            return batches

ADD_PARTITIONS_TO_TXN = Api(24, "AddPartitionsToTxn", 3, request=[
    ("transactional_id", "string", "0-3"),
    ("producer_id", "int64", "0-3"),
    ("producer_epoch", "int16", "0-3"),
    ("topics", [("name", "string", "0-3"), ("partitions", ["int32"], "0-3")], "0-3"),
], response=[
    ("throttle_time_ms", "int32", "0-3"),
    ("results", [
        ("name", "string", "0-3"),
        ("partitions", [("partition_index", "int32", "0-3"),
                        ("partition_error_code", "int16", "0-3")], "0-3"),
    ], "0-3"),
])

ADD_OFFSETS_TO_TXN = Api(25, "AddOffsetsToTxn", 3, request=[
    ("transactional_id", "string", "0+"),
    ("producer_id", "int64", "0+"),
    ("producer_epoch", "int16", "0+"),
    ("group_id", "string", "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("error_code", "int16", "0+"),
])

END_TXN = Api(26, "EndTxn", 3, request=[
    ("transactional_id", "string", "0+"),
    ("producer_id", "int64", "0+"),
    ("producer_epoch", "int16", "0+"),
    ("committed", "bool", "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("error_code", "int16", "0+"),
])

TXN_OFFSET_COMMIT = Api(28, "TxnOffsetCommit", 3, request=[
    ("transactional_id", "string", "0+"),
    ("group_id", "string", "0+"),
    ("producer_id", "int64", "0+"),
    ("producer_epoch", "int16", "0+"),
    ("generation_id", "int32", "3+"),
    ("member_id", "string", "3+"),
    ("group_instance_id", "string", "3+"),
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [
            ("partition_index", "int32", "0+"),
            ("committed_offset", "int64", "0+"),
            ("committed_leader_epoch", "int32", "2+"),
            ("committed_metadata", "string", "0+"),
        ], "0+"),
    ], "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [("partition_index", "int32", "0+"), ("error_code", "int16", "0+")],
         "0+"),
    ], "0+"),
])
