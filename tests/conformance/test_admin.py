"""Topic administration: CreateTopics' validation, CreatePartitions, DeleteTopics, DeleteRecords
(and what Fetch, ListOffsets and Produce then say about the log start), DescribeConfigs,
AlterConfigs and IncrementalAlterConfigs. Admin clients (AdminClient, kafka-topics, Terraform
providers, operators) act on these answers; their error messages are each broker's own text,
so only error codes are compared (not the messages, nor whether there is one)."""
import time

import apis
import apis_admin
import errors
import records
from apis_admin import APPEND, BROKER, DELETE, SET, SOURCES, SUBTRACT, TOPIC
from side_by_side import scenario, unique, wait_until


def _create(broker, topics, validate_only=False, version=4):
    """CreateTopics of `topics` (dicts of the request's fields; replication factor and
    partitions default to -1, the broker's defaults): name -> error."""
    full = [dict({"num_partitions": -1, "replication_factor": -1}, **t) for t in topics]
    answer = broker.call(apis.CREATE_TOPICS, version, topics=full, timeout_ms=30000,
                         validate_only=validate_only)
    return {t["name"]: errors.name(t["error_code"]) for t in answer["topics"]}


def _partitions(broker, topic):
    """The partition count Metadata gives `topic`, or its error's name."""
    t = broker.call(apis.METADATA, 8, topics=[{"name": topic}],
                    allow_auto_topic_creation=False)["topics"][0]
    return len(t["partitions"]) if t["error_code"] == 0 else errors.name(t["error_code"])


def _node_id(broker):
    return broker.call(apis.METADATA, 8, topics=[])["brokers"][0]["node_id"]


# --- CreateTopics ------------------------------------------------------------------------------

@scenario
def test_create_topic_that_exists(broker):
    """Creating a topic twice: TOPIC_ALREADY_EXISTS (an idempotent provisioning tool treats it
    as success), also with validate_only; the topic keeps its partitions."""
    name = broker.topic(partitions=2)
    return {"again": _create(broker, [{"name": name, "num_partitions": 3}])[name],
            "validate_only": _create(broker, [{"name": name}], validate_only=True)[name],
            "partitions": _partitions(broker, name)}


@scenario
def test_create_topic_invalid_names(broker):
    """Names Kafka refuses: '.', '..', 250 characters (249 is the longest), characters outside
    [a-zA-Z0-9._-], empty: INVALID_TOPIC_EXCEPTION; 249 characters is fine (validate_only)."""
    prefix = unique("c")
    bad = [".", "..", prefix + "x" * (250 - len(prefix)), "has space", "has/slash", "ha$h",
           "\u00e9t\u00e9", ""]
    out = {repr(n[:16]) if len(n) < 100 else "250 characters": _create(broker, [{"name": n}])[n]
           for n in bad}
    longest = prefix + "y" * (249 - len(prefix))
    out["249 characters"] = _create(broker, [{"name": longest}], validate_only=True)[longest]
    out["none created"] = [_partitions(broker, n) for n in bad if n]
    return out


@scenario
def test_create_topic_colliding_name(broker):
    """'a.b' and 'a_b' collide in metric names: the second is refused with
    INVALID_TOPIC_EXCEPTION (while the first exists)."""
    base = unique("collide").replace("-", "")
    first = _create(broker, [{"name": base + ".x"}])
    second = _create(broker, [{"name": base + "_x"}])
    return [first[base + ".x"], second[base + "_x"]]


@scenario
def test_create_topic_partition_counts(broker):
    """num_partitions 0 and -2: INVALID_PARTITIONS; -1: the broker's num.partitions (1); 5:
    five partitions."""
    names_ = {n: unique("conformance-parts") for n in (0, -2, -1, 5)}
    out = {}
    for count, name in names_.items():
        out[f"num_partitions={count}"] = _create(broker, [{"name": name,
                                                           "num_partitions": count}])[name]
    for count, name in names_.items():
        if count in (-1, 5):
            broker.wait_for_leaders(name, 1 if count == -1 else count)
        out[f"partitions after {count}"] = _partitions(broker, name)
    return out


@scenario
def test_create_topic_replication_factors(broker):
    """On one broker: a replication factor of 2 or 3 gets INVALID_REPLICATION_FACTOR, 0 and -2
    too (-1 is the broker's default.replication.factor, 1 here)."""
    out = {}
    for rf in (2, 3, 0, -2, -1, 1):
        name = unique("conformance-rf")
        out[f"rf={rf}"] = _create(broker, [{"name": name, "num_partitions": 1,
                                            "replication_factor": rf}])[name]
    return out


