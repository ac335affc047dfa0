"""asyncio clients: :class:`Producer`, :class:`TransactionalProducer`,
:class:`Consumer`, :class:`SpooledProducer` and :class:`Processor`, each
awaitable and never blocking the event loop.

>>> async def main(servers):
...     async with exactly.aio.Producer(servers) as p:
...         report = await p.send("orders", key="id-1", value=b"payload")
...     tp = await exactly.aio.TransactionalProducer.create(servers, "w-1")
...     async with tp.transaction() as txn:
...         await txn.send("orders", value=b"in a transaction")
...     await tp.close()
...     async with exactly.aio.Consumer(servers, "billing",
...                                     topics=["orders"]) as c:
...         async for message in c:
...             await c.commit(message)

How it meets the loop: the SDK reports deliveries (and the spool its
durability) on its own threads into a queue that signals an eventfd; the
loop watches that descriptor (``loop.add_reader``) and completes the
futures on its own thread, a bounded number per turn. No thread per call:
what blocks in C++ (creating a transactional producer, begin, commit,
abort, flush, close, consumer polls, the Processor's batches) runs on one
worker thread per client, in the order called. Sends go to the native
client at most SEND_SLICE per turn of the loop (a gather over thousands of
send() coroutines starts them all in one turn; the rest wait their turn, in
order). Sending never waits on the loop: when librdkafka's queue (or the
spool) is full, the coroutine sleeps and retries, up to
``queue_full_timeout`` (``full_timeout``) seconds. The consumer's commit is
asynchronous, its result coming back through the loop.

Clients are created inside a running loop and belong to it. Those whose
creation blocks are made by ``await Class.create(...)``; every class has
``create``, and Producer and Consumer can also be constructed directly.
Cancelling an awaited send does not unsend the record; cancelling a poll
keeps the message it was fetching for the next poll.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import threading
from types import TracebackType
from typing import (
    Any,
    Awaitable,
    Callable,
    Deque,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)
from collections import deque

from exactly import consumer as _consumer
from exactly import processor as _processor
from exactly import producer as _producer
from exactly import spool as _spool
from exactly.errors import (Error, KafkaError, ResourceExhaustedError,
                            StateError)
from exactly.producer import BatchItem, Data, Headers
from exactly.types import (
    ANY_PARTITION,
    ConsumerGroupMetadata,
    DeliveryReport,
    Message,
    ProcessorStats,
    ProducerStats,
    RetryPolicy,
    TopicPartition,
    TopicPartitionOffset,
    TransactionStats,
)

__all__ = [
    "AsyncTransform",
    "Consumer",
    "Processor",
    "Producer",
    "SpooledProducer",
    "Transaction",
    "TransactionalProducer",
]

_T = TypeVar("_T")
_C = TypeVar("_C", bound="_Client")

#: The Processor's transform as a coroutine function:
#: ``async def transform(message, emitter)`` (a plain function, the
#: ``exactly.processor.Transform``, is accepted too).
AsyncTransform = Callable[[Message, Any], Awaitable[Any]]

#: Completions run per turn of the loop; more wait for the next turn, so
#: that a burst of reports never holds the loop for long.
DRAIN_BATCH = 256
#: How long one poll on the worker thread waits, at most (seconds): a poll
#: without a timeout is a series of these, so close() (which runs on the
#: worker after the poll in progress) never waits longer.
POLL_SLICE = 0.1
#: The slices the worker polls in while a commit's result is awaited.
COMMIT_POLL_SLICE = 0.02
#: How long a send whose queue is full sleeps before trying again.
_FULL_RETRY = 0.001
#: Sends handed to the native client per turn of the loop. Past that, the
#: sends of the same turn (an ``asyncio.gather`` over thousands of send()
#: coroutines starts them all in one turn) wait their turn, in order, and
#: SEND_SLICE of them go per later turn: each costs the loop about as much
#: as the task that awaits it, and the loop's timers run in between.
SEND_SLICE = 128


def _settle(future: "asyncio.Future[Any]", error: Optional[BaseException],
            result: Any) -> None:
    if future.done():  # cancelled by the caller
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class _Client:
    """A worker thread for the blocking calls, and the loop's side of the
    native callback queue (when the client has one)."""

    def __init__(self, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        self._loop = loop or asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="exactly-aio")
        self._reader_native: Any = None
        self._fd = -1
        # The send admission (see SEND_SLICE): sends begun this turn, the
        # waiters for a later turn, and whether _next_turn is scheduled.
        self._turn_sent = 0
        self._waiting: Deque["asyncio.Future[None]"] = deque()
        self._turn_scheduled = False

    # -- the worker thread

    def _call(self, fn: Callable[..., _T], *args: Any) -> "asyncio.Future[_T]":
        return self._loop.run_in_executor(self._executor, fn, *args)

    @classmethod
    async def _build(cls: Type[_C], make: Callable[[], Any]) -> Any:
        """Runs `make` (a blocking constructor) on a thread of its own: the
        instance's worker does not exist yet."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, make)

    # -- sends: at most SEND_SLICE per turn of the loop

    async def _admit(self) -> None:
        """Returns when this send may go to the native client: at once if
        fewer than SEND_SLICE went this turn and none is waiting, else in a
        later turn, in order."""
        if not self._waiting and self._turn_sent < SEND_SLICE:
            self._turn_sent += 1
            self._schedule_turn()
            return
        waiter: "asyncio.Future[None]" = self._loop.create_future()
        self._waiting.append(waiter)
        self._schedule_turn()
        await waiter  # cancelled: _next_turn skips it

    def _schedule_turn(self) -> None:
        if not self._turn_scheduled:
            self._turn_scheduled = True
            self._loop.call_soon(self._next_turn)

    def _next_turn(self) -> None:
        """Once per turn while sends are admitted: a new count, and the
        next SEND_SLICE waiters (they send in the next turn, which counts
        them)."""
        self._turn_scheduled = False
        released = 0
        waiting = self._waiting
        while waiting and released < SEND_SLICE:
            waiter = waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                released += 1
        self._turn_sent = released
        if waiting or released:
            self._schedule_turn()

    # -- completions on the loop's thread

    def _watch(self, native: Any) -> None:
        self._reader_native = native
        self._fd = int(native.loop_fd())
        self._loop.add_reader(self._fd, self._drain)

    def _drain(self) -> None:
        native = self._reader_native
        if native is None:
            return
        try:
            more = native.loop_drain(DRAIN_BATCH)
        except Exception as error:  # an on_error callback raised
            self._loop.call_exception_handler({
                "message": "exception in an exactly.aio callback",
                "exception": error,
            })
            more = True
        if more:
            self._loop.call_soon(self._drain)

    def _unwatch(self) -> None:
        """After the native close: stops watching and completes what is
        left, here."""
        native = self._reader_native
        if native is None:
            return
        self._loop.remove_reader(self._fd)
        while native.loop_drain(DRAIN_BATCH):
            pass
        self._reader_native = None

    def _completion(self, future: "asyncio.Future[Any]") -> Callable[..., None]:
        """A native callback that completes `future` (error or None, then
        the result): here when called on the loop's thread (the drain, or a
        call made on the loop), else scheduled onto the loop (a flush or
        commit on the worker runs the callbacks that are due)."""
        return functools.partial(self._complete, future)

    def _complete(self, future: "asyncio.Future[Any]",
                  error: Optional[BaseException], result: Any = None) -> None:
        if threading.get_ident() == self._loop_thread:
            _settle(future, error, result)
            return
        try:
            self._loop.call_soon_threadsafe(_settle, future, error, result)
        except RuntimeError:  # the loop is closed: nobody is waiting
            pass

    def _shutdown(self) -> None:
        self._unwatch()
        self._executor.shutdown(wait=False)

    # -- what every client has: its blocking twin, close, async with

    _sync: Any  # the blocking client this one drives on its worker

    async def close(self) -> Any:
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        return bool(self._sync.closed)

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await _close_on_exit(self.close(), exc_type)

    async def _retry_when_full(self, attempt: Callable[[], _T],
                               timeout: float, full: Callable[[Error], bool]
                               ) -> _T:
        deadline = self._loop.time() + timeout
        while True:
            try:
                return attempt()
            except Error as error:
                if not full(error) or self._loop.time() >= deadline:
                    raise
            await asyncio.sleep(_FULL_RETRY)


