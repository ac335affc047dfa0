"""The conformance harness: a scenario is a function of one broker that returns what it saw;
`@scenario` turns it into a pytest test that runs it on the bundled broker and on Apache Kafka
and wants the same observations from both.

    @scenario
    def test_produce_gives_consecutive_offsets(broker):
        topic = broker.topic()
        return [broker.produce(topic, 0, records.batch([b"a", b"b"]))["base_offset"]
                for _ in range(2)]

What a scenario returns is made readable before it is compared (`readable`: error codes become
names, throttle times go), so a scenario returns broker-independent facts only: offsets,
errors, counts, flags; never node ids, producer ids, member ids or timestamps the broker chose.
A difference that is understood and kept is declared where the scenario is, with its reason:

    @scenario(differs={"max_version": "the bundled broker offers Produce up to v8 (README)"})

The named top-level keys are left out of the comparison, and must still differ (a difference
that went away fails the test, so the README's list cannot go stale). Without a Kafka cluster the
bundled half still runs (with the scenario's own asserts) and the comparison skips, saying so.
"""
from __future__ import annotations

import json
import time
import uuid
from typing import Any, Callable, Dict, Iterable, Optional

import pytest

import apis
import errors
import records
from wire import Api, Connection


class Broker:
    """One broker under test, as its bootstrap address names it, with the calls every scenario
    family needs. `name` is "bundled" or "kafka"."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.host, self.port = host, int(port)

    def connect(self, host: Optional[str] = None, port: Optional[int] = None) -> Connection:
        return Connection(host or self.host, port or self.port)

    def call(self, api: Api, version: int, **fields: Any) -> Dict[str, Any]:
        """One request on a connection of its own."""
        with self.connect() as c:
            return c.call(api, version, **fields)

    # --- topics -------------------------------------------------------------------------------

    def topic(self, partitions: int = 1, configs: Optional[Dict[str, str]] = None,
              prefix: str = "conformance") -> str:
        """A new topic with a unique name, once its partitions have a leader."""
        name = unique(prefix)
        answer = self.call(apis.CREATE_TOPICS, 4, timeout_ms=30000, topics=[{
            "name": name, "num_partitions": partitions, "replication_factor": 1,
            "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}])
        error = answer["topics"][0]["error_code"]
        assert error == 0, f"CreateTopics {name}: {errors.name(error)}"
        self.wait_for_leaders(name, partitions)
        return name

    def wait_for_leaders(self, topic: str, partitions: int) -> None:
        def ready():
            md = self.call(apis.METADATA, 8, topics=[{"name": topic}],
                           allow_auto_topic_creation=False)
            parts = md["topics"][0]["partitions"]
            return len(parts) == partitions and all(p["leader_id"] >= 0 for p in parts)
        wait_until(ready, f"{topic}'s {partitions} partitions to have leaders")

        # Kafka's broker publishes a new leader in Metadata a moment before its replica
        # manager leads the partition (NOT_LEADER_OR_FOLLOWER to a Produce meanwhile): also
        # wait until every partition answers ListOffsets.
        def leading():
            answer = self.call(apis.LIST_OFFSETS, 1, replica_id=-1, topics=[{
                "name": topic, "partitions": [{"partition_index": i, "timestamp": -1}
                                              for i in range(partitions)]}])
            return all(p["error_code"] == 0 for p in answer["topics"][0]["partitions"])
        wait_until(leading, f"{topic}'s {partitions} partitions to be led")

    # --- data ---------------------------------------------------------------------------------

    def produce(self, topic: str, partition: int, batch: bytes, acks: int = -1, version: int = 8,
                transactional_id: Optional[str] = None,
                connection: Optional[Connection] = None) -> Dict[str, Any]:
        """The partition's answer to one Produce of `batch` (records.batch)."""
        fields = dict(transactional_id=transactional_id, acks=acks, timeout_ms=30000,
                      topic_data=[{"name": topic, "partition_data": [
                          {"index": partition, "records": batch}]}])
        if connection is not None:
            answer = connection.call(apis.PRODUCE, version, **fields)
        else:
            answer = self.call(apis.PRODUCE, version, **fields)
        return answer["responses"][0]["partition_responses"][0]

    def fetch(self, topic: str, partition: int, offset: int, isolation_level: int = 0,
              version: int = 11, max_bytes: int = 1 << 20) -> Dict[str, Any]:
        """The partition's answer to one Fetch from `offset`, its records parsed into `batches`
        (records.Batch)."""
        answer = self.call(apis.FETCH, version, replica_id=-1, max_wait_ms=0, min_bytes=0,
                           max_bytes=max_bytes, isolation_level=isolation_level, session_id=0,
                           session_epoch=-1, topics=[{"topic": topic, "partitions": [{
                               "partition": partition, "current_leader_epoch": -1,
                               "fetch_offset": offset, "log_start_offset": -1,
                               "partition_max_bytes": max_bytes}]}])
        out = answer["responses"][0]["partitions"][0]
        out["batches"] = records.parse(out.pop("records"))
        return out

    def list_offset(self, topic: str, partition: int, timestamp: int, version: int = 7,
                    isolation_level: int = 0) -> Dict[str, Any]:
        answer = self.call(apis.LIST_OFFSETS, version, replica_id=-1,
                           isolation_level=isolation_level, topics=[{
                               "name": topic, "partitions": [{
                                   "partition_index": partition, "current_leader_epoch": -1,
                                   "timestamp": timestamp, "max_num_offsets": 1}]}])
        return answer["topics"][0]["partitions"][0]

    # --- coordinators and producer ids ------------------------------------------------------

    def coordinator(self, key: str, key_type: int) -> Connection:
        """A connection to the coordinator of a group (key_type 0) or transactional id (1),
        once the broker names one (Kafka creates its internal topic on the first ask)."""
        found = {}

        def named():
            answer = self.call(apis.FIND_COORDINATOR, 3, key=key, key_type=key_type)
            found.update(answer)
            return answer["error_code"] == 0
        wait_until(named, f"a coordinator for {key!r}")
        return self.connect(found["host"], found["port"])

    def init_producer_id(self, transactional_id: Optional[str] = None,
                         timeout_ms: int = 60000) -> Dict[str, Any]:
        """InitProducerId v4, retried while the coordinator loads or finishes a transaction: the
        answer's producer_id and producer_epoch."""
        if transactional_id is None:
            answer = {}

            def given():
                answer.update(self.call(apis.INIT_PRODUCER_ID, 4, transactional_id=None,
                                        transaction_timeout_ms=timeout_ms, producer_id=-1,
                                        producer_epoch=-1))
                return errors.name(answer["error_code"]) not in RETRIABLE
            # Kafka's producer id manager answers COORDINATOR_LOAD_IN_PROGRESS just after start.
            wait_until(given, "a producer id")
            assert answer["error_code"] == 0, errors.name(answer["error_code"])
            return answer
        result = {}

        def done():
            with self.coordinator(transactional_id, 1) as c:
                answer = c.call(apis.INIT_PRODUCER_ID, 4, transactional_id=transactional_id,
                                transaction_timeout_ms=timeout_ms, producer_id=-1,
                                producer_epoch=-1)
            result.update(answer)
            return errors.name(answer["error_code"]) not in RETRIABLE
        wait_until(done, f"InitProducerId for {transactional_id!r}")
        assert result["error_code"] == 0, errors.name(result["error_code"])
        return result


