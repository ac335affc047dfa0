"""ApiVersions and Metadata: which APIs a broker offers, and how it answers for topics that do
not exist, cannot exist, are internal, or are being created on demand. Clients decide what to
send from the first and route every request by the second."""
import apis
import errors
import wire
from side_by_side import names, scenario, unique, wait_until

# Kafka 3.9's API keys by name, so that a difference reads as a name.
API_NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit",
    9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup",
    14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake",
    18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics", 21: "DeleteRecords",
    22: "InitProducerId", 23: "OffsetForLeaderEpoch", 24: "AddPartitionsToTxn",
    25: "AddOffsetsToTxn", 26: "EndTxn", 27: "WriteTxnMarkers", 28: "TxnOffsetCommit",
    29: "DescribeAcls", 30: "CreateAcls", 31: "DeleteAcls", 32: "DescribeConfigs",
    33: "AlterConfigs", 34: "AlterReplicaLogDirs", 35: "DescribeLogDirs", 36: "SaslAuthenticate",
    37: "CreatePartitions", 38: "CreateDelegationToken", 39: "RenewDelegationToken",
    40: "ExpireDelegationToken", 41: "DescribeDelegationToken", 42: "DeleteGroups",
    43: "ElectLeaders", 44: "IncrementalAlterConfigs", 45: "AlterPartitionReassignments",
    46: "ListPartitionReassignments", 47: "OffsetDelete", 48: "DescribeClientQuotas",
    49: "AlterClientQuotas", 50: "DescribeUserScramCredentials",
    51: "AlterUserScramCredentials", 55: "DescribeQuorum", 57: "UpdateFeatures",
    60: "DescribeCluster", 61: "DescribeProducers", 64: "UnregisterBroker",
    65: "DescribeTransactions", 66: "ListTransactions", 68: "ConsumerGroupHeartbeat",
    69: "ConsumerGroupDescribe", 71: "GetTelemetrySubscriptions", 72: "PushTelemetry",
    74: "ListClientMetricsResources", 75: "DescribeTopicPartitions",
    80: "AddRaftVoter", 81: "RemoveRaftVoter",
}

# The APIs the bundled broker serves: all of them Kafka offers too. The version ranges of these
# are compared; the APIs outside it are listed by name.
SERVED = [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
          27, 28, 29, 30, 31, 32, 33, 36, 37, 42, 44, 47, 50, 51, 61, 65, 66]


def _name(key):
    return API_NAMES.get(key, str(key))


def _ranges(answer):
    return {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}


# APIs of which the bundled broker offers fewer versions than Kafka 3.9, each declared apart
# (a version added later makes its declaration fail, so that the README is kept true).
FEWER_VERSIONS = ["Produce", "Fetch", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch",
                  "FindCoordinator", "ApiVersions", "CreateTopics", "DeleteTopics",
                  "InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn",
                  "TxnOffsetCommit", "DescribeConfigs"]


def _api_versions_facts(answer):
    ranges = _ranges(answer)
    assert set(SERVED) <= set(ranges), sorted(set(SERVED) - set(ranges))
    facts = {
        "error_code": answer["error_code"],
        # Fetch's oldest versions (message format v0/v1) are apart: see below.
        "min_versions": {_name(k): ranges[k][0] for k in SERVED if k != 1},
        "fetch_min_version": ranges[1][0],
        "max_versions": {_name(k): ranges[k][1] for k in SERVED
                         if _name(k) not in FEWER_VERSIONS},
        "not_served": sorted(_name(k) for k in ranges if k not in SERVED),
    }
    for k in SERVED:
        if _name(k) in FEWER_VERSIONS:
            facts[f"max_version {_name(k)}"] = ranges[k][1]
    return facts


