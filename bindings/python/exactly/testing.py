"""The bundled broker, in this process: a Kafka-protocol broker that starts
in milliseconds on an ephemeral port (no JVM, no Docker), with the broker's
whole fault model.

>>> from exactly.testing import Broker
>>> with Broker(topics={"orders": 3}) as broker:
...     p = exactly.Producer(broker.bootstrap_servers)
...     broker.faults.drop_produce_responses(count=5)
...     ...
...     assert [r.value for r in broker.committed_records("orders", 0)] == ...

Any Kafka client can talk to it (confluent-kafka, kafka-python, kcat). The
broker serves on its own threads and never takes the GIL. With pytest, the
plugin ``exactly.pytest_plugin`` (registered by entry point) provides the
``exactly_broker`` fixture.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import TracebackType
from typing import (
    Any,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Type,
    Union,
)

from exactly import _exactly
from exactly.errors import Error

__all__ = [
    "ApiKey",
    "Broker",
    "Faults",
    "LoggedBatch",
    "LoggedRecord",
    "PartitionLeadership",
    "PartitionOffsets",
    "api_key",
    "error_code",
]


class ApiKey(enum.IntEnum):
    """Kafka API keys, for matching faults to requests."""

    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44
    OFFSET_DELETE = 47
    DESCRIBE_CLUSTER = 60


def _squash(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


_API_BY_NAME = {_squash(k.name): k for k in ApiKey}


def api_key(api: Union[ApiKey, int, str, None]) -> Optional[int]:
    """An API key from an ApiKey, an int, or a name in any spelling
    ("produce", "EndTxn", "END_TXN"); None stays None (every API)."""
    if api is None:
        return None
    if isinstance(api, str):
        try:
            return int(_API_BY_NAME[_squash(api)])
        except KeyError:
            raise ValueError(f"unknown Kafka API {api!r}") from None
    return int(api)


# Kafka's protocol names where librdkafka spells them differently.
_ERROR_ALIASES = {
    "OFFSET_OUT_OF_RANGE": 1,
    "CORRUPT_MESSAGE": 2,
    "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "NOT_LEADER_OR_FOLLOWER": 6,
    "MESSAGE_TOO_LARGE": 10,
}
_ERRORS_BY_NAME: Dict[str, int] = {}


def error_code(error: Union[int, str]) -> int:
    """A Kafka (broker) error code from its number or its name, as librdkafka
    or Kafka's protocol spells it ("NOT_LEADER_OR_FOLLOWER",
    "NOT_LEADER_FOR_PARTITION", "COORDINATOR_NOT_AVAILABLE", ...)."""
    if isinstance(error, int):
        return error
    if not _ERRORS_BY_NAME:
        for code, name, _ in _exactly.kafka_errors():
            if code > 0:
                _ERRORS_BY_NAME[name] = code
        _ERRORS_BY_NAME.update(_ERROR_ALIASES)
    try:
        return _ERRORS_BY_NAME[error.upper()]
    except KeyError:
        raise ValueError(f"unknown Kafka error {error!r}") from None


@dataclass(frozen=True)
class LoggedRecord:
    """A record as the broker stored it."""

    offset: int
    timestamp_ms: int
    key: Optional[bytes]
    value: Optional[bytes]
    headers: List[Tuple[str, Optional[bytes]]] = field(default_factory=list)


@dataclass(frozen=True)
class LoggedBatch:
    """A record batch as the broker stored it. For a control batch,
    ``commit_marker`` tells COMMIT (True) from ABORT."""

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: bool
    commit_marker: bool
    compression: str
    records: List[LoggedRecord]


@dataclass(frozen=True)
class PartitionOffsets:
    log_start_offset: int
    high_watermark: int
    last_stable_offset: int
    log_end_offset: int


@dataclass(frozen=True)
class PartitionLeadership:
    """Where a partition's replicas are and who leads, as a cluster's
    controller decided: ``leader`` is -1 while the partition is offline."""

    leader: int
    leader_epoch: int
    replicas: List[int]
    isr: List[int]


class Faults:
    """Fault injection: the faults that lose and duplicate records in real
    clusters, on demand. Each is logged (stderr and ``history()``) so that a
    failing test shows what happened. Times are in seconds.

    ``api`` is an :class:`ApiKey`, its number or its name ("produce",
    "end_txn"); ``error`` a Kafka error code or name; ``topic`` and
    ``partition`` narrow the match. Unset matches everything.

    In a cluster (``Broker(brokers=3)``) every fault takes ``node`` (a node
    id, 1..brokers): without it a request fault applies to every running
    broker. The cluster's own faults (kill, isolate, heal, replication
    pauses and latency) name one broker.
    """

    def __init__(self, broker: "Broker") -> None:
        self._broker = broker

    @property
    def _native(self) -> Any:
        return self._broker._running()

    def fail_requests(
        self,
        api: Union[ApiKey, int, str, None],
        error: Union[int, str],
        count: int = 1,
        *,
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        node: Optional[int] = None,
    ) -> None:
        """Answers the next `count` matching requests (or partitions of
        them) with `error` instead of handling them; count < 0: every one
        until clear()."""
        self._native.fail_requests(api_key(api), topic, partition,
                                   error_code(error), count, node)

    def drop_produce_responses(
        self,
        count: int = 1,
        one_in: int = 1,
        *,
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        node: Optional[int] = None,
    ) -> None:
        """Appends the next matching Produce requests, then drops their
        responses by closing the connection, so the client must retry a
        batch the broker already has: `count` of them (< 0: until clear()),
        each `one_in`-th matching one."""
        self._native.drop_produce_responses(count, one_in, topic, partition,
                                            node)

    def drop_produce_responses_keep_open(
        self,
        count: int = 1,
        one_in: int = 1,
        *,
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        node: Optional[int] = None,
    ) -> None:
        """Like drop_produce_responses, but the connection stays open and
        the response is never sent: the client hears nothing until its own
        request timeout (librdkafka: socket.timeout.ms), then retries a
        batch the broker already has."""
        self._native.drop_produce_responses_keep_open(count, one_in, topic,
                                                      partition, node)

    def add_latency(
        self,
        seconds: float,
        api: Union[ApiKey, int, str, None] = None,
        *,
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        node: Optional[int] = None,
    ) -> None:
        """Delays every matching response by `seconds` (0 removes it)."""
        self._native.add_latency(int(seconds * 1000), api_key(api), topic,
                                 partition, node)

    def close_all_connections(self, *, node: Optional[int] = None) -> None:
        """Closes every client connection now; clients reconnect."""
        self._native.close_all_connections(node)

    def broker_down(self, seconds: float, *,
                    node: Optional[int] = None) -> None:
        """Closes every connection and refuses new ones for `seconds`."""
        self._native.broker_down(int(seconds * 1000), node)

    def hold_transaction_markers(self, count: int = 1, *,
                                 node: Optional[int] = None) -> None:
        """For the next `count` transactions, the coordinator stops after
        persisting PrepareCommit/PrepareAbort and answering EndTxn, before
        writing the markers: as if it crashed there, until restart()."""
        self._native.hold_transaction_markers(count, node)

    def hold_markers(self, node: Optional[int] = None) -> None:
        """Broker `node` (None: every running broker) keeps every
        WriteTxnMarkers request it receives, neither applied nor answered,
        until release_markers(): a committed transaction's marker held on a
        partition leader, so read_committed readers wait. Killing that broker
        drops what it holds; the coordinator then sends the markers to the
        partition's new leader. clear() releases too."""
        self._native.hold_markers(node)

    def release_markers(self, node: Optional[int] = None) -> None:
        """Ends hold_markers(node): the held requests are handled now, in
        the order they came."""
        self._native.release_markers(node)

    def restart(self, mode: str = "crash", *,
                node: Optional[int] = None) -> None:
        """Restarts the broker: "clean", "crash" (no shutdown work) or
        "power_loss" (also loses what was not synced). Same as
        Broker.restart."""
        self._broker.restart(mode, node=node)

    # ---- A cluster's per-broker faults (Broker(brokers=N), N > 1) ----

    def kill(self, node: int) -> None:
        """Stops broker `node` as SIGKILL would (no shutdown work); the
        controller fences it at once, so its leaderships move to another
        in-sync replica. restart(node=...) starts it again."""
        self._native.kill(node)

    def kill_coordinator(self, transactional_id: Optional[str] = None,
                         group: Optional[str] = None) -> int:
        """Kills (as kill) the broker coordinating `transactional_id` or
        `group` (one of them) now, as FindCoordinator names it, and returns
        its node id."""
        return int(self._native.kill_coordinator(transactional_id, group))

    def isolate(self, node: int) -> None:
        """Cuts broker `node` off, both ways: its client and peer
        connections close, new ones are refused, and it fetches from no
        leader. The controller fences it, so its leaderships move."""
        self._native.isolate(node)

    def heal(self, node: int) -> None:
        """Ends isolate(node): the broker registers again, follows its
        leaders and rejoins the ISR once it has caught up."""
        self._native.heal(node)

    def pause_replication(self, node: int) -> None:
        """Broker `node` stops fetching from its leaders: it falls behind,
        and out of the ISR after replica_lag_time_max_ms."""
        self._native.pause_replication(node)

    def resume_replication(self, node: int) -> None:
        self._native.resume_replication(node)

    def set_replication_latency(self, node: int, seconds: float) -> None:
        """Broker `node` waits `seconds` before each replica fetch (0
        removes the delay), as a slow link to its leaders would."""
        self._native.set_replication_latency(node, int(seconds * 1000))

    def clear(self, *, node: Optional[int] = None) -> None:
        """Removes every fault still pending."""
        self._native.clear_faults(node)

    def history(self, *, node: Optional[int] = None) -> List[str]:
        """Every fault injected so far, oldest first (in a cluster, each
        broker's in turn, lines starting "broker N: ")."""
        return list(self._native.fault_history(node))