# Errors a coordinator answers while it is not ready yet: asked again until it is.
RETRIABLE = {"COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR",
             "CONCURRENT_TRANSACTIONS"}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Polls `condition` until it holds; fails naming `what` after `timeout` s (a deadline for
    something that never happens, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:.0f} s for {what}")
        time.sleep(0.05)


def readable(value: Any) -> Any:
    """Error codes by name (any key ending in error_code), throttle times dropped, tuples as
    lists: the form in which the two brokers' observations are compared."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "throttle_time_ms":
                continue
            if isinstance(k, str) and k.endswith("error_code") and isinstance(v, int):
                out[k] = errors.name(v)
            else:
                out[k] = readable(v)
        return out
    if isinstance(value, (list, tuple)):
        return [readable(v) for v in value]
    if isinstance(value, records.Batch):
        return readable(value.__dict__)
    if isinstance(value, records.Record):
        return readable(value.__dict__)
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value


def _show(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, default=str)


def compare(ours: Any, theirs: Any, differs: Dict[str, str]) -> None:
    ours, theirs = readable(ours), readable(theirs)
    for key, reason in differs.items():
        assert isinstance(ours, dict) and key in ours and key in theirs, \
            f"a declared difference names {key!r}, which the scenario does not return"
        assert ours[key] != theirs[key], (
            f"{key!r} no longer differs from Kafka ({_show(ours[key])}): take it out of the "
            f"scenario's differences and the README (it said: {reason})")
        ours, theirs = dict(ours), dict(theirs)
        del ours[key], theirs[key]
    assert ours == theirs, ("the bundled broker and Apache Kafka disagree\n"
                            f"bundled broker:\n{_show(ours)}\nApache Kafka:\n{_show(theirs)}")


def scenario(fn: Optional[Callable[[Broker], Any]] = None, *,
             differs: Optional[Dict[str, str]] = None):
    """Makes a scenario a test run on both brokers (fixtures bundled_broker, kafka_broker)."""
    def wrap(fn: Callable[[Broker], Any]):
        def test(bundled_broker: Broker, kafka_broker: Optional[Broker]) -> None:
            ours = fn(bundled_broker)
            if kafka_broker is None:
                pytest.skip("ran on the bundled broker only: no Apache Kafka cluster to compare "
                            "with (EXACTLY_KAFKA_CLUSTER, set by the kafka1 label)")
            compare(ours, fn(kafka_broker), differs or {})
        # Not functools.wraps: pytest would read the scenario's own signature through it.
        test.__name__, test.__doc__, test.__module__ = fn.__name__, fn.__doc__, fn.__module__
        test.scenario = fn
        return test
    return wrap(fn) if fn is not None else wrap


def names(codes: Iterable[int]) -> list:
    return [errors.name(c) for c in codes]