@scenario
def test_create_topic_config_validation(broker):
    """Configs are validated before the topic is created: an unknown name, a value of the wrong
    type, out of range or not among the allowed ones, a null value: INVALID_CONFIG; a topic
    refused for its configs does not exist afterwards."""
    cases = {
        "unknown": [("no.such.config", "1")],
        "not a number": [("retention.ms", "soon")],
        "below minimum": [("segment.bytes", "10")],
        "bad enum": [("cleanup.policy", "shred")],
        "bad bool": [("unclean.leader.election.enable", "maybe")],
        "bad timestamp type": [("message.timestamp.type", "WallClock")],
        "bad compression": [("compression.type", "brotli")],
        "null": [("retention.ms", None)],
        "good": [("retention.ms", "3600000"), ("cleanup.policy", "compact,delete")],
    }
    out = {}
    for case, configs in cases.items():
        name = unique("conformance-cfg")
        out[case] = _create(broker, [{"name": name, "num_partitions": 1, "configs": [
            {"name": k, "value": v} for k, v in configs]}])[name]
        if out[case] == "NONE":
            broker.wait_for_leaders(name, 1)  # Kafka's Metadata may lag its CreateTopics
        out[case + ": exists"] = _partitions(broker, name) != "UNKNOWN_TOPIC_OR_PARTITION"
    return out


@scenario
def test_create_topic_validate_only(broker):
    """validate_only=true answers as a creation would (NONE, or the error) and creates
    nothing: the name stays free."""
    name = unique("conformance-validate")
    checked = _create(broker, [{"name": name, "num_partitions": 3}], validate_only=True)[name]
    refused = _create(broker, [{"name": name, "num_partitions": 0}], validate_only=True)[name]
    after = _partitions(broker, name)
    created = _create(broker, [{"name": name, "num_partitions": 3}])[name]
    return {"validate": checked, "refused": refused, "after validate": after,
            "create": created}


@scenario
def test_create_topic_manual_assignments(broker):
    """Replica assignments instead of counts: one partition per assignment, on the brokers
    named; with num_partitions or replication_factor also set: INVALID_REQUEST; an unknown
    broker id, or partition indexes that are not 0..n-1: INVALID_REPLICA_ASSIGNMENT."""
    node = _node_id(broker)
    ok, both, unknown, gap, dup = (unique("conformance-assign") for _ in range(5))
    out = {
        "ok": _create(broker, [{"name": ok, "assignments": [
            {"partition_index": 0, "broker_ids": [node]},
            {"partition_index": 1, "broker_ids": [node]}]}])[ok],
        "with counts": _create(broker, [{"name": both, "num_partitions": 2,
                                         "replication_factor": 1, "assignments": [
                                             {"partition_index": 0, "broker_ids": [node]}]}])[both],
        "unknown broker": _create(broker, [{"name": unknown, "assignments": [
            {"partition_index": 0, "broker_ids": [node + 1000]}]}])[unknown],
        "gap": _create(broker, [{"name": gap, "assignments": [
            {"partition_index": 0, "broker_ids": [node]},
            {"partition_index": 2, "broker_ids": [node]}]}])[gap],
        "same broker twice": _create(broker, [{"name": dup, "assignments": [
            {"partition_index": 0, "broker_ids": [node, node]}]}])[dup],
    }
    broker.wait_for_leaders(ok, 2)
    out["partitions"] = _partitions(broker, ok)
    return out


@scenario
def test_duplicate_names_in_one_request(broker):
    """A topic named twice in one CreateTopics, CreatePartitions or DeleteTopics: answered once,
    INVALID_REQUEST, and left as it was; the request's other topic is acted on (answers are
    compared by name: clients match them so)."""
    dup, other = unique("conformance-dup"), unique("conformance-other")
    created = broker.call(apis.CREATE_TOPICS, 4, timeout_ms=30000, topics=[
        {"name": n, "num_partitions": 1, "replication_factor": 1} for n in (dup, other, dup)])
    out = {"create": sorted((t["name"] == dup, errors.name(t["error_code"]))
                            for t in created["topics"]),
           "dup after create": _partitions(broker, dup)}
    grow, keep = broker.topic(), broker.topic()
    grown = broker.call(apis_admin.CREATE_PARTITIONS, 2, timeout_ms=30000, topics=[
        {"name": keep, "count": 2, "assignments": None},
        {"name": grow, "count": 2, "assignments": None},
        {"name": keep, "count": 3, "assignments": None}])
    out["create partitions"] = sorted((t["name"] == keep, errors.name(t["error_code"]))
                                      for t in grown["results"])
    broker.wait_for_leaders(grow, 2)
    out["partitions after"] = [_partitions(broker, keep), _partitions(broker, grow)]
    gone, absent = broker.topic(), unique("conformance-absent")
    deleted = broker.call(apis_admin.DELETE_TOPICS, 4, timeout_ms=30000,
                          topic_names=[keep, gone, absent, keep])
    out["delete"] = sorted(({keep: "dup", gone: "gone", absent: "absent"}[t["name"]],
                            errors.name(t["error_code"])) for t in deleted["responses"])
    out["dup after delete"] = _partitions(broker, keep)
    return out