def _queue_full(error: Error) -> bool:
    return isinstance(error, KafkaError) and error.name == "_QUEUE_FULL"


class _ProducerApi(_Client):
    """What both async producers offer."""

    _sync: _producer._ProducerApi
    _queue_full_timeout: float

    def _start(self) -> None:
        self._native = self._sync._native
        self._watch(self._native)

    async def send(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
    ) -> DeliveryReport:
        """Sends one record and returns its :class:`DeliveryReport` once
        the broker has it (acks=all), or raises its KafkaError. Many sends
        may be awaited at once (``asyncio.gather``): they are in flight
        together, handed to librdkafka SEND_SLICE per turn of the loop."""
        # _admit, inline: the first step of each of a gather's thousands of
        # tasks runs in one turn, so it does no more than it must.
        if self._waiting or self._turn_sent >= SEND_SLICE:
            waiter: "asyncio.Future[None]" = self._loop.create_future()
            self._waiting.append(waiter)
            if not self._turn_scheduled:
                self._schedule_turn()
            await waiter
        else:
            self._turn_sent += 1
            if not self._turn_scheduled:
                self._schedule_turn()
        return await self._queue(topic, value, key, partition, timestamp_ms,
                                 headers)

    def send_future(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
    ) -> "asyncio.Future[DeliveryReport]":
        """Queues one record now, without a coroutine, and returns the
        future of its report. Raises KafkaError ``_QUEUE_FULL`` instead of
        waiting when librdkafka's queue is full (``send`` waits)."""
        future: "asyncio.Future[DeliveryReport]" = self._loop.create_future()
        self._native.send_future(topic, value, key, partition, timestamp_ms,
                                 headers, self._completion(future))
        return future

    async def _queue(self, topic: str, value: Data, key: Data, partition: int,
                     timestamp_ms: int, headers: Headers) -> DeliveryReport:
        """Sends, once admitted."""
        future: "asyncio.Future[DeliveryReport]" = self._loop.create_future()
        complete = self._completion(future)
        send = self._native.send_future
        try:
            send(topic, value, key, partition, timestamp_ms, headers, complete)
        except KafkaError as error:
            if not _queue_full(error):
                raise
            await self._retry_when_full(
                lambda: send(topic, value, key, partition, timestamp_ms,
                             headers, complete),
                self._queue_full_timeout, _queue_full)
        return await future

    async def send_batch(
        self,
        topic: str,
        records: Iterable[BatchItem],
        *,
        partition: int = ANY_PARTITION,
    ) -> List[DeliveryReport]:
        """Sends many records (values, or (key, value) pairs) to one topic
        and returns their reports, in order, once all are delivered; raises
        the first failure (after all are reported). Queues DRAIN_BATCH
        records per turn of the loop: the way to send a burst (a gather
        over thousands of send() coroutines runs them all in one turn)."""
        pending: List["asyncio.Future[DeliveryReport]"] = []
        for i, item in enumerate(records):
            if i % DRAIN_BATCH == DRAIN_BATCH - 1:
                await asyncio.sleep(0)  # a turn for the rest of the loop
            key, value = item if isinstance(item, tuple) else (None, item)
            future: "asyncio.Future[DeliveryReport]" = \
                self._loop.create_future()
            complete = self._completion(future)
            await self._retry_when_full(
                functools.partial(self._native.send_future, topic, value, key,
                                  partition, 0, None, complete),
                self._queue_full_timeout, _queue_full)
            pending.append(future)
        # One future at a time (a gather would add 10,000 callbacks in one
        # turn); the first failure is raised once all are reported.
        reports: List[DeliveryReport] = []
        failure: Optional[BaseException] = None
        for future in pending:
            try:
                reports.append(await future)
            except KafkaError as error:
                failure = failure or error
        if failure is not None:
            raise failure
        return reports

    async def flush(self, timeout: Optional[float] = None) -> None:
        """Waits (on the worker thread) until every record sent so far is
        reported; raises KafkaError _TIMED_OUT after `timeout` seconds."""
        await self._call(self._native.flush, timeout)

    async def close(self, timeout: Optional[float] = 30.0) -> None:
        """Flushes for up to `timeout` seconds, fails what is still queued
        (their sends raise) and stops. Later calls do nothing."""
        if self._reader_native is None:
            return
        try:
            await self._call(self._sync.close, timeout)
        finally:
            self._shutdown()

    def stats(self) -> ProducerStats:
        return self._sync.stats()


