"""ListOffsets: the earliest, latest and largest-timestamp offsets and the search by timestamp,
at the versions clients send (v0's list of old-style offsets, v1, v4+ with leader epochs, v7's
MAX_TIMESTAMP). Consumers seek with these answers (auto.offset.reset, offsetsForTimes), so an
answer one off is a record read twice or skipped."""
import apis
import errors
import records
from side_by_side import scenario, unique

EARLIEST, LATEST, MAX_TIMESTAMP = -2, -1, -3


def _offsets(broker, topic, partition, timestamp, version):
    """(error, offset, timestamp, leader epoch) of one ListOffsets, the fields the version has."""
    p = broker.list_offset(topic, partition, timestamp, version=version)
    fact = [errors.name(p["error_code"])]
    if version == 0:
        fact.append(p["old_style_offsets"])
    else:
        fact += [p["offset"], p["timestamp"]]
    if version >= 4:
        fact.append(p["leader_epoch"])
    return fact


def _topic_with_timestamps(broker):
    """Offsets 0..5 with timestamps 1000, 2000, 2000 | 3000, 2500 | 4000 (three batches; the
    largest timestamp before the last batch is at offset 3; two records share 2000)."""
    name = broker.topic()
    broker.produce(name, 0, records.batch([b"a", b"b", b"c"], timestamps=[1000, 2000, 2000]))
    broker.produce(name, 0, records.batch([b"d", b"e"], timestamps=[3000, 2500]))
    broker.produce(name, 0, records.batch([b"f"], timestamps=[4000]))
    return name


@scenario
def test_list_offsets_by_timestamp(broker):
    """The first offset whose timestamp is at or after the one asked for: before every record
    the first, between two the later one, on two equal timestamps the first of them, a
    timestamp out of order within a batch found by its own value, after every record
    offset -1 (and timestamp -1): the consumer then resets as it is configured to."""
    name = _topic_with_timestamps(broker)
    asked = [0, 999, 1000, 1500, 2000, 2001, 2500, 2999, 3000, 3500, 4000, 4001, 10 ** 13]
    return {t: _offsets(broker, name, 0, t, 7) for t in asked}


@scenario
def test_list_offsets_special_timestamps_v1_and_v7(broker):
    """EARLIEST (-2), LATEST (-1) at v1 and v7, MAX_TIMESTAMP (-3, KIP-734) at v7: the record
    with the largest timestamp (its offset and timestamp); on an empty partition EARLIEST and
    LATEST are 0, MAX_TIMESTAMP -1."""
    name = _topic_with_timestamps(broker)
    empty = broker.topic()
    out = {}
    for label, topic in (("filled", name), ("empty", empty)):
        out[label] = {"v1 earliest": _offsets(broker, topic, 0, EARLIEST, 1),
                      "v1 latest": _offsets(broker, topic, 0, LATEST, 1),
                      "v7 earliest": _offsets(broker, topic, 0, EARLIEST, 7),
                      "v7 latest": _offsets(broker, topic, 0, LATEST, 7),
                      "v7 max timestamp": _offsets(broker, topic, 0, MAX_TIMESTAMP, 7)}
    return out


@scenario
def test_list_offsets_max_timestamp_ties(broker):
    """MAX_TIMESTAMP when several records share the largest timestamp: the first of them (in
    the earliest batch holding it)."""
    name = broker.topic()
    broker.produce(name, 0, records.batch([b"a", b"b"], timestamps=[5000, 1000]))
    broker.produce(name, 0, records.batch([b"c", b"d"], timestamps=[2000, 5000]))
    return [_offsets(broker, name, 0, MAX_TIMESTAMP, 7),
            _offsets(broker, name, 0, 5000, 7)]


def _v0(broker, topic, timestamp, max_num_offsets):
    answer = broker.call(apis.LIST_OFFSETS, 0, replica_id=-1, topics=[{
        "name": topic, "partitions": [{"partition_index": 0, "timestamp": timestamp,
                                       "max_num_offsets": max_num_offsets}]}])
    p = answer["topics"][0]["partitions"][0]
    return errors.name(p["error_code"]), p["old_style_offsets"]


@scenario
def test_list_offsets_v0_old_style(broker):
    """v0 answers a list of segment offsets, newest first, at most max_num_offsets: LATEST the
    high watermark then the log's first segment, EARLIEST the log start, a timestamp the
    segments last written at or before it (none for one in 1970; all, with the log end, for
    one in the future). Old clients (before 0.10.1) reset with it."""
    name = _topic_with_timestamps(broker)
    empty = broker.topic()
    future = 10 ** 13
    return {label: {f"{what} max {n}": _v0(broker, topic, ts, n)
                    for what, ts in (("latest", LATEST), ("earliest", EARLIEST),
                                     ("1970", 1500), ("future", future))
                    for n in (1, 10)}
            for label, topic in (("filled", name), ("empty", empty))}


@scenario
def test_list_offsets_unknown_partition_and_topic(broker):
    """A partition the topic does not have and a topic that does not exist:
    UNKNOWN_TOPIC_OR_PARTITION with offset -1 and timestamp -1, at v1 and v7; the other
    partitions of the request are answered."""
    name = broker.topic(partitions=2)
    broker.produce(name, 1, records.batch([b"x"]))
    absent = unique("conformance-absent")
    out = {}
    for version in (1, 7):
        answer = broker.call(apis.LIST_OFFSETS, version, replica_id=-1, topics=[
            {"name": name, "partitions": [
                {"partition_index": i, "current_leader_epoch": -1, "timestamp": LATEST}
                for i in (1, 7)]},
            {"name": absent, "partitions": [
                {"partition_index": 0, "current_leader_epoch": -1, "timestamp": LATEST}]}])
        out[f"v{version}"] = [(t["name"] == name, p["partition_index"],
                               errors.name(p["error_code"]), p["offset"], p["timestamp"])
                              for t in answer["topics"] for p in t["partitions"]]
    return out