# --- CreatePartitions ---------------------------------------------------------------------------

def _add_partitions(broker, topic, count, validate_only=False, assignments=None):
    answer = broker.call(apis_admin.CREATE_PARTITIONS, 2, timeout_ms=30000,
                         validate_only=validate_only, topics=[
                             {"name": topic, "count": count, "assignments": assignments}])
    return errors.name(answer["results"][0]["error_code"])


@scenario
def test_create_partitions(broker):
    """CreatePartitions only grows a topic: 1 -> 3 works (validate_only first changes nothing),
    the same count or fewer get INVALID_PARTITIONS, an unknown topic
    UNKNOWN_TOPIC_OR_PARTITION; records already written stay in partition 0."""
    name = broker.topic()
    broker.produce(name, 0, records.batch([b"a", b"b"]))
    out = {"validate_only": _add_partitions(broker, name, 3, validate_only=True),
           "after validate_only": _partitions(broker, name),
           "grow": _add_partitions(broker, name, 3)}
    broker.wait_for_leaders(name, 3)
    out["after grow"] = _partitions(broker, name)
    out["same"] = _add_partitions(broker, name, 3)
    out["fewer"] = _add_partitions(broker, name, 2)
    out["unknown topic"] = _add_partitions(broker, unique("conformance-absent"), 2)
    out["new partition empty"] = broker.list_offset(name, 2, -1)["offset"]
    out["old partition kept"] = broker.list_offset(name, 0, -1)["offset"]
    return out


@scenario
def test_create_partitions_with_assignments(broker):
    """New partitions placed by hand: one assignment per new partition (NONE); a count of
    assignments that does not match the new partitions, or an unknown broker id:
    INVALID_REPLICA_ASSIGNMENT."""
    node = _node_id(broker)
    name = broker.topic()
    return {"too few": _add_partitions(broker, name, 3, assignments=[{"broker_ids": [node]}]),
            "unknown broker": _add_partitions(broker, name, 2,
                                              assignments=[{"broker_ids": [node + 1000]}]),
            "ok": _add_partitions(broker, name, 3, assignments=[{"broker_ids": [node]},
                                                                 {"broker_ids": [node]}])}


# --- DeleteTopics -------------------------------------------------------------------------------

def _delete_topics(broker, topics, version=4):
    answer = broker.call(apis_admin.DELETE_TOPICS, version, topic_names=topics,
                         timeout_ms=30000)
    return {r["name"]: errors.name(r["error_code"]) for r in answer["responses"]}


@scenario
def test_delete_topics(broker):
    """DeleteTopics by name: NONE, and Metadata then answers UNKNOWN_TOPIC_OR_PARTITION; an
    unknown name gets UNKNOWN_TOPIC_OR_PARTITION; the name can be created again, empty."""
    name = broker.topic(partitions=2)
    broker.produce(name, 0, records.batch([b"x"]))
    absent = unique("conformance-absent")
    deleted = _delete_topics(broker, [name, absent])
    wait_until(lambda: _partitions(broker, name) == "UNKNOWN_TOPIC_OR_PARTITION",
               f"{name} to be gone")
    again = {}

    def recreated():
        again.update(_create(broker, [{"name": name, "num_partitions": 1}]))
        return again[name] != "TOPIC_ALREADY_EXISTS"
    wait_until(recreated, f"{name} to be created again")
    broker.wait_for_leaders(name, 1)
    return {"deleted": deleted[name], "absent": deleted[absent],
            "delete again": _delete_topics(broker, [name + "-no"])[name + "-no"],
            "recreated": again[name], "partitions": _partitions(broker, name),
            "empty": broker.list_offset(name, 0, -1)["offset"]}


# --- DeleteRecords ------------------------------------------------------------------------------

def _delete_records(broker, topic, partition, offset):
    answer = broker.call(apis_admin.DELETE_RECORDS, 2, timeout_ms=30000, topics=[
        {"name": topic, "partitions": [{"partition_index": partition, "offset": offset}]}])
    p = answer["topics"][0]["partitions"][0]
    return errors.name(p["error_code"]), p["low_watermark"]


