"""The durable spool: ``send()`` returns once the record is on local disk,
and a background drainer carries it into Kafka. With a ``transactional_id``
every record whose ``send()`` returned appears in Kafka exactly once, in
order per partition, whatever is killed when; without one, at least once
(with dedup headers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple

from exactly import _config, _exactly
from exactly._closing import ClosesOnExit
from exactly.errors import Error
from exactly.producer import BatchItem, Data, Headers
from exactly.types import ANY_PARTITION

__all__ = [
    "GROUP_COMMIT_LATENCY_BOUNDS",
    "GROUP_COMMIT_SIZE_BOUNDS",
    "QuarantinedRecord",
    "SpoolMetrics",
    "SpooledProducer",
]

#: Upper bounds (seconds) of SpoolMetrics.group_commit_latency_counts.
GROUP_COMMIT_LATENCY_BOUNDS: Tuple[float, ...] = \
    _exactly.GROUP_COMMIT_LATENCY_BOUNDS
#: Upper bounds (records) of SpoolMetrics.group_commit_size_counts.
GROUP_COMMIT_SIZE_BOUNDS: Tuple[int, ...] = _exactly.GROUP_COMMIT_SIZE_BOUNDS


@dataclass(frozen=True)
class SpoolMetrics:
    depth: int  #: records not yet committed to Kafka
    bytes: int  #: their stored size
    oldest_age: float  #: seconds, of the oldest one (0 if empty)
    disk_bytes: int  #: the database's WAL and SST files
    appended: int  #: records accepted by send/send_batch (this instance)
    sent: int  #: records handed to the producer (with re-sends)
    committed: int  #: records committed to Kafka and deleted locally
    transactions: int
    group_commits: int  #: spool writes (each one WAL sync with sync="always")
    recoveries: int
    drainer_errors: int
    last_commit_latency: float  #: seconds
    max_commit_latency: float
    mean_commit_latency: float
    quarantined: int
    next_sequence: int
    committed_sequence: int
    drainer_error: Optional[Error]  #: why the drainer stopped for good
    #: Each group commit (spool write): how long it took, from the start of
    #: its write until durable; counts per bucket of
    #: GROUP_COMMIT_LATENCY_BOUNDS (seconds), the last one above them all.
    group_commit_latency_counts: Tuple[int, ...] = ()
    group_commit_latency_sum: float = 0.0  #: seconds
    #: And the records it wrote, per bucket of GROUP_COMMIT_SIZE_BOUNDS
    #: (their sum is ``appended``).
    group_commit_size_counts: Tuple[int, ...] = ()


@dataclass(frozen=True)
class QuarantinedRecord:
    sequence: int
    records: int
    reason: str
    bytes: bytes
    quarantined_ms: int


class SpooledProducer(ClosesOnExit):
    """A producer whose ``send()`` returns once the record is durable in a
    local RocksDB spool in `directory` (one owner at a time).

    >>> with exactly.SpooledProducer("/var/lib/orders/spool",
    ...                              "localhost:9092", "orders-writer-1") as p:
    ...     p.send("orders", key=b"id", value=b"payload", cursor="line 42")

    ``cursor`` stores an application position atomically with the record;
    after a restart ``recovered_cursor`` is the cursor of the last record in
    the spool, so the application resumes right after it. ``sync``:
    "always" (fsync before send returns), "interval" or "none". When the
    spool holds max_records or max_bytes, send waits (``when_full="block"``,
    up to ``full_timeout`` seconds, interruptibly) or raises
    ResourceExhaustedError ("fail"). Creating it needs no Kafka.
    ``on_statistics(json)``: librdkafka's newest statistics report of the
    drainer's producer (a JSON str), every ``statistics_interval_ms`` (set
    that property), passed on by the next call into the spool.
    """

    def __init__(
        self,
        directory: str,
        bootstrap_servers: Optional[str] = None,
        transactional_id: Optional[str] = None,
        *,
        config: Optional[Mapping[str, Any]] = None,
        client_id: Optional[str] = None,
        sync: str = "always",
        sync_interval: float = 0.1,
        max_records: int = 1_000_000,
        max_bytes: int = 1 << 30,
        when_full: str = "block",
        full_timeout: float = 30.0,
        max_batch_records: int = 10_000,
        max_batch_bytes: int = 8 << 20,
        max_batch_time: float = 0.1,
        checkpoint_topic: str = "__exactly_spool_checkpoints",
        create_checkpoint_topic: bool = True,
        recovery_timeout: float = 60.0,
        stamp_headers: bool = False,
        on_error: Optional[Callable[[Error], Any]] = None,
        on_statistics: Optional[Callable[[str], Any]] = None,
        **properties: Any,
    ) -> None:
        props = _config.properties(
            config,
            properties,
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            transactional_id=transactional_id,
        )
        settings = dict(
            sync=sync, sync_interval=sync_interval, max_records=max_records,
            max_bytes=max_bytes, when_full=when_full,
            full_timeout=full_timeout, max_batch_records=max_batch_records,
            max_batch_bytes=max_batch_bytes, max_batch_time=max_batch_time,
            checkpoint_topic=checkpoint_topic,
            create_checkpoint_topic=create_checkpoint_topic,
            recovery_timeout=recovery_timeout, stamp_headers=stamp_headers)
        self._native = _exactly.SpooledProducer(str(directory), props,
                                                settings, on_error,
                                                on_statistics=on_statistics)

    def send(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
        cursor: Optional[str] = None,
    ) -> None:
        """Appends a record to the spool; returns once it is durable. Then it
        will reach Kafka (exactly once with a transactional_id)."""
        self._native.send(topic, value, key, partition, timestamp_ms,
                          headers, cursor)

    def send_batch(
        self,
        topic: str,
        records: Iterable[BatchItem],
        *,
        partition: int = ANY_PARTITION,
        cursor: Optional[str] = None,
    ) -> None:
        """Appends records (values, or (key, value) pairs) with one write and
        one sync: all or none."""
        self._native.send_batch(topic, list(records), partition, cursor)

    def send_batch_async(
        self,
        topic: str,
        records: Iterable[BatchItem],
        *,
        partition: int = ANY_PARTITION,
        cursor: Optional[str] = None,
        on_durable: Optional[Callable[[Optional[Exception]], Any]] = None,
    ) -> None:
        """Appends records like send_batch (one write, all or none) without
        waiting for the disk: returns once they are admitted (checked, encoded,
        given room, queued; it waits only while earlier calls holding 16 MiB
        are not yet durable). on_durable(error or None) then runs once, from
        poll(), flush(), a later send or close() on this thread: None once
        the records are durable, else why they were not spooled. Without
        on_durable a failure goes to on_error. An exception raised here means
        nothing was admitted and on_durable never runs."""
        self._native.send_batch_async(topic, list(records), partition, cursor,
                                      on_durable)

    def flush(self, timeout: Optional[float] = None) -> None:
        """Waits until every record appended before the call is committed to
        Kafka (or quarantined); TimeoutError after `timeout` seconds."""
        self._native.flush(timeout)

    def poll(self, timeout: Optional[float] = 0) -> int:
        """Runs pending on_error callbacks and passes on a statistics report
        (waiting up to `timeout`)."""
        return int(self._native.poll(timeout))

    def close(self, drain_timeout: float = 0.0) -> int:
        """Refuses further sends, waits up to `drain_timeout` seconds for the
        spool to drain, and closes. Returns how many records stay spooled
        for the next instance."""
        return int(self._native.close(drain_timeout))

    @property
    def closed(self) -> bool:
        return bool(self._native.closed)

    @property
    def recovered_cursor(self) -> str:
        """The cursor of the last record in the spool when it was opened
        ("" if none)."""
        return str(self._native.recovered_cursor)

    @property
    def spool_id(self) -> str:
        return str(self._native.spool_id)

    @property
    def exactly_once(self) -> bool:
        return bool(self._native.exactly_once)

    def metrics(self) -> SpoolMetrics:
        return self._native.metrics()  # type: ignore[no-any-return]

    def quarantined(self) -> List[QuarantinedRecord]:
        return self._native.quarantined()  # type: ignore[no-any-return]