async def _close_on_exit(close: Awaitable[Any],
                         exc_type: Optional[Type[BaseException]]) -> None:
    """As ClosesOnExit: an Error from close is dropped when the body
    raised."""
    if exc_type is None:
        await close
        return
    try:
        await close
    except Error:
        pass


class Producer(_ProducerApi):
    """The idempotent producer, for asyncio (see exactly.Producer for the
    configuration; ``queue_full`` is always "wait without blocking the
    loop", up to ``queue_full_timeout`` seconds).

    >>> p = exactly.aio.Producer(servers, linger_ms=5)
    >>> report = await p.send("orders", key=b"id-1", value=b"payload")
    >>> await p.close()
    """

    def __init__(
        self,
        bootstrap_servers: Optional[str] = None,
        *,
        config: Optional[Mapping[str, Any]] = None,
        client_id: Optional[str] = None,
        mode: str = "exactly_once",
        queue_full_timeout: float = 30.0,
        on_error: Optional[Callable[[Error], Any]] = None,
        **properties: Any,
    ) -> None:
        super().__init__()
        self._queue_full_timeout = float(queue_full_timeout)
        self._sync = _producer.Producer(
            bootstrap_servers, config=config, client_id=client_id, mode=mode,
            queue_full="fail", on_error=on_error, **properties)
        self._start()

    @classmethod
    async def create(cls, bootstrap_servers: Optional[str] = None,
                     **kwargs: Any) -> "Producer":
        """The same as the constructor (which does not block)."""
        return cls(bootstrap_servers, **kwargs)


