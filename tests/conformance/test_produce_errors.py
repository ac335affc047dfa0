"""Produce's errors and the answers producers branch on outside transactions: unknown topics
and partitions, acks values, batches over max.message.bytes, keyless records on a compacted
topic (with v8's per-record errors), corrupt batches, LogAppendTime, and acks=0, which gets no
answer at all. A producer retries, splits, drops or fails a batch on these codes."""
import struct

import apis
import errors
import records
from side_by_side import scenario, unique


def _outcome(answer, version=8):
    """(error, base offset) of a partition's answer, and at v8 the indexes of the records it
    refused (messages are each broker's own text: not compared)."""
    fact = [errors.name(answer["error_code"]), answer["base_offset"]]
    if version >= 8:
        fact.append([e["batch_index"] for e in answer["record_errors"]])
    return fact


@scenario
def test_produce_to_unknown_topic_or_partition(broker):
    """A topic that does not exist (Produce never creates one) and a partition the topic does
    not have: UNKNOWN_TOPIC_OR_PARTITION, base offset -1; the other partition of the request is
    written."""
    name = broker.topic(partitions=2)
    absent = unique("conformance-absent")
    answer = broker.call(apis.PRODUCE, 8, transactional_id=None, acks=-1, timeout_ms=30000,
                         topic_data=[
                             {"name": name, "partition_data": [
                                 {"index": 1, "records": records.batch([b"a"])},
                                 {"index": 2, "records": records.batch([b"b"])}]},
                             {"name": absent, "partition_data": [
                                 {"index": 0, "records": records.batch([b"c"])}]}])
    out = {(t["name"] == name, p["index"]): _outcome(p)
           for t in answer["responses"] for p in t["partition_responses"]}
    metadata = broker.call(apis.METADATA, 8, topics=[{"name": absent}],
                           allow_auto_topic_creation=False)
    return {"answers": sorted(out.items()),
            "absent still absent": errors.name(metadata["topics"][0]["error_code"])}


@scenario
def test_produce_invalid_acks(broker):
    """acks must be -1, 0 or 1: acks=2 and acks=-2 get INVALID_REQUIRED_ACKS and write nothing;
    acks=1 writes."""
    name = broker.topic()
    out = {acks: _outcome(broker.produce(name, 0, records.batch([b"x"]), acks=acks))
           for acks in (2, -2, 1)}
    out["latest"] = broker.list_offset(name, 0, -1)["offset"]
    return out


@scenario
def test_produce_batch_over_max_message_bytes(broker):
    """max.message.bytes bounds a whole batch (with its 12-byte offset and length prefix): a
    batch of exactly that size is written, one byte more gets MESSAGE_TOO_LARGE (the producer
    splits it or fails the records)."""
    batch = records.batch([b"v" * 300, b"w" * 300])
    exact = broker.topic(configs={"max.message.bytes": str(len(batch))})
    small = broker.topic(configs={"max.message.bytes": str(len(batch) - 1)})
    return {"exact": _outcome(broker.produce(exact, 0, batch)),
            "one byte over": _outcome(broker.produce(small, 0, batch)),
            "smaller batch": _outcome(broker.produce(small, 0, records.batch([b"v" * 100]))),
            "written": [broker.list_offset(t, 0, -1)["offset"] for t in (exact, small)]}


@scenario
def test_produce_keyless_record_to_compacted_topic(broker):
    """A compacted topic takes only keyed records: a batch with a keyless record gets
    INVALID_RECORD, and at v8 record_errors names each keyless record's index in the batch
    (so that the producer can say which records were refused); nothing of the batch is
    written."""
    name = broker.topic(configs={"cleanup.policy": "compact"})
    keyless = records.batch([b"v"])
    mixed = records.batch([b"v0", b"v1", b"v2", b"v3"], keys=[b"k0", None, b"k2", None])
    keyed = records.batch([b"v"], keys=[b"k"])
    v8 = broker.produce(name, 0, mixed)
    return {"keyless": _outcome(broker.produce(name, 0, keyless)),
            "mixed": _outcome(v8),
            "v7": _outcome(broker.produce(name, 0, keyless, version=7), version=7),
            "keyed": _outcome(broker.produce(name, 0, keyed)),
            "latest": broker.list_offset(name, 0, -1)["offset"]}


