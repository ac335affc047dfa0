"""The consumer: read_committed, no auto-commit, in a consumer group."""

from __future__ import annotations

from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from exactly import _config, _exactly
from exactly._closing import ClosesOnExit
from exactly.errors import Error, KafkaError
from exactly.types import (
    ConsumerGroupMetadata,
    Message,
    TopicPartition,
    TopicPartitionOffset,
)

__all__ = ["Consumer"]

#: on_assign / on_revoke / on_lost(partitions)
RebalanceCallback = Callable[[List[TopicPartition]], Any]
#: on_commit(error): None on success.
CommitCallback = Callable[[Optional[KafkaError]], Any]
Offsets = Union[
    Message,
    Iterable[Union[Message, TopicPartitionOffset, Tuple[str, int, int]]],
]


def _offsets(offsets: Offsets) -> List[Tuple[str, int, int]]:
    """Offsets to commit: messages become the offset after the last one per
    partition."""
    if isinstance(offsets, Message):
        offsets = [offsets]
    out: Dict[Tuple[str, int], int] = {}
    for item in offsets:
        if isinstance(item, Message):
            key, offset = (item.topic, item.partition), item.offset + 1
            out[key] = max(out.get(key, offset), offset)
        else:
            topic, partition, offset = item
            out[(topic, partition)] = offset
    return [(t, p, o) for (t, p), o in out.items()]


class Consumer(ClosesOnExit):
    """A consumer in a group, reading with isolation.level=read_committed and
    committing only when told to.

    >>> with exactly.Consumer("localhost:9092", "billing",
    ...                       topics=["orders"]) as c:
    ...     for message in c:           # Ctrl-C stops it
    ...         handle(message)
    ...         c.commit()

    ``poll``, ``poll_batch`` and iteration wait with the GIL released, and
    Ctrl-C interrupts them. Rebalance callbacks (``on_assign``,
    ``on_revoke``, ``on_lost``) and ``on_error`` run on the polling thread,
    inside poll; what they raise is raised by that poll. So does
    ``on_statistics(json)``: librdkafka's newest statistics report, a JSON
    str, every ``statistics_interval_ms`` (set that property).
    """

    def __init__(
        self,
        bootstrap_servers: Optional[str] = None,
        group_id: Optional[str] = None,
        *,
        topics: Optional[Union[str, Sequence[str]]] = None,
        config: Optional[Mapping[str, Any]] = None,
        client_id: Optional[str] = None,
        mode: str = "exactly_once",
        on_assign: Optional[RebalanceCallback] = None,
        on_revoke: Optional[RebalanceCallback] = None,
        on_lost: Optional[RebalanceCallback] = None,
        on_error: Optional[Callable[[Error], Any]] = None,
        on_statistics: Optional[Callable[[str], Any]] = None,
        **properties: Any,
    ) -> None:
        props = _config.properties(
            config,
            properties,
            bootstrap_servers=bootstrap_servers,
            group_id=group_id,
            client_id=client_id,
        )
        self._native = _exactly.Consumer(props, _config.mode_unchecked(mode),
                                         on_error,
                                         on_statistics=on_statistics)
        if topics is not None:
            self.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke,
                           on_lost=on_lost)

    def subscribe(
        self,
        topics: Union[str, Sequence[str]],
        *,
        on_assign: Optional[RebalanceCallback] = None,
        on_revoke: Optional[RebalanceCallback] = None,
        on_lost: Optional[RebalanceCallback] = None,
    ) -> None:
        """Subscribes to `topics` (replacing an earlier subscription).
        on_revoke runs while the partitions are still assigned: the last
        moment to commit for them; on_lost (default: on_revoke) when they
        may already belong to another member."""
        if isinstance(topics, str):
            topics = [topics]
        self._native.subscribe(list(topics), on_assign, on_revoke, on_lost)

    def unsubscribe(self) -> None:
        self._native.unsubscribe()

    def poll(self, timeout: Optional[float] = None) -> Optional[Message]:
        """The next record, or None if none arrived within `timeout` seconds
        (None: wait until one does)."""
        return self._native.poll(timeout)  # type: ignore[no-any-return]

    def poll_batch(self, max_records: int = 500,
                   timeout: Optional[float] = None) -> List[Message]:
        """Waits up to `timeout` seconds for a first record, then takes what
        is already fetched, up to `max_records`. Empty if none came."""
        return self._native.poll_batch(  # type: ignore[no-any-return]
            max_records, timeout)

    def batches(self, max_records: int = 500,
                timeout: float = 1.0) -> Iterator[List[Message]]:
        """Non-empty batches, forever (until the consumer is closed)."""
        while not self.closed:
            batch = self.poll_batch(max_records, timeout)
            if batch:
                yield batch

    def __iter__(self) -> Iterator[Message]:
        """Records, forever (until the consumer is closed)."""
        while not self.closed:
            message = self.poll(1.0)
            if message is not None:
                yield message

    def commit(
        self,
        offsets: Optional[Offsets] = None,
        *,
        asynchronous: bool = False,
        on_commit: Optional[CommitCallback] = None,
    ) -> None:
        """Commits the position after every record returned so far (or
        `offsets`: the next offset to read per partition, or messages, for
        which the offset after each is committed). Synchronous by default,
        interruptibly; with asynchronous=True returns at once and
        on_commit(error) runs inside a later poll."""
        native = None if offsets is None else _offsets(offsets)
        self._native.commit(native, asynchronous, on_commit)

    def seek(self, topic: str, partition: int, offset: int,
             timeout: Optional[float] = 10.0) -> None:
        """The next poll of that (assigned) partition returns the record at
        `offset` (or OFFSET_BEGINNING / OFFSET_END)."""
        self._native.seek(topic, partition, offset, timeout)

    def position(self) -> List[TopicPartitionOffset]:
        """The next offset to return, per assigned partition."""
        return self._native.position()  # type: ignore[no-any-return]

    def committed(self, timeout: Optional[float] = 10.0
                  ) -> List[TopicPartitionOffset]:
        """Committed offsets of the assigned partitions (OFFSET_INVALID if
        none)."""
        return self._native.committed(timeout)  # type: ignore[no-any-return]

    def assignment(self) -> List[TopicPartition]:
        return self._native.assignment()  # type: ignore[no-any-return]

    def group_metadata(self) -> ConsumerGroupMetadata:
        """For TransactionalProducer.send_offsets."""
        return self._native.group_metadata()  # type: ignore[no-any-return]

    def close(self) -> None:
        """Leaves the group (on_revoke sees the revocation) and stops.
        Later calls do nothing."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return bool(self._native.closed)

