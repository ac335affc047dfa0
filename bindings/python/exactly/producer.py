"""Producers: the idempotent :class:`Producer` and the
:class:`TransactionalProducer`.

Delivery reports need no polling. A record's ``on_delivery`` callback (or the
producer's default one) runs on the thread that calls into the producer next
(``send``, ``poll``, ``flush``, ``close``, or a future's ``result``), never on
a thread of librdkafka's, and ``flush()`` and ``close()`` run every callback
still pending. A future from ``send_future()`` completes while anyone waits
on it.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
import weakref
from types import TracebackType
from typing import (
    Any,
    Callable,
    Iterable,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from exactly import _config, _exactly
from exactly._closing import ClosesOnExit
from exactly.errors import Error, KafkaError
from exactly.types import (
    ANY_PARTITION,
    ConsumerGroupMetadata,
    DeliveryReport,
    ProducerStats,
    RetryPolicy,
    TopicPartitionOffset,
    TransactionStats,
)

__all__ = ["DeliveryFuture", "Producer", "Transaction", "TransactionalProducer"]

#: A key or a value: bytes-like, str (sent as UTF-8) or None (null).
Data = Union[bytes, bytearray, memoryview, str, None]
#: Record headers: (name, value) pairs or a dict.
Headers = Union[Sequence[Tuple[str, Data]], Mapping[str, Data], None]
#: on_delivery(error, report): error is None on success.
DeliveryCallback = Callable[[Optional[KafkaError], DeliveryReport], Any]
#: on_error(error): errors that have no call to be raised from.
ErrorCallback = Callable[[Error], Any]
#: on_statistics(json): librdkafka's statistics report (a JSON str), every
#: ``statistics_interval_ms`` (set that property); passed on by the next call
#: into the client (send, poll, flush, ...), the newest one only.
StatisticsCallback = Callable[[str], Any]
#: A batch item: a value, or a (key, value) pair.
BatchItem = Union[Data, Tuple[Data, Data]]

_T = TypeVar("_T")


class DeliveryFuture(concurrent.futures.Future):  # type: ignore[type-arg]
    """The outcome of one ``send_future()``: its :class:`DeliveryReport`,
    or the error. A standard ``concurrent.futures.Future``: ``result()``
    waits with the GIL released and Ctrl-C interrupts it, and
    ``concurrent.futures.wait``/``as_completed`` and
    ``asyncio.wrap_future`` work, all without polling: the producer
    completes its futures in its next call or on a helper thread
    (done-callbacks run on the thread that completes the future). A
    record cannot be unsent, so ``cancel()`` returns False."""

    def __init__(self) -> None:
        super().__init__()
        self.set_running_or_notify_cancel()

    def _on_delivery(
        self, error: Optional[KafkaError], report: DeliveryReport
    ) -> None:
        if error is None:
            self.set_result(report)
        else:
            self.set_exception(error)


def _complete_futures(native_ref: "weakref.ref[Any]") -> None:
    """The producer's future-completing thread: ends with the producer."""
    while True:
        native = native_ref()
        if native is None or not native.complete_futures(0.1):
            return
        del native