@scenario
def test_delete_records(broker):
    """DeleteRecords moves the log start offset: to an offset inside the log (3 of 0..5): low
    watermark 3, ListOffsets EARLIEST 3, a Fetch from 0 OFFSET_OUT_OF_RANGE, a Fetch from 3
    starts with the batch holding offset 3, the next Produce's log_start_offset is 3; below
    the current start: no move; past the high watermark: OFFSET_OUT_OF_RANGE; -1: up to the
    high watermark."""
    name = broker.topic()
    for i in range(3):
        broker.produce(name, 0, records.batch([b"%d" % (2 * i), b"%d" % (2 * i + 1)]))
    out = {"to 3": _delete_records(broker, name, 0, 3),
           "earliest": broker.list_offset(name, 0, -2)["offset"],
           "latest": broker.list_offset(name, 0, -1)["offset"]}
    below = broker.fetch(name, 0, 0)
    out["fetch 0"] = (errors.name(below["error_code"]), below["log_start_offset"],
                      below["high_watermark"])
    at = broker.fetch(name, 0, 3)
    out["fetch 3"] = (errors.name(at["error_code"]), at["log_start_offset"],
                      [(b.base_offset, b.last_offset) for b in at["batches"]])
    out["back to 1"] = _delete_records(broker, name, 0, 1)
    out["past hw"] = _delete_records(broker, name, 0, 100)
    produced = broker.produce(name, 0, records.batch([b"6"]))
    out["produce"] = (errors.name(produced["error_code"]), produced["base_offset"],
                      produced["log_start_offset"])
    out["to hw (-1)"] = _delete_records(broker, name, 0, -1)
    out["earliest after -1"] = broker.list_offset(name, 0, -2)["offset"]
    out["fetch at hw"] = errors.name(broker.fetch(name, 0, 7)["error_code"])
    out["unknown partition"] = _delete_records(broker, name, 4, 0)[0]
    out["unknown topic"] = _delete_records(broker, unique("conformance-absent"), 0, 0)[0]
    return out


# --- DescribeConfigs ----------------------------------------------------------------------------

# Well-known topic configs whose value, source and flags clients rely on.
TOPIC_KEYS = ["cleanup.policy", "retention.ms", "retention.bytes", "min.insync.replicas",
              "segment.bytes", "segment.ms", "max.message.bytes", "message.timestamp.type",
              "compression.type", "unclean.leader.election.enable", "min.compaction.lag.ms",
              "delete.retention.ms", "min.cleanable.dirty.ratio", "file.delete.delay.ms",
              "message.downconversion.enable", "max.compaction.lag.ms", "segment.jitter.ms",
              "preallocate", "flush.messages", "flush.ms", "index.interval.bytes"]

# Settings the Kafka harness gives its broker (tests/kafka/kafka_cluster.py test_settings):
# there their topic defaults come from a STATIC_BROKER_CONFIG with the harness's value, on the
# bundled broker from Kafka's DEFAULT_CONFIG. Only their flags are compared.
HARNESS_TUNED = {"segment.bytes", "min.insync.replicas"}


def _describe(broker, resource_type, name, keys=None, synonyms=False, version=2):
    answer = broker.call(apis_admin.DESCRIBE_CONFIGS, version, include_synonyms=synonyms,
                         resources=[{"resource_type": resource_type, "resource_name": name,
                                     "configuration_keys": keys}])
    return answer["results"][0]


def _config_facts(result, with_synonyms=False):
    """name -> (value, source, read_only, is_sensitive[, synonyms]) of a DescribeConfigs
    result, harness-tuned values left out."""
    out = {}
    for c in result["configs"]:
        fact = [c["value"], SOURCES.get(c["config_source"]), c["read_only"], c["is_sensitive"]]
        if c["name"] in HARNESS_TUNED:
            fact[:2] = ["(harness)", "(harness)"]
        if with_synonyms:
            fact.append([(s["name"], s["value"], SOURCES.get(s["source"]))
                         for s in c["synonyms"]])
        out[c["name"]] = fact
    return out


RETENTION = ("time-based retention is off by default on the bundled broker (README, Limits: "
             "retention.ms=-1, the broker's log.retention.ms=-1, no log.retention.hours), so "
             "that old timestamps in tests do not make records disappear; Kafka's default is "
             "7 days (log.retention.hours=168: retention.ms=604800000, no broker synonym "
             "listed)")


@scenario(differs={"retention.ms": RETENTION})
def test_describe_configs_topic_defaults(broker):
    """A topic created without configs: each well-known config's value, its source
    (DEFAULT_CONFIG: no broker override) and read_only/is_sensitive flags, at v1 and v2; a
    key list names the configs returned; no error."""
    name = broker.topic()
    v1 = _config_facts(_describe(broker, TOPIC, name, TOPIC_KEYS, version=1))
    v2 = _describe(broker, TOPIC, name, TOPIC_KEYS, version=2)
    facts = _config_facts(v2)
    retention = facts.pop("retention.ms")
    assert v1.pop("retention.ms") == retention
    return {"error_code": v2["error_code"], "v1": v1, "v2": facts, "retention.ms": retention,
            "resource": (v2["resource_type"], v2["resource_name"] == name)}