class Transaction:
    """One transaction, as an async context manager: begins on entry,
    commits when the block ends, aborts if it raises (or is cancelled).

    >>> async with producer.transaction() as txn:
    ...     await txn.send("orders", key=b"k", value=b"v")
    """

    def __init__(self, producer: "TransactionalProducer",
                 begun: bool = False) -> None:
        self._producer = producer
        self._begun = begun

    async def __aenter__(self) -> "Transaction":
        if not self._begun:
            await self._producer.begin()
            self._begun = True
        return self

    async def send(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        timestamp_ms: int = 0,
        headers: Headers = None,
    ) -> None:
        """Queues a record in this transaction and returns once it is
        queued (waiting only while librdkafka's queue is full): the commit
        delivers it, or fails. (``producer.send`` awaits each delivery.)"""
        producer = self._producer
        native = producer._native
        await producer._admit()
        await producer._retry_when_full(
            lambda: native.send(topic, value, key, partition=partition,
                                timestamp_ms=timestamp_ms, headers=headers,
                                on_delivery=None),
            producer._queue_full_timeout, _queue_full)

    async def send_offsets(
        self,
        offsets: Iterable[Union[TopicPartitionOffset, Tuple[str, int, int]]],
        group: Any,
    ) -> None:
        """Commits consumer offsets to `group` (an exactly.aio.Consumer, its
        group_metadata(), or a group id) if and only if this transaction
        commits."""
        await self._producer.send_offsets(offsets, group)

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        producer = self._producer
        if exc_type is None:
            try:
                await producer.commit()
            except KafkaError as error:
                if error.txn_requires_abort and producer.in_transaction:
                    await producer._abort_quietly()
                raise
            return
        if producer.in_transaction:
            await producer._abort_quietly()