class _ProducerApi(ClosesOnExit):
    """What both producers offer."""

    _native: Any

    def _bind(self) -> None:
        # send() is the extension's own, with the same signature: no Python
        # frame and no pybind11 dispatch per record (the method below
        # documents it).
        self.send = self._native.bound_send()  # type: ignore[method-assign]
        self._completer: Optional[threading.Thread] = None

    def send(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
        on_delivery: Optional[DeliveryCallback] = None,
    ) -> None:
        """Queues one record and returns at once (unless the queue is full
        and queue_full="block": then it waits for room, interruptibly).

        Keys and values are bytes-like or str (UTF-8); None is null. The
        record's report goes to ``on_delivery(error, report)``, else to the
        producer's ``on_delivery``; without either, a failure is raised by
        the next ``flush()``. An exception here means the record was not
        queued.
        """
        self._native.send(topic, value, key, partition=partition,
                          timestamp_ms=timestamp_ms, headers=headers,
                          on_delivery=on_delivery)

    def send_future(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
    ) -> DeliveryFuture:
        """Queues one record; the future holds its :class:`DeliveryReport`
        (or its error). No polling needed (see :class:`DeliveryFuture`)."""
        future = DeliveryFuture()
        self._native.send_future(topic, value, key, partition, timestamp_ms,
                                 headers, future._on_delivery)
        if self._completer is None:
            self._completer = threading.Thread(
                target=_complete_futures, args=(weakref.ref(self._native),),
                name="exactly-futures", daemon=True)
            self._completer.start()
        return future

    def send_batch(
        self,
        topic: str,
        records: Iterable[BatchItem],
        *,
        partition: int = ANY_PARTITION,
        on_delivery: Optional[DeliveryCallback] = None,
    ) -> int:
        """Queues many records to one topic in one call: each item is a
        value, or a (key, value) pair. Returns how many were queued (all of
        them); if one fails, the exception's ``sent`` attribute says how
        many before it were queued.

        Without ``partition`` and ``on_delivery``, the records go to
        librdkafka in chunks of 1,024, and a chunk whose records all lack a
        key goes whole to one partition chosen at random (Kafka's sticky
        partitioning, KIP-480): the partitions fill evenly over many chunks,
        and the batch is queued under one lock instead of one per record.
        Keyed records follow their key as with send()."""
        if not isinstance(records, (list, tuple)):
            records = list(records)
        return int(self._native.send_batch(topic, records, partition,
                                           on_delivery))

    def poll(self, timeout: Optional[float] = 0) -> int:
        """Runs the delivery callbacks that are due; with a timeout (seconds,
        None: no limit), waits up to that long for one. Returns how many ran.
        Never needed for delivery reports to flow: flush and close run them
        too."""
        return int(self._native.poll(timeout))

    def flush(self, timeout: Optional[float] = None) -> None:
        """Waits until every record sent so far is reported (running their
        callbacks here). Raises a KafkaError (_TIMED_OUT) if some are still
        in flight after `timeout` seconds, or the failure of records sent
        without a callback."""
        self._native.flush(timeout)

    def close(self, timeout: Optional[float] = 30.0) -> None:
        """Flushes for up to `timeout` seconds, fails what is still queued
        (their callbacks run with an error) and stops. Later calls do
        nothing."""
        try:
            self._native.close(timeout)
        finally:
            # The future-completing thread sees the close within one wait
            # and ends: joined here, so that it is never left inside the
            # extension when the interpreter exits (a daemon thread there is
            # ended in the middle of a C++ call, which aborts the process).
            completer, self._completer = self._completer, None
            if (completer is not None
                    and completer is not threading.current_thread()):
                completer.join()

    @property
    def closed(self) -> bool:
        return bool(self._native.closed)

    def stats(self) -> ProducerStats:
        return self._native.stats()  # type: ignore[no-any-return]



class Producer(_ProducerApi):
    """The idempotent producer: each record is written once and in order per
    partition, even when librdkafka retries.

    >>> p = exactly.Producer("localhost:9092", linger_ms=5)
    >>> p.send("orders", key=b"id-1", value=b"payload")
    >>> p.flush()

    ``config`` passes librdkafka properties straight through; so do keyword
    arguments, with dots written as underscores. In ``mode="exactly_once"``
    (the default) a property that would break exactly-once (acks other than
    all, idempotence off, ...) is refused with a ConfigError naming it;
    ``mode="unchecked"`` lets it through. ``queue_full`` says what ``send``
    does when librdkafka's queue is full: "block" (wait up to
    ``queue_full_timeout`` seconds) or "fail" (raise _QUEUE_FULL at once).
    """

    def __init__(
        self,
        bootstrap_servers: Optional[str] = None,
        *,
        config: Optional[Mapping[str, Any]] = None,
        client_id: Optional[str] = None,
        mode: str = "exactly_once",
        queue_full: str = "block",
        queue_full_timeout: float = 30.0,
        on_delivery: Optional[DeliveryCallback] = None,
        on_error: Optional[ErrorCallback] = None,
        on_statistics: Optional[StatisticsCallback] = None,
        **properties: Any,
    ) -> None:
        props = _config.properties(
            config,
            properties,
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
        )
        self._native = _exactly.Producer(
            props,
            _config.mode_unchecked(mode),
            _config.block_when_full(queue_full),
            float(queue_full_timeout),
            on_delivery,
            on_error,
            on_statistics=on_statistics,
        )
        self._bind()