@scenario(differs={"retention.ms synonyms": RETENTION})
def test_describe_configs_topic_overrides_and_synonyms(broker):
    """A topic created with configs: those report DYNAMIC_TOPIC_CONFIG with the topic's value;
    with include_synonyms each config lists where its value could come from, the topic's own
    first, then the broker's (log.cleanup.policy, message.max.bytes...)."""
    name = broker.topic(configs={"retention.ms": "3600000", "cleanup.policy": "compact",
                                 "max.message.bytes": "200000",
                                 "message.timestamp.type": "LogAppendTime"})
    keys = ["retention.ms", "cleanup.policy", "max.message.bytes", "message.timestamp.type",
            "compression.type", "retention.bytes", "min.compaction.lag.ms"]
    synonyms = _config_facts(_describe(broker, TOPIC, name, keys, synonyms=True, version=1),
                             with_synonyms=True)
    return {"plain": _config_facts(_describe(broker, TOPIC, name, keys, version=1)),
            "synonyms": {k: v for k, v in synonyms.items() if k != "retention.ms"},
            "retention.ms synonyms": synonyms["retention.ms"]}


@scenario
def test_describe_configs_all_topic_configs(broker):
    """No key list (null) and an empty one both ask for every config of the topic: the same
    names from both brokers, none sensitive."""
    name = broker.topic()
    every = _describe(broker, TOPIC, name, None)
    empty = _describe(broker, TOPIC, name, [])
    return {"null": sorted(c["name"] for c in every["configs"]),
            "empty same as null": sorted(c["name"] for c in empty["configs"]) ==
            sorted(c["name"] for c in every["configs"]),
            "sensitive": [c["name"] for c in every["configs"] if c["is_sensitive"]]}


@scenario
def test_describe_configs_unknown_and_invalid_topic(broker):
    """An unknown topic: UNKNOWN_TOPIC_OR_PARTITION, no configs; an invalid name:
    INVALID_TOPIC_EXCEPTION; an unknown key of a real topic: left out, no error."""
    name = broker.topic()
    unknown = _describe(broker, TOPIC, unique("conformance-absent"), ["retention.ms"])
    invalid = _describe(broker, TOPIC, "bad name", ["retention.ms"])
    key = _describe(broker, TOPIC, name, ["no.such.config", "retention.ms"])
    return {"unknown": (errors.name(unknown["error_code"]), unknown["configs"]),
            "invalid": errors.name(invalid["error_code"]),
            "unknown key": (errors.name(key["error_code"]), [c["name"] for c in key["configs"]])}


# Broker settings both brokers have, the Kafka harness's among them (offsets.topic.* and
# transaction.state.log.*: 1, STATIC_BROKER_CONFIG on both).
BROKER_KEYS = ["auto.create.topics.enable", "num.partitions", "log.cleanup.policy",
               "message.max.bytes", "compression.type", "log.message.timestamp.type",
               "delete.topic.enable", "transaction.max.timeout.ms", "socket.request.max.bytes",
               "offsets.topic.replication.factor", "transaction.state.log.replication.factor",
               "transaction.state.log.min.isr", "unclean.leader.election.enable"]
RETENTION_KEYS = ["log.retention.hours", "log.retention.ms", "log.retention.bytes"]


@scenario(differs={"retention": RETENTION})
def test_describe_configs_broker(broker):
    """The BROKER resource, named by the broker's id: well-known settings' values and sources
    (DEFAULT_CONFIG unless the broker was started with another value), read-only unless Kafka
    can change them while it runs (KIP-226: message.max.bytes, log.cleanup.policy...);
    another broker's id: INVALID_REQUEST (a broker describes only itself)."""
    node = str(_node_id(broker))
    facts = _config_facts(_describe(broker, BROKER, node, BROKER_KEYS + RETENTION_KEYS,
                                    version=1))
    other = _describe(broker, BROKER, str(int(node) + 1000), BROKER_KEYS)
    return {"values": {k: facts.get(k, [None, None])[:2] for k in BROKER_KEYS},
            "read_only": {k: v[2] for k, v in facts.items() if k in BROKER_KEYS},
            "sensitive": [k for k, v in facts.items() if v[3]],
            "retention": {k: facts.get(k, [None, None])[:2] for k in RETENTION_KEYS},
            "other broker": errors.name(other["error_code"])}


# --- AlterConfigs and IncrementalAlterConfigs --------------------------------------------------

def _incremental(broker, resource_type, name, changes, validate_only=False):
    answer = broker.call(apis_admin.INCREMENTAL_ALTER_CONFIGS, 1, validate_only=validate_only,
                         resources=[{"resource_type": resource_type, "resource_name": name,
                                     "configs": [{"name": k, "config_operation": op, "value": v}
                                                 for k, op, v in changes]}])
    return errors.name(answer["responses"][0]["error_code"])