class TransactionalProducer(_ProducerApi):
    """The transactional producer, for asyncio. Create it with
    ``await TransactionalProducer.create(servers, transactional_id, ...)``
    (initialising transactions blocks, so it runs on a worker thread); the
    arguments are exactly.TransactionalProducer's."""

    def __init__(self, sync: _producer.TransactionalProducer,
                 queue_full_timeout: float, retry: RetryPolicy) -> None:
        """Use ``create``."""
        super().__init__()
        self._sync: _producer.TransactionalProducer = sync
        self._queue_full_timeout = queue_full_timeout
        self._retry = retry
        self._start()

    @classmethod
    async def create(
        cls,
        bootstrap_servers: Optional[str] = None,
        transactional_id: Optional[str] = None,
        *,
        retry: Optional[RetryPolicy] = None,
        queue_full_timeout: float = 30.0,
        **kwargs: Any,
    ) -> "TransactionalProducer":
        policy = retry or RetryPolicy()
        sync = await cls._build(functools.partial(
            _producer.TransactionalProducer, bootstrap_servers,
            transactional_id, retry=policy, queue_full="fail", **kwargs))
        return cls(sync, float(queue_full_timeout), policy)

    @property
    def transactional_id(self) -> str:
        return self._sync.transactional_id

    @property
    def in_transaction(self) -> bool:
        return self._sync.in_transaction

    def transaction(self) -> Transaction:
        """``async with producer.transaction() as txn:``."""
        return Transaction(self)

    async def transact(self, fn: Callable[..., Awaitable[_T]], *args: Any,
                       **kwargs: Any) -> _T:
        """As exactly.TransactionalProducer.transact, with a coroutine
        function: begins, awaits ``fn(txn, *args, **kwargs)``, commits;
        aborts and runs it again on an abortable (or, inside fn, retriable)
        error, at most retry.max_attempts times, with back-off."""
        policy = self._retry
        backoff = policy.initial_backoff
        last: Optional[KafkaError] = None
        for attempt in range(1, policy.max_attempts + 1):
            if attempt > 1:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, policy.max_backoff)
                self._native.count_rerun()
            await self.begin()
            txn = Transaction(self, begun=True)
            try:
                result = await fn(txn, *args, **kwargs)
            except KafkaError as error:
                rerun = (error.txn_requires_abort or error.retriable) and \
                    not error.fatal
                if self.in_transaction:
                    if rerun:
                        await self.abort()
                    else:
                        await self._abort_quietly()
                if not rerun:
                    raise
                last = error
                continue
            except BaseException:
                if self.in_transaction:
                    await self._abort_quietly()
                raise
            try:
                await self.commit()
                return result
            except KafkaError as error:
                if not error.txn_requires_abort or error.fatal:
                    raise
                if self.in_transaction:
                    await self.abort()
                last = error
        assert last is not None
        raise KafkaError(
            f"transaction aborted {policy.max_attempts} times, giving up; "
            f"the last error: {last.message}",
            last.status, code=last.code, name=last.name,
            retriable=last.retriable,
            txn_requires_abort=last.txn_requires_abort, fatal=last.fatal,
            fenced=last.fenced) from last

    async def begin(self) -> None:
        await self._call(self._sync.begin)

    async def commit(self, timeout: Optional[float] = None) -> None:
        """Commits on the worker thread (see the synchronous commit)."""
        await self._call(self._sync.commit, timeout)

    async def abort(self, timeout: Optional[float] = None) -> None:
        await self._call(self._sync.abort, timeout)

    async def send_offsets(
        self,
        offsets: Iterable[Union[TopicPartitionOffset, Tuple[str, int, int]]],
        group: Any,
        timeout: Optional[float] = None,
    ) -> None:
        if isinstance(group, Consumer):
            group = group.group_metadata()
        await self._call(self._sync.send_offsets, list(offsets), group,
                         timeout)

    async def rebuild(self) -> None:
        await self._call(self._sync.rebuild)

    def transaction_stats(self) -> TransactionStats:
        return self._sync.transaction_stats()

    async def _abort_quietly(self) -> None:
        try:
            await self.abort()
        except Error:
            pass