@scenario
def test_produce_corrupt_batch(broker):
    """A batch whose CRC does not match its bytes: CORRUPT_MESSAGE, nothing written (a
    producer's buffer corrupted in flight must not reach the log)."""
    name = broker.topic()
    good = records.batch([b"abc", b"def"])
    flipped = bytearray(good)
    flipped[-3] ^= 0xFF  # inside the last record's value: the CRC covers it
    bad_crc = bytearray(good)
    struct.pack_into(">I", bad_crc, 17, struct.unpack_from(">I", good, 17)[0] ^ 1)
    return {"value flipped": _outcome(broker.produce(name, 0, bytes(flipped))),
            "crc flipped": _outcome(broker.produce(name, 0, bytes(bad_crc))),
            "written": broker.list_offset(name, 0, -1)["offset"],
            "good": _outcome(broker.produce(name, 0, good))}


@scenario
def test_produce_log_append_time(broker):
    """message.timestamp.type=LogAppendTime: the answer carries the broker's append time (not
    -1), and the fetched batch has the LogAppendTime attribute and that time as its max
    timestamp, which clients read as every record's timestamp (the records' own deltas are
    left as written); CreateTime: -1, and the batch's max timestamp is the producer's."""
    out = {}
    for kind in ("LogAppendTime", "CreateTime"):
        name = broker.topic(configs={"message.timestamp.type": kind})
        answer = broker.produce(name, 0, records.batch([b"a", b"b"], timestamps=[1000, 2000]))
        fetched = broker.fetch(name, 0, 0)["batches"][0]
        stamped = answer["log_append_time_ms"]
        out[kind] = {"error_code": answer["error_code"], "append time is -1": stamped == -1,
                     "attribute": bool(fetched.attributes & 0x08),
                     "max timestamp": "append time" if fetched.max_timestamp == stamped
                     else fetched.max_timestamp,
                     "records as written": [r.timestamp for r in fetched.records]}
    return out


@scenario
def test_produce_acks_zero_gets_no_answer(broker):
    """acks=0: the broker sends no response (the producer never waits for one); a request sent
    after it on the same connection is the next answered, and the record is written."""
    name = broker.topic()
    with broker.connect() as c:
        c.send(apis.PRODUCE, 8, transactional_id=None, acks=0, timeout_ms=30000, topic_data=[
            {"name": name, "partition_data": [{"index": 0, "records": records.batch([b"x"])}]}])
        follow_up = c.send(apis.METADATA, 8, topics=[{"name": name}])
        answer = c.receive(apis.METADATA, 8, follow_up)  # asserts the correlation id
    return {"follow-up answered first": answer["topics"][0]["name"] == name,
            "latest": broker.list_offset(name, 0, -1)["offset"]}


@scenario
def test_produce_acks_zero_error_closes_connection(broker):
    """acks=0 to a partition that refuses the batch: with no response to carry the error,
    the broker closes the connection, so that the producer refreshes its metadata."""
    absent = unique("conformance-absent")
    with broker.connect() as c:
        c.send(apis.PRODUCE, 8, transactional_id=None, acks=0, timeout_ms=30000, topic_data=[
            {"name": absent, "partition_data": [{"index": 0,
                                                 "records": records.batch([b"x"])}]}])
        follow_up = c.send(apis.API_VERSIONS, 0)
        try:
            c.receive(apis.API_VERSIONS, 0, follow_up)
            closed = False
        except (ConnectionError, OSError):
            closed = True
    return {"closed": closed}