def _alter(broker, resource_type, name, configs, validate_only=False):
    answer = broker.call(apis_admin.ALTER_CONFIGS, 1, validate_only=validate_only, resources=[
        {"resource_type": resource_type, "resource_name": name,
         "configs": [{"name": k, "value": v} for k, v in configs.items()]}])
    return errors.name(answer["responses"][0]["error_code"])


def _topic_configs(broker, name, keys):
    return {k: v[:2] for k, v in _config_facts(_describe(broker, TOPIC, name, keys)).items()}


def _settled_topic_configs(broker, name, keys, expected, timeout=10.0):
    """_topic_configs once they show `expected` ({key: value}), or after `timeout` s (then the
    comparison shows the difference). Kafka applies a topic's config change from its metadata
    log a moment after answering the alter."""
    deadline = time.monotonic() + timeout
    while True:
        configs = _topic_configs(broker, name, keys)
        if all(configs.get(k, [None])[0] == v for k, v in expected.items()) or \
                time.monotonic() > deadline:
            return configs
        time.sleep(0.05)


@scenario
def test_incremental_alter_configs_topic(broker):
    """IncrementalAlterConfigs on a topic: SET shows as DYNAMIC_TOPIC_CONFIG, DELETE returns
    the config to its default, APPEND/SUBTRACT edit a list config (APPEND on another:
    INVALID_CONFIG); an invalid value or an unknown config name: INVALID_CONFIG and nothing
    applies (not even the valid change next to it); a null value to SET or a key twice:
    INVALID_REQUEST; validate_only applies nothing; an unknown topic:
    UNKNOWN_TOPIC_OR_PARTITION. (An unknown operation code is left out: Kafka 3.9 answers it
    UNKNOWN_SERVER_ERROR, an unhandled exception.)"""
    name = broker.topic()
    keys = ["delete.retention.ms", "cleanup.policy", "segment.ms"]
    out = {"set": _incremental(broker, TOPIC, name, [("delete.retention.ms", SET, "60000"),
                                                     ("segment.ms", SET, "120000")])}
    out["after set"] = _settled_topic_configs(
        broker, name, keys, {"delete.retention.ms": "60000", "segment.ms": "120000"})
    out["delete"] = _incremental(broker, TOPIC, name, [("delete.retention.ms", DELETE, None)])
    out["after delete"] = _settled_topic_configs(broker, name, keys,
                                                 {"delete.retention.ms": "86400000"})
    out["append"] = _incremental(broker, TOPIC, name, [("cleanup.policy", APPEND, "compact")])
    out["after append"] = _settled_topic_configs(broker, name, keys,
                                                 {"cleanup.policy": "delete,compact"})
    out["subtract"] = _incremental(broker, TOPIC, name, [("cleanup.policy", SUBTRACT, "delete")])
    out["after subtract"] = _settled_topic_configs(broker, name, keys,
                                                   {"cleanup.policy": "compact"})
    out["append to non-list"] = _incremental(broker, TOPIC, name,
                                             [("retention.ms", APPEND, "5")])
    out["invalid value"] = _incremental(broker, TOPIC, name, [("segment.ms", SET, "7"),
                                                              ("retention.ms", SET, "soon")])
    out["unknown name"] = _incremental(broker, TOPIC, name, [("segment.ms", SET, "7"),
                                                             ("no.such.config", SET, "1")])
    out["null value"] = _incremental(broker, TOPIC, name, [("segment.ms", SET, None)])
    out["key twice"] = _incremental(broker, TOPIC, name, [("segment.ms", SET, "7"),
                                                          ("segment.ms", SET, "8")])
    out["validate_only"] = _incremental(broker, TOPIC, name, [("segment.ms", SET, "7")],
                                        validate_only=True)
    out["after refused"] = _topic_configs(broker, name, keys)
    out["delete unset"] = _incremental(broker, TOPIC, name, [("retention.bytes", DELETE, None)])
    out["unknown topic"] = _incremental(broker, TOPIC, unique("conformance-absent"),
                                        [("segment.ms", SET, "60000")])
    return out


@scenario
def test_alter_configs_topic_replaces_all(broker):
    """The legacy AlterConfigs sets a topic's whole config: what is not listed returns to its
    default; an invalid value or unknown name: INVALID_CONFIG, nothing changes; validate_only
    changes nothing; an unknown topic: UNKNOWN_TOPIC_OR_PARTITION."""
    name = broker.topic(configs={"segment.ms": "120000"})
    keys = ["retention.ms", "segment.ms", "cleanup.policy"]
    out = {"set": _alter(broker, TOPIC, name, {"retention.ms": "60000"})}
    out["after set"] = _settled_topic_configs(
        broker, name, keys, {"retention.ms": "60000", "segment.ms": "604800000"})
    out["invalid"] = _alter(broker, TOPIC, name, {"retention.ms": "x"})
    out["unknown"] = _alter(broker, TOPIC, name, {"no.such.config": "1"})
    out["validate_only"] = _alter(broker, TOPIC, name, {"cleanup.policy": "compact"},
                                  validate_only=True)
    out["after refused"] = _topic_configs(broker, name, keys)
    out["unknown topic"] = _alter(broker, TOPIC, unique("conformance-absent"),
                                  {"retention.ms": "1"})
    return out