class Consumer(_Client):
    """The read_committed consumer, for asyncio (arguments as
    exactly.Consumer's). Polls run on the client's worker thread, and so do
    the rebalance callbacks and ``on_error``: keep them short, and let them
    hand work to the loop with ``loop.call_soon_threadsafe``.

    >>> async with exactly.aio.Consumer(servers, "billing",
    ...                                 topics=["orders"]) as c:
    ...     async for message in c:
    ...         handle(message)
    ...         await c.commit(message)
    """

    def __init__(
        self,
        bootstrap_servers: Optional[str] = None,
        group_id: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        self._sync = _consumer.Consumer(bootstrap_servers, group_id, **kwargs)
        # The poll in progress on the worker: kept when the awaiting task is
        # cancelled, so the next poll returns what it fetched.
        self._inflight: Optional["asyncio.Future[List[Message]]"] = None
        # Fetched, not yet returned (only after such a cancellation, or
        # by the polls that wait for a commit's result).
        self._ready: Deque[Message] = deque()
        # close() has begun: no new poll goes to the worker.
        self._closing = False

    @classmethod
    async def create(cls, bootstrap_servers: Optional[str] = None,
                     group_id: Optional[str] = None,
                     **kwargs: Any) -> "Consumer":
        """The same as the constructor (which does not block)."""
        return cls(bootstrap_servers, group_id, **kwargs)

    def _poll_one(self, timeout: float) -> List[Message]:
        message = self._sync.poll(timeout)
        return [] if message is None else [message]

    async def _fetch(self, timeout: Optional[float],
                     fetch: Callable[[float], List[Message]]) -> List[Message]:
        deadline = None if timeout is None else self._loop.time() + timeout
        while True:
            if self._ready:
                out = list(self._ready)
                self._ready.clear()
                return out
            if self._closing and self._inflight is None:
                return []
            if self._inflight is None:
                left = POLL_SLICE if deadline is None else \
                    max(0.0, min(POLL_SLICE, deadline - self._loop.time()))
                self._inflight = self._call(fetch, left)
            inflight = self._inflight
            try:
                messages = await asyncio.shield(inflight)
            except asyncio.CancelledError:
                # The caller is cancelled: what the worker fetched (or is
                # still fetching) goes to the next poll, also when the fetch
                # ended just before the cancellation reached this task.
                if inflight.cancelled():
                    self._inflight = None
                elif inflight.done() and inflight.exception() is None:
                    self._ready.extend(inflight.result())
                    self._inflight = None
                raise
            except BaseException:
                self._inflight = None
                raise
            self._inflight = None
            if messages:
                return messages
            if self._closing or (deadline is not None and
                                 self._loop.time() >= deadline):
                return []

    async def poll(self, timeout: Optional[float] = None
                   ) -> Optional[Message]:
        """The next record, or None if none came within `timeout` seconds
        (None: wait until one does)."""
        messages = await self._fetch(timeout, self._poll_one)
        if not messages:
            return None
        self._ready.extend(messages[1:])
        return messages[0]

    async def poll_batch(self, max_records: int = 500,
                         timeout: Optional[float] = None) -> List[Message]:
        """Waits up to `timeout` seconds for a first record, then takes what
        is already fetched, up to `max_records`."""
        messages = await self._fetch(
            timeout, lambda t: self._sync.poll_batch(max_records, t))
        self._ready.extend(messages[max_records:])
        return messages[:max_records]

    def __aiter__(self) -> "Consumer":
        return self

    async def __anext__(self) -> Message:
        """Records, until the consumer is closed."""
        while not self._closing:
            message = await self.poll(POLL_SLICE)
            if message is not None:
                return message
        raise StopAsyncIteration

    async def batches(self, max_records: int = 500,
                      timeout: float = 1.0) -> Any:
        """An async iterator of non-empty batches, until closed."""
        while not self._closing:
            batch = await self.poll_batch(max_records, timeout)
            if batch:
                yield batch

    async def commit(
        self,
        offsets: Optional[_consumer.Offsets] = None,
    ) -> None:
        """Commits the position after every record returned so far, or
        `offsets` (see exactly.Consumer.commit), and returns once the group
        coordinator has it; raises its KafkaError. Asynchronous: the commit
        is sent from the worker at once, and its result comes back to the
        loop through the client's callback queue. librdkafka reports it
        inside a poll, so until then the worker polls in slices; a record
        those polls fetch is kept for the next poll(). Cancelling the await
        does not take the commit back."""
        inflight = self._inflight
        if offsets is None and inflight is not None:
            # A poll still in flight (its caller was cancelled) hands its
            # records to Python, for the next poll(): wait for it, so that
            # they count as fetched, not returned.
            await asyncio.wait([inflight])
            if self._inflight is inflight and not inflight.cancelled() and \
                    inflight.exception() is None:
                self._inflight = None
                self._ready.extend(inflight.result())
        if offsets is None and self._ready:
            offsets = await self._returned_positions()
        future: "asyncio.Future[None]" = self._loop.create_future()
        await self._call(functools.partial(
            self._sync.commit, offsets, asynchronous=True,
            on_commit=self._completion(future)))
        while not future.done():
            if self._closing:
                raise StateError("the consumer was closed before the "
                                 "commit's result came")
            if self._inflight is None:
                self._inflight = self._call(self._poll_one, COMMIT_POLL_SLICE)
            inflight = self._inflight
            either: List["asyncio.Future[Any]"] = [future, inflight]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if inflight.done() and self._inflight is inflight:
                self._inflight = None
                if not inflight.cancelled():
                    # A poll's error (a rebalance callback that raised) is
                    # raised here, as a synchronous commit would.
                    self._ready.extend(inflight.result())
        await future

    async def _returned_positions(self) -> List[TopicPartitionOffset]:
        """The position, less the records fetched but not returned."""
        first: Dict[Tuple[str, int], int] = {}
        for m in self._ready:
            first.setdefault((m.topic, m.partition), m.offset)
        positions = await self._call(self._sync.position)
        return [TopicPartitionOffset(p.topic, p.partition,
                                     first.get((p.topic, p.partition),
                                               p.offset))
                for p in positions if p.offset >= 0]

    async def subscribe(self, topics: Union[str, Sequence[str]],
                        **callbacks: Any) -> None:
        await self._call(functools.partial(self._sync.subscribe, topics,
                                           **callbacks))

    async def seek(self, topic: str, partition: int, offset: int,
                   timeout: Optional[float] = 10.0) -> None:
        self._ready = deque(m for m in self._ready
                            if (m.topic, m.partition) != (topic, partition))
        await self._call(self._sync.seek, topic, partition, offset, timeout)

    async def position(self) -> List[TopicPartitionOffset]:
        return await self._call(self._sync.position)

    async def assignment(self) -> List[TopicPartition]:
        return await self._call(self._sync.assignment)

    def group_metadata(self) -> ConsumerGroupMetadata:
        metadata: ConsumerGroupMetadata = self._sync.group_metadata()
        return metadata

    async def close(self) -> None:
        """Leaves the group and closes (on the worker thread, after the
        poll in progress: at most POLL_SLICE). A poll awaited meanwhile
        returns what that poll fetched, or None; ``async for`` ends."""
        if self._closing:
            return
        self._closing = True
        try:
            await self._call(self._sync.close)
        finally:
            self._shutdown()


def _is_coroutine_function(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or \
        inspect.iscoroutinefunction(getattr(fn, "__call__", None))


#: How often a worker waiting for a coroutine transform checks that its
#: loop still runs (seconds).
_TRANSFORM_CHECK = 0.5


def _on_the_loop(transform: Callable[..., Awaitable[Any]],
                 loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    """A plain transform for the worker thread that runs the coroutine
    transform on `loop` and waits for it. If the loop stops meanwhile, the
    transform raises (the batch is aborted, never half committed)."""
    async def awaited(result: Awaitable[Any]) -> Any:
        return await result

    def call(message: Message, emitter: Any) -> Any:
        future: "concurrent.futures.Future[Any]" = \
            asyncio.run_coroutine_threadsafe(
                awaited(transform(message, emitter)), loop)
        while True:
            try:
                return future.result(_TRANSFORM_CHECK)
            except concurrent.futures.TimeoutError:
                if loop.is_closed() or not loop.is_running():
                    future.cancel()
                    raise RuntimeError(
                        "the event loop of an async transform stopped")
    return call


def _spool_full(error: Error) -> bool:
    return isinstance(error, ResourceExhaustedError)


class SpooledProducer(_Client):
    """The durable spool, for asyncio: ``await send(...)`` returns once the
    record is on local disk (its durability completes on the loop, through
    the spool's callback queue). Create it with
    ``await SpooledProducer.create(directory, servers, transactional_id,
    ...)`` (opening and recovering the spool runs on a worker thread); the
    arguments are exactly.SpooledProducer's, and ``when_full`` is always
    "wait without blocking the loop", up to ``full_timeout`` seconds.

    A send only queues the record and returns the loop; the disk write and
    its sync happen on the spool's threads. The native call can still wait
    briefly when earlier sends holding 16 MiB are not yet durable.
    """

    def __init__(self, sync: _spool.SpooledProducer,
                 full_timeout: float) -> None:
        """Use ``create``."""
        super().__init__()
        self._sync = sync
        self._native = sync._native
        self._full_timeout = full_timeout
        self._watch(self._native)

    @classmethod
    async def create(
        cls,
        directory: str,
        bootstrap_servers: Optional[str] = None,
        transactional_id: Optional[str] = None,
        *,
        full_timeout: float = 30.0,
        **kwargs: Any,
    ) -> "SpooledProducer":
        sync = await cls._build(functools.partial(
            _spool.SpooledProducer, directory, bootstrap_servers,
            transactional_id, when_full="fail", **kwargs))
        return cls(sync, float(full_timeout))

    async def send(
        self,
        topic: str,
        value: Data = None,
        key: Data = None,
        *,
        partition: int = ANY_PARTITION,
        cursor: Optional[str] = None,
    ) -> None:
        """Appends one record; returns once it is durable."""
        await self.send_batch(topic, [(key, value)], partition=partition,
                              cursor=cursor)

    async def send_batch(
        self,
        topic: str,
        records: Iterable[BatchItem],
        *,
        partition: int = ANY_PARTITION,
        cursor: Optional[str] = None,
    ) -> None:
        """Appends records (values, or (key, value) pairs) in one write:
        returns once all are durable, or raises why none was spooled."""
        items = list(records)
        await self._admit()
        future: "asyncio.Future[None]" = self._loop.create_future()
        complete = self._completion(future)
        await self._retry_when_full(
            lambda: self._native.send_batch_async(topic, items, partition,
                                                  cursor, complete),
            self._full_timeout, _spool_full)
        await future

    async def flush(self, timeout: Optional[float] = None) -> None:
        """Waits (on the worker) until every record appended so far is
        committed to Kafka."""
        await self._call(self._native.flush, timeout)

    async def close(self, drain_timeout: float = 0.0) -> int:
        """Closes (on the worker); returns how many records stay spooled."""
        if self._reader_native is None:
            return 0
        try:
            return await self._call(self._sync.close, drain_timeout)
        finally:
            self._shutdown()

    @property
    def recovered_cursor(self) -> str:
        return str(self._sync.recovered_cursor)

    @property
    def exactly_once(self) -> bool:
        return bool(self._sync.exactly_once)

    def metrics(self) -> _spool.SpoolMetrics:
        metrics: _spool.SpoolMetrics = self._sync.metrics()
        return metrics


class Processor(_Client):
    """The exactly-once consume-transform-produce loop, for asyncio. Create
    it with ``await Processor.create(...)`` (exactly.Processor's
    arguments). Batches run on the worker thread. The ``transform`` is a
    plain function, which runs there (off the loop, so it may block), or a
    coroutine function, ``async def transform(message, emitter)``, which
    runs on the loop while the worker waits for it: it may await other
    clients of the loop, and its emitter is valid until it returns. Either
    way an exception it raises aborts the batch, whose input is transformed
    again by the next run: only one run's output is ever committed.

    >>> async def enrich(message, out):
    ...     out.send("enriched", key=message.key,
    ...              value=await lookup(message.value))
    >>> p = await exactly.aio.Processor.create(
    ...     servers, group_id="enricher", input_topics="orders",
    ...     transactional_id="enricher-1", transform=enrich)
    """

    def __init__(self, sync: _processor.Processor) -> None:
        """Use ``create``."""
        super().__init__()
        self._sync = sync
        self._stopping = False

    @classmethod
    async def create(cls, bootstrap_servers: str, **kwargs: Any
                     ) -> "Processor":
        transform = kwargs.get("transform")
        if transform is not None and _is_coroutine_function(transform):
            kwargs["transform"] = _on_the_loop(
                transform, asyncio.get_running_loop())
        sync = await cls._build(functools.partial(
            _processor.Processor, bootstrap_servers, **kwargs))
        return cls(sync)

    async def run(self) -> None:
        """Processes batches until stop() (the last batch committed) or an
        error. Cancelling it lets the batch in progress finish on the
        worker; close() then waits for it."""
        self._stopping = False
        while not self._stopping:
            await self._call(self._sync.run_once)

    async def run_once(self) -> None:
        await self._call(self._sync.run_once)

    def stop(self) -> None:
        """Makes run() return after the current batch."""
        self._stopping = True

    def stats(self) -> ProcessorStats:
        stats: ProcessorStats = self._sync.stats()
        return stats

    async def close(self) -> None:
        if self._sync.closed:
            return
        try:
            await self._call(self._sync.close)
        finally:
            self._shutdown()