class Broker:
    """The bundled broker in this process.

    Options (all optional): ``host``, ``port`` (0: a free one),
    ``data_dir`` (None: in memory; a directory keeps topics, records,
    producer and transaction state and group offsets across restarts),
    ``default_partitions``, ``auto_create_topics``, ``topics`` (a list of
    names or a {name: partitions} dict, created on start), and the broker's
    other options by name: ``node_id``, ``cluster_id``, ``advertised_host``,
    ``max_frame_bytes``, ``max_connections``,
    ``max_in_flight_request_bytes``, ``max_decompressed_batch_bytes``,
    ``max_frame_waste_bytes`` (see the README's broker flags),
    ``flush_every_messages``, ``flush_every_ms``,
    ``group_initial_rebalance_delay_ms``, ``group_min_session_timeout_ms``,
    ``group_max_session_timeout_ms``, ``transaction_max_timeout_ms``,
    ``transaction_abort_check_interval_ms``, ``strict_sequence_reuse``
    (answer an error when a client resends the sequence numbers of a batch
    whose transaction already ended; always logged),
    ``transaction_partition_verification`` (KIP-890, on by default),
    ``min_insync_replicas`` (for topics that do not set it; default 1),
    ``metrics_port`` (serve Prometheus text at ``metrics_url``; 0 picks a
    free port; needs a build with prometheus-cpp), ``verbose``.

    Security (off unless set): ``listeners`` ({"SSL": 0, "SASL_PLAINTEXT":
    0, "SASL_SSL": 0}: protocol -> port, 0 picks one; the PLAINTEXT
    listener stays on ``port``), ``ssl_certificate_file`` and
    ``ssl_private_key_file`` (PEM), ``ssl_ca_file`` (clients must then
    present a certificate it signed), ``sasl_users`` ({"alice": "secret"}:
    PLAIN and SCRAM-SHA-256/512), ``sasl_mechanisms``; SCRAM credentials
    change while it runs with set_scram_credential and
    delete_scram_credential, or a client's AlterUserScramCredentials
    (DescribeUserScramCredentials lists them). A listener's address
    is ``listener_bootstrap_servers("SASL_SSL")``. ``authorizer=True`` checks
    every request against ACLs, managed with CreateAcls, DescribeAcls and
    DeleteAcls (an admin client's ``create_acls``...), with Kafka's errors
    (TOPIC_AUTHORIZATION_FAILED, ...); ``super_users`` (["User:admin"]) may
    do anything, and ``allow_everyone_if_no_acl_found`` opens resources no
    ACL names. Without it the ACL APIs answer SECURITY_DISABLED.

    ``brokers=N`` (N > 1) starts a cluster of N brokers in this process,
    sharing a controller, with node ids 1..N (each its own port, and its own
    folder broker-ID under ``data_dir``); ``bootstrap_servers`` then names
    them all, and ``default_replication_factor`` (default min(3, N)),
    ``unclean_leader_election`` and ``replica_lag_time_max_ms`` apply. A
    partition's log and offsets are read from its leader unless ``node`` is
    given; the per-broker faults are on ``faults`` (kill, isolate, heal,
    pause_replication, ...).

    Use it as a context manager, or call start() and stop().
    """

    def __init__(
        self,
        *,
        data_dir: Optional[str] = None,
        port: int = 0,
        host: str = "127.0.0.1",
        default_partitions: int = 1,
        auto_create_topics: bool = True,
        topics: Union[Iterable[str], Mapping[str, int], None] = None,
        brokers: int = 1,
        **options: Any,
    ) -> None:
        native_options: Dict[str, Any] = dict(
            options,
            brokers=brokers,
            host=host,
            port=port,
            default_partitions=default_partitions,
            auto_create_topics=auto_create_topics,
        )
        if data_dir is not None:
            native_options["data_dir"] = str(data_dir)
        self._native = _exactly.Broker(native_options)
        if topics is None:
            self._topics: Dict[str, int] = {}
        elif isinstance(topics, Mapping):
            self._topics = dict(topics)
        else:
            self._topics = {name: default_partitions for name in topics}
        self.faults = Faults(self)

    # ---- Life cycle ----

    def start(self) -> "Broker":
        """Starts serving (binding the port); creates the `topics` given."""
        if not self._native.running:
            self._native.start()
            existing = set(self._native.list_topics())
            for name, partitions in self._topics.items():
                if name not in existing:
                    self._native.create_topic(name, partitions, {})
        return self

    def stop(self) -> None:
        """Closes every connection and the store. Idempotent."""
        self._native.stop()

    def restart(self, mode: str = "clean", *,
                node: Optional[int] = None) -> None:
        """Restarts on the same port, keeping the data dir (an in-memory
        broker restarts empty): "clean" shuts down as stop() does, "crash"
        skips all shutdown work, "power_loss" also discards what was written
        since the last sync. In a cluster: broker `node` (also one killed),
        which then catches up as a follower; without it every broker, one
        after another."""
        self._native.restart(mode, node)

    @property
    def running(self) -> bool:
        return bool(self._native.running)

    def __enter__(self) -> "Broker":
        return self.start()

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.stop()

    def _running(self) -> Any:
        if not self._native.running:
            raise Error("the broker is not running: call start() (or use it "
                        "as a context manager)", "FAILED_PRECONDITION")
        return self._native

    # ---- Where and what ----

    @property
    def bootstrap_servers(self) -> str:
        """"127.0.0.1:PORT", ready for bootstrap.servers."""
        return str(self._running().bootstrap_servers)

    def listener_bootstrap_servers(self, protocol: str) -> str:
        """bootstrap.servers of the ``protocol`` listener ("SSL",
        "SASL_PLAINTEXT", "SASL_SSL"; see the ``listeners`` option)."""
        return str(self._running().listener_bootstrap_servers(protocol))

    @property
    def port(self) -> int:
        """The port of the broker (of broker 1 in a cluster)."""
        return int(self._running().port)

    @property
    def metrics_url(self) -> Optional[str]:
        """The broker's Prometheus endpoint, "http://HOST:PORT/metrics" (one
        for a whole cluster, each sample labelled broker="<node id>"), or
        None without ``metrics_port``."""
        port = int(self._running().metrics_port)
        if port < 0:
            return None
        host = self.bootstrap_servers.split(",")[0].rsplit(":", 1)[0]
        return f"http://{host}:{port}/metrics"

    @property
    def brokers(self) -> int:
        """How many brokers: 1, or the cluster's size."""
        return int(self._native.brokers)

    def ports(self) -> List[int]:
        """Every broker's port, by node id (1 first)."""
        return list(self._running().ports())

    def node_running(self, node: int) -> bool:
        """Whether broker `node` serves (False once killed)."""
        return bool(self._running().node_running(node))

    def partition(self, topic: str, partition: int = 0
                  ) -> PartitionLeadership:
        """A cluster's partition: its leader, epoch, replicas and ISR."""
        leader, epoch, replicas, isr = self._running().describe_partition(
            topic, partition)
        return PartitionLeadership(leader, epoch, list(replicas), list(isr))

    def create_topic(self, name: str, partitions: int = 1,
                     config: Optional[Mapping[str, Any]] = None,
                     replication_factor: Optional[int] = None) -> None:
        """Creates a topic; an Error (status ALREADY_EXISTS) if it exists.
        `replication_factor` None: the cluster's default."""
        self._running().create_topic(
            name, partitions, {k: str(v) for k, v in (config or {}).items()},
            -1 if replication_factor is None else replication_factor)

    def topics(self) -> List[str]:
        return list(self._running().list_topics())

    def partitions(self, topic: str) -> int:
        """How many partitions `topic` has (0 if it does not exist)."""
        native = self._running()
        count = 0
        while True:
            try:
                native.offsets(topic, count)
            except Error:
                return count
            count += 1

    def read_log(self, topic: str, partition: int = 0, *,
                 node: Optional[int] = None) -> List[LoggedBatch]:
        """Every batch of a partition's log, records decoded, in offset
        order, including control batches and records of open or aborted
        transactions. In a cluster: the leader's log, or broker `node`'s."""
        batches = []
        for b in self._running().read_log(topic, partition, node):
            records = [LoggedRecord(**r) for r in b.pop("records")]
            batches.append(LoggedBatch(records=records, **b))
        return batches

    def records(self, topic: str, partition: int = 0, *,
                node: Optional[int] = None) -> List[LoggedRecord]:
        """Every data record of a partition, whatever its transaction's
        outcome (what read_uncommitted would see)."""
        return [r for b in self.read_log(topic, partition, node=node)
                if not b.control for r in b.records]

    def committed_records(self, topic: str,
                          partition: Optional[int] = None
                          ) -> List[LoggedRecord]:
        """The records a read_committed consumer sees: non-transactional
        ones and those of committed transactions, in offset order; all
        partitions (one after another) when `partition` is None."""
        if partition is None:
            return [r for p in range(self.partitions(topic))
                    for r in self.committed_records(topic, p)]
        out: List[Tuple[int, LoggedRecord]] = []
        open_txn: Dict[int, List[LoggedRecord]] = {}
        for batch in self.read_log(topic, partition):
            if batch.control:
                pending = open_txn.pop(batch.producer_id, [])
                if batch.commit_marker:
                    out.extend((r.offset, r) for r in pending)
            elif batch.transactional:
                open_txn.setdefault(batch.producer_id, []).extend(
                    batch.records)
            else:
                out.extend((r.offset, r) for r in batch.records)
        return [r for _, r in sorted(out, key=lambda pair: pair[0])]

    def offsets(self, topic: str, partition: int = 0, *,
                node: Optional[int] = None) -> PartitionOffsets:
        return PartitionOffsets(*self._running().offsets(topic, partition,
                                                         node))

    def committed_offset(self, group: str, topic: str,
                         partition: int = 0) -> Optional[int]:
        """The offset committed by `group` for the partition, if any."""
        offset = self._running().committed_offset(group, topic, partition)
        return None if offset is None else int(offset)

    def abort_transaction(self, topic: str, partition: int,
                          producer_id: int) -> int:
        """Ends the transaction `producer_id` has open on one partition with
        an ABORT marker, as Kafka's admin abortTransaction (KIP-664) does for
        a hanging transaction; returns the marker's offset. An Error (status
        NOT_FOUND) when that producer has no open transaction there."""
        return int(self._running().abort_transaction(topic, partition,
                                                     producer_id))

    # ---- SCRAM credentials ----

    def set_scram_credential(self, user: str, password: str,
                             mechanism: str = "SCRAM-SHA-256",
                             iterations: int = 4096) -> None:
        """Gives `user` a SASL SCRAM credential for `password` (mechanism
        "SCRAM-SHA-256" or "SCRAM-SHA-512", iterations in [4096, 16384]),
        replacing any it had for that mechanism, as an admin client's
        ``alter_user_scram_credentials`` does: the next authentication, on
        any broker of a cluster, checks it. An Error (INVALID_ARGUMENT) for
        an empty user, an unknown mechanism or iterations out of range."""
        self._running().set_scram_credential(user, password, mechanism,
                                             iterations)

    def delete_scram_credential(self, user: str, mechanism: str) -> None:
        """Removes `user`'s credential of `mechanism`; an Error (NOT_FOUND)
        when there is none."""
        self._running().delete_scram_credential(user, mechanism)

    def scram_credentials(self) -> Dict[str, Dict[str, int]]:
        """Every user's SCRAM credentials: {user: {mechanism: iterations}}
        (what DescribeUserScramCredentials shows)."""
        out: Dict[str, Dict[str, int]] = {}
        for user, mechanism, iterations in \
                self._running().scram_credentials():
            out.setdefault(user, {})[mechanism] = int(iterations)
        return out

    def __repr__(self) -> str:
        where = self._native.bootstrap_servers if self._native.running \
            else "stopped"
        return f"<exactly.testing.Broker {where}>"