@scenario
def test_alter_configs_broker(broker):
    """Broker configs altered on the broker's own id (validate_only, so that the shared Kafka
    keeps its settings): a dynamic one (log.retention.ms, message.max.bytes) or an unknown
    name; a static one (auto.create.topics.enable, num.partitions): INVALID_REQUEST from both;
    no change at all: NONE; another broker's id: INVALID_REQUEST."""
    node = str(_node_id(broker))
    return {
        "dynamic": [_alter(broker, BROKER, node, {"log.retention.ms": "3600000"},
                           validate_only=True),
                    _incremental(broker, BROKER, node, [("message.max.bytes", SET, "2000000")],
                                 validate_only=True),
                    _alter(broker, BROKER, node, {"no.such.config": "1"}, validate_only=True)],
        "static": [_alter(broker, BROKER, node, {"auto.create.topics.enable": "false"},
                          validate_only=True),
                   _incremental(broker, BROKER, node, [("num.partitions", SET, "3")],
                                validate_only=True)],
        "empty change": [_alter(broker, BROKER, node, {}, validate_only=True),
                         _incremental(broker, BROKER, node, [], validate_only=True)],
        "other broker": _alter(broker, BROKER, str(int(node) + 1000),
                               {"log.retention.ms": "3600000"}, validate_only=True),
    }


# --- Dynamic broker configs (KIP-226) ------------------------------------------------------------

# A dynamic broker config whose change leaves the shared Kafka's other scenarios alone: the
# broker default of the topic config delete.retention.ms.
DYN_KEY = "log.cleaner.delete.retention.ms"
DYN_TOPIC_KEY = "delete.retention.ms"


def _dynamic_facts(broker, resource_type, name, keys):
    return _config_facts(_describe(broker, resource_type, name, keys, synonyms=True,
                                   version=1), with_synonyms=True)


def _wait_for_topic_value(broker, topic, key, value):
    """Dynamic configs reach a Kafka broker through its metadata log, a moment after the
    answer: waits until the topic shows `value`."""
    wait_until(lambda: _config_facts(_describe(broker, TOPIC, topic, [key]))[key][0] == value,
               f"{key}={value} on topic {topic}")


@scenario
def test_dynamic_broker_config_cluster_default(broker):
    """IncrementalAlterConfigs SET on the cluster-wide default (resource name ""): the default
    resource lists it as DYNAMIC_DEFAULT_BROKER_CONFIG, the broker's own resource shows it
    first in its synonyms, and a topic without an override inherits it with that source and
    the broker config's name as synonym; DELETE returns everything to the default."""
    node = str(_node_id(broker))
    name = broker.topic()
    out = {}
    try:
        out["set"] = _incremental(broker, BROKER, "", [(DYN_KEY, SET, "3600000")])
        _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "3600000")
        out["default resource"] = _dynamic_facts(broker, BROKER, "", [DYN_KEY])
        out["broker resource"] = _dynamic_facts(broker, BROKER, node, [DYN_KEY])
        out["topic"] = _dynamic_facts(broker, TOPIC, name, [DYN_TOPIC_KEY])
    finally:
        out["delete"] = _incremental(broker, BROKER, "", [(DYN_KEY, DELETE, None)])
    _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "86400000")
    out["default resource after delete"] = _dynamic_facts(broker, BROKER, "", [DYN_KEY])
    out["topic after delete"] = _dynamic_facts(broker, TOPIC, name, [DYN_TOPIC_KEY])
    return out


@scenario
def test_dynamic_broker_config_per_broker(broker):
    """A broker's own value (resource name: its id) wins over the cluster-wide default: source
    DYNAMIC_BROKER_CONFIG, synonyms in Kafka's order (DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG, DEFAULT_CONFIG), on the broker and on a topic; a topic's own
    override wins over both; the legacy AlterConfigs replaces the broker's whole dynamic set."""
    node = str(_node_id(broker))
    name = broker.topic()
    own = broker.topic(configs={DYN_TOPIC_KEY: "120000"})
    out = {}
    try:
        out["default"] = _incremental(broker, BROKER, "", [(DYN_KEY, SET, "3600000")])
        out["broker"] = _incremental(broker, BROKER, node, [(DYN_KEY, SET, "7200000")])
        _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "7200000")
        out["broker resource"] = _dynamic_facts(broker, BROKER, node, [DYN_KEY])
        out["topic"] = _dynamic_facts(broker, TOPIC, name, [DYN_TOPIC_KEY])
        out["topic override"] = _dynamic_facts(broker, TOPIC, own, [DYN_TOPIC_KEY])
        out["broker delete"] = _incremental(broker, BROKER, node, [(DYN_KEY, DELETE, None)])
        _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "3600000")
        out["topic after broker delete"] = _dynamic_facts(broker, TOPIC, name, [DYN_TOPIC_KEY])
        out["legacy set"] = _alter(broker, BROKER, node, {DYN_KEY: "1800000"})
        _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "1800000")
        out["legacy empty"] = _alter(broker, BROKER, node, {})
        _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "3600000")
    finally:
        _incremental(broker, BROKER, node, [(DYN_KEY, DELETE, None)])
        out["default delete"] = _incremental(broker, BROKER, "", [(DYN_KEY, DELETE, None)])
    _wait_for_topic_value(broker, name, DYN_TOPIC_KEY, "86400000")
    return out