_DIFFERENCES = {
    "fetch_min_version": "the bundled broker serves Fetch from v4 (record batch v2 only): "
                         "v0-v3 would need message format v0/v1 down-conversion",
    "not_served": "not implemented: delegation tokens, quotas, log dirs, "
                  "reassignments, leader elections, KRaft quorum and features, KIP-848 "
                  "consumer groups, client metrics, DescribeCluster, DescribeTopicPartitions",
}
_DIFFERENCES.update({
    f"max_version {name}": "the bundled broker offers fewer versions of this API than Kafka "
                           "3.9 (README: the newest versions it serves, and why)"
    for name in FEWER_VERSIONS})


@scenario(differs=_DIFFERENCES)
def test_api_versions_v3(broker):
    """ApiVersions v3 (flexible, with the client's name): no error, and the same oldest version
    of every API both brokers serve (a client picks the newest version both speak)."""
    return _api_versions_facts(broker.call(apis.API_VERSIONS, 3, client_software_name="conf",
                                           client_software_version="1.0"))


@scenario(differs=_DIFFERENCES)
def test_api_versions_v0(broker):
    """ApiVersions v0, as a client of before KIP-511 sends it: the same list as v3."""
    v0 = broker.call(apis.API_VERSIONS, 0)
    v3 = broker.call(apis.API_VERSIONS, 3, client_software_name="conf",
                     client_software_version="1.0")
    facts = _api_versions_facts(v0)
    facts["same_as_v3"] = _ranges(v0) == _ranges(v3)
    return facts


# ApiVersions at a version no broker speaks: the request header is v2 (flexible), the body empty.
_API_VERSIONS_FUTURE = wire.Api(18, "ApiVersions", 3, request=[],
                                response=apis.API_VERSIONS.response)


@scenario(differs={"api_versions_max": "the bundled broker offers ApiVersions up to v3 "
                                       "(Kafka 3.9: v4)"})
def test_api_versions_unsupported_version(broker):
    """ApiVersions v127: UNSUPPORTED_VERSION in a v0 answer (KIP-511) that lists ApiVersions'
    own range only, so that the client retries at a version the broker speaks."""
    with broker.connect() as c:
        c.correlation_id += 1
        c.send_raw(wire.encode_request(_API_VERSIONS_FUTURE, 127, c.correlation_id,
                                       c.client_id, {}))
        correlation_id, answer = wire.decode_response(apis.API_VERSIONS, 0, c.receive_frame())
        assert correlation_id == c.correlation_id
        # The connection stays open: the retry goes on it.
        retry = c.call(apis.API_VERSIONS, 3, client_software_name="conf",
                       client_software_version="1.0")
    ranges = _ranges(answer)
    return {"error_code": answer["error_code"], "listed": sorted(_name(k) for k in ranges),
            "api_versions_min": ranges.get(18, (None, None))[0],
            "api_versions_max": ranges.get(18, (None, None))[1],
            "retry_error_code": retry["error_code"]}


def _metadata(broker, names, allow_auto_topic_creation=False, version=8):
    topics = None if names is None else [{"name": n} for n in names]
    return broker.call(apis.METADATA, version, topics=topics,
                       allow_auto_topic_creation=allow_auto_topic_creation)


def _topic(broker, name, **kwargs):
    return _metadata(broker, [name], **kwargs)["topics"][0]


@scenario
def test_metadata_unknown_topic_without_auto_creation(broker):
    """An unknown topic asked for with allow_auto_topic_creation=false: UNKNOWN_TOPIC_OR_PARTITION
    with no partitions, and it stays unknown (a consumer must not create topics)."""
    name = unique("conformance-absent")
    first = _topic(broker, name)
    again = _topic(broker, name)
    return [(t["name"] == name, errors.name(t["error_code"]), t["partitions"], t["is_internal"])
            for t in (first, again)]


@scenario
def test_metadata_auto_creates_a_topic(broker):
    """allow_auto_topic_creation=true with auto.create.topics.enable (Kafka's default): the
    first answer is UNKNOWN_TOPIC_OR_PARTITION (Kafka 3.9 asks its controller to create the
    topic and answers at once), later ones find it with num.partitions (1) partitions."""
    name = unique("conformance-auto")
    first = _topic(broker, name, allow_auto_topic_creation=True)
    found = {}

    def created():
        found.update(_topic(broker, name, allow_auto_topic_creation=True))
        return found["error_code"] == 0 and all(p["leader_id"] >= 0
                                                for p in found["partitions"])
    wait_until(created, f"{name} to be created")
    return {"first": (errors.name(first["error_code"]), len(first["partitions"])),
            "created": (errors.name(found["error_code"]), found["is_internal"],
                        [(p["partition_index"], errors.name(p["error_code"]), p["leader_epoch"])
                         for p in found["partitions"]])}