class Transaction:
    """One transaction of a :class:`TransactionalProducer`, as a context
    manager: it begins on entry, commits when the block ends, and aborts if
    the block raises (the exception then propagates).

    >>> with producer.transaction() as txn:
    ...     txn.send("orders", key=b"k", value=b"v")

    A commit that fails with an abortable error aborts the transaction and
    raises that error (``txn_requires_abort`` set): a ``with`` block cannot
    be run again by itself; use ``TransactionalProducer.transact(fn)`` to
    have it re-run.
    """

    def __init__(self, producer: "TransactionalProducer",
                 begun: bool = False) -> None:
        self._producer = producer
        self._begun = begun

    def __enter__(self) -> "Transaction":
        if not self._begun:
            self._producer.begin()
            self._begun = True
        return self

    def send(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
        on_delivery: Optional[DeliveryCallback] = None,
    ) -> None:
        """Sends a record in this transaction (see Producer.send)."""
        self._producer.send(topic, value, key, partition=partition,
                            timestamp_ms=timestamp_ms, headers=headers,
                            on_delivery=on_delivery)

    def send_batch(
        self,
        topic: str,
        records: Iterable[BatchItem],
        *,
        partition: int = ANY_PARTITION,
        on_delivery: Optional[DeliveryCallback] = None,
    ) -> int:
        """Sends many records in this transaction (see Producer.send_batch)."""
        return self._producer.send_batch(topic, records, partition=partition,
                                         on_delivery=on_delivery)

    def send_offsets(
        self,
        offsets: Iterable[Union[TopicPartitionOffset, Tuple[str, int, int]]],
        group: Any,
    ) -> None:
        """Commits consumer offsets (the next offset to read, per partition)
        to `group` if, and only if, this transaction commits. `group` is the
        Consumer, its group_metadata(), or a group id."""
        self._producer.send_offsets(offsets, group)

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        producer = self._producer
        if exc_type is None:
            try:
                producer.commit()
            except KafkaError as error:
                if error.txn_requires_abort and producer.in_transaction:
                    producer._abort_quietly("abortable_error")
                raise
            return
        if producer.in_transaction:
            producer._abort_quietly("error")