@scenario
def test_dynamic_broker_config_refusals(broker):
    """What a dynamic change may not do (all validate_only, so that nothing sticks on the
    shared Kafka): a static setting (num.partitions, log.dirs, broker.id), a value of the wrong
    type or out of range, a thread pool resized beyond double, an SSL setting without a
    listener prefix, a per-broker setting on the cluster-wide default: INVALID_REQUEST; APPEND
    to a config that is not a list: INVALID_CONFIG; an unknown name, APPEND to a list config
    and a valid change: NONE; validate_only keeps nothing; another broker's id or a name
    that is not a number: INVALID_REQUEST."""
    node = str(_node_id(broker))

    def check(name, changes):
        return _incremental(broker, BROKER, name, changes, validate_only=True)

    out = {
        "static": [check("", [("num.partitions", SET, "3")]),
                   check(node, [("log.dirs", SET, "/tmp/elsewhere")]),
                   check(node, [("broker.id", SET, "7")]),
                   _alter(broker, BROKER, "", {"auto.create.topics.enable": "false"},
                          validate_only=True)],
        "static next to a dynamic one": check("", [("num.partitions", SET, "3"),
                                                   (DYN_KEY, SET, "3600000")]),
        "not a number": check("", [("log.retention.ms", SET, "soon")]),
        "below the minimum": check("", [("log.segment.bytes", SET, "3")]),
        "thread pool beyond double": check("", [("num.io.threads", SET, "100")]),
        "ssl without listener": check(node, [("ssl.keystore.location", SET, "/tmp/k.jks")]),
        "per-broker on the default": [
            check("", [("listener.name.plaintext.ssl.keystore.location", SET, "/tmp/k.jks")]),
            check("", [("advertised.listeners", SET, "PLAINTEXT://localhost:9")])],
        "append to non-list": check("", [("message.max.bytes", APPEND, "1")]),
        "unknown name": [check("", [("no.such.config", SET, "1")]),
                         check(node, [("no.such.config", SET, "1")])],
        "append to list": check("", [("log.cleanup.policy", APPEND, "compact")]),
        "valid": [check("", [(DYN_KEY, SET, "3600000"), ("num.io.threads", SET, "9")]),
                  _alter(broker, BROKER, node, {"message.max.bytes": "2000000"},
                         validate_only=True)],
        "other broker": check(str(int(node) + 1000), [(DYN_KEY, SET, "3600000")]),
        "not a number name": check("one", [(DYN_KEY, SET, "3600000")]),
    }
    out["nothing kept"] = _dynamic_facts(broker, BROKER, "", [DYN_KEY, "num.io.threads",
                                                              "no.such.config"])
    return out


@scenario
def test_dynamic_message_max_bytes_takes_effect(broker):
    """message.max.bytes set on the cluster-wide default is the max.message.bytes of every topic
    without its own: a larger batch gets MESSAGE_TOO_LARGE there (once the change has reached
    the broker), a topic with its own max.message.bytes takes it; after DELETE the batch fits
    again."""
    plain = broker.topic()
    own = broker.topic(configs={"max.message.bytes": "100000"})
    big = records.batch([b"x" * 3000])

    def produced(topic):
        return errors.name(broker.produce(topic, 0, big)["error_code"])

    out = {}
    try:
        out["set"] = _incremental(broker, BROKER, "", [("message.max.bytes", SET, "2000")])
        wait_until(lambda: produced(plain) == "MESSAGE_TOO_LARGE",
                   "message.max.bytes=2000 to refuse a larger batch")
        out["plain"] = produced(plain)
        out["own"] = produced(own)
        out["described"] = _topic_configs(broker, plain, ["max.message.bytes"])
    finally:
        out["delete"] = _incremental(broker, BROKER, "", [("message.max.bytes", DELETE, None)])
    wait_until(lambda: produced(plain) == "NONE", "the batch to fit again")
    out["after delete"] = _topic_configs(broker, plain, ["max.message.bytes"])
    return out