@scenario
def test_metadata_v3_auto_creates_without_asking(broker):
    """Metadata v0-v3 has no allow_auto_topic_creation field: the broker creates unknown topics
    whenever it is allowed to (the first answer as above)."""
    name = unique("conformance-auto-v3")
    first = _topic(broker, name, version=3)
    wait_until(lambda: _topic(broker, name, version=3)["error_code"] == 0,
               f"{name} to be created")
    return {"first_error_code": first["error_code"],
            "partitions": len(_topic(broker, name)["partitions"])}


@scenario
def test_metadata_invalid_topic_names(broker):
    """Names Kafka can never create ('..', 250 characters, a space, a slash, empty) get
    INVALID_TOPIC_EXCEPTION whether or not auto-creation is allowed, and none is created."""
    bad = ["..", ".", "a" * 250, "bad name", "bad/name", "", "t\u00e9"]
    return {repr(n[:12]): names(_topic(broker, n, allow_auto_topic_creation=allow)["error_code"]
                                 for allow in (False, True, False)) for n in bad}


@scenario
def test_metadata_null_topics_lists_all_and_empty_lists_none(broker):
    """v1+: a null topic list asks for every topic, an empty one for none (v0: empty is all)."""
    name = broker.topic(partitions=2)
    everything = _metadata(broker, None)
    nothing = _metadata(broker, [])
    v0_empty = broker.call(apis.METADATA, 0, topics=[])
    ours = [t for t in everything["topics"] if t["name"] == name]
    return {"all_has_ours": [(errors.name(t["error_code"]), len(t["partitions"])) for t in ours],
            "empty_list": nothing["topics"],
            "v0_empty_has_ours": any(t["name"] == name for t in v0_empty["topics"]),
            "brokers": len(everything["brokers"]),
            "controller_is_a_broker": everything["controller_id"] in
            [b["node_id"] for b in everything["brokers"]],
            "has_cluster_id": bool(everything["cluster_id"])}


@scenario(differs={
    "consumer_offsets": "the single bundled broker keeps group and transaction state outside "
                        "topics: no __consumer_offsets or __transaction_state in Metadata "
                        "(a cluster of bundled brokers, --brokers N, has them)"})
def test_metadata_internal_topics_are_flagged(broker):
    """__consumer_offsets exists once a group coordinator was asked for, is_internal=true (so
    that consumers can leave it out of pattern subscriptions); a user topic is not internal."""
    group = unique("conformance-group")
    broker.coordinator(group, 0).close()
    name = broker.topic()
    offsets = _topic(broker, "__consumer_offsets")
    listed = {t["name"]: t["is_internal"] for t in _metadata(broker, None)["topics"]}
    return {"consumer_offsets": (errors.name(offsets["error_code"]), offsets["is_internal"],
                                 listed.get("__consumer_offsets")),
            "user_topic": (_topic(broker, name)["is_internal"], listed.get(name))}


@scenario
def test_metadata_leader_epoch_from_v7(broker):
    """v7+ carries each partition's leader epoch (0 for a new topic; clients use it to fence
    stale metadata and to truncate after a leader change); every partition listed once, in
    index order as a set."""
    name = broker.topic(partitions=3)
    v7 = _topic(broker, name, version=7)
    v8 = _topic(broker, name, version=8)
    return {v: sorted((p["partition_index"], errors.name(p["error_code"]), p["leader_epoch"],
                       len(p["replica_nodes"]), len(p["isr_nodes"]), p["offline_replicas"])
                      for p in t["partitions"]) for v, t in (("v7", v7), ("v8", v8))}