class TransactionalProducer(_ProducerApi):
    """Records (and consumer offsets) become visible to read_committed
    consumers all together, or not at all.

    >>> p = exactly.TransactionalProducer("localhost:9092", "orders-writer-1")
    >>> with p.transaction() as txn:
    ...     txn.send("orders", key=b"k", value=b"v")

    Creating it initialises transactions (fencing an older instance with the
    same transactional_id), for up to ``init_timeout`` seconds. ``retry``
    says how calls are repeated: retriable errors are retried, abortable
    ones abort (and ``transact`` runs its function again), fatal ones are
    raised; after a fatal error ``rebuild()`` replaces the librdkafka
    instance, unless it was fenced.
    """

    def __init__(
        self,
        bootstrap_servers: Optional[str] = None,
        transactional_id: Optional[str] = None,
        *,
        config: Optional[Mapping[str, Any]] = None,
        client_id: Optional[str] = None,
        retry: Optional[RetryPolicy] = None,
        init_timeout: Optional[float] = 60.0,
        queue_full: str = "block",
        queue_full_timeout: float = 30.0,
        on_delivery: Optional[DeliveryCallback] = None,
        on_error: Optional[ErrorCallback] = None,
        on_statistics: Optional[StatisticsCallback] = None,
        **properties: Any,
    ) -> None:
        props = _config.properties(
            config,
            properties,
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            transactional_id=transactional_id,
        )
        self._retry = retry or RetryPolicy()
        self._native = _exactly.TransactionalProducer(
            props,
            _config.block_when_full(queue_full),
            float(queue_full_timeout),
            on_delivery,
            on_error,
            self._retry._native(),
            init_timeout,
            on_statistics=on_statistics,
        )
        self._bind()

    @property
    def transactional_id(self) -> str:
        return str(self._native.transactional_id)

    @property
    def in_transaction(self) -> bool:
        return bool(self._native.in_transaction)

    def transaction(self) -> Transaction:
        """A context manager for one transaction (see :class:`Transaction`)."""
        return Transaction(self)

    def transact(self, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """Begins a transaction, calls ``fn(txn, *args, **kwargs)``, commits,
        and returns what fn returned, applying librdkafka's rules: an
        abortable error (or a retriable one inside fn) aborts and runs fn
        again, at most retry.max_attempts times, with back-off; anything
        else aborts and is raised. Only the run that commits is visible, so
        keep fn free of other side effects."""
        policy = self._retry
        backoff = policy.initial_backoff
        last: Optional[KafkaError] = None
        for attempt in range(1, policy.max_attempts + 1):
            if attempt > 1:
                time.sleep(backoff)
                backoff = min(backoff * 2, policy.max_backoff)
                self._native.count_rerun()
            self.begin()
            txn = Transaction(self, begun=True)
            try:
                result = fn(txn, *args, **kwargs)
            except KafkaError as error:
                rerun = (error.txn_requires_abort or error.retriable) and \
                    not error.fatal
                if self.in_transaction:
                    if rerun:
                        self._abort("abortable_error")
                    else:
                        self._abort_quietly("error")
                if not rerun:
                    raise
                last = error
                continue
            except BaseException:
                if self.in_transaction:
                    self._abort_quietly("error")
                raise
            try:
                self.commit()
                return result
            except KafkaError as error:
                if not error.txn_requires_abort or error.fatal:
                    raise
                if self.in_transaction:
                    self._abort("abortable_error")
                last = error
        assert last is not None
        raise KafkaError(
            f"transaction aborted {policy.max_attempts} times, giving up; "
            f"the last error: {last.message}",
            last.status,
            code=last.code,
            name=last.name,
            retriable=last.retriable,
            txn_requires_abort=last.txn_requires_abort,
            fatal=last.fatal,
            fenced=last.fenced,
        ) from last

    # The single verbs, one librdkafka call each (retriable errors retried).

    def begin(self) -> None:
        """Begins a transaction."""
        self._native.begin()

    def commit(self, timeout: Optional[float] = None) -> None:
        """Commits the open transaction (flushing its records first),
        repeating the call while it fails with a retriable error; a
        `timeout` in seconds bounds the whole (None: librdkafka's own
        limits). Abortable errors have ``txn_requires_abort`` set: call
        abort() then."""
        self._native.commit(timeout)

    def abort(self, timeout: Optional[float] = None) -> None:
        """Aborts the open transaction: its records are never visible to
        read_committed consumers."""
        self._native.abort(timeout)

    def send_offsets(
        self,
        offsets: Iterable[Union[TopicPartitionOffset, Tuple[str, int, int]]],
        group: Any,
        timeout: Optional[float] = None,
    ) -> None:
        """Adds consumer offsets to the open transaction. `group` is a
        Consumer, a ConsumerGroupMetadata or a group id (str)."""
        metadata = group
        if hasattr(group, "group_metadata") and not isinstance(
                group, (str, ConsumerGroupMetadata)):
            metadata = group.group_metadata()
        self._native.send_offsets(list(offsets), metadata, timeout)

    def rebuild(self) -> None:
        """Replaces the librdkafka producer after a fatal error and
        initialises transactions again. Refused (StateError) after fencing:
        the newer instance owns the transactional_id."""
        self._native.rebuild()

    def transaction_stats(self) -> TransactionStats:
        return self._native.transaction_stats()  # type: ignore[no-any-return]

    def _abort(self, cause: str) -> None:
        # An abort counted under `cause` (TransactionStats.aborted_by_cause).
        self._native.abort(None, cause)

    def _abort_quietly(self, cause: str = "requested") -> None:
        try:
            self._abort(cause)
        except Error:
            pass
