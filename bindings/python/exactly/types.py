"""The values that travel through the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, NamedTuple, Tuple

from exactly import _exactly

__all__ = [
    "ANY_PARTITION",
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "ConsumerGroupMetadata",
    "DeliveryReport",
    "Message",
    "ProcessorStats",
    "ProducerStats",
    "RetryPolicy",
    "TopicPartition",
    "TopicPartitionOffset",
    "TransactionStats",
]

#: Let the partitioner choose the partition.
ANY_PARTITION = -1
#: Logical offsets, as librdkafka's RD_KAFKA_OFFSET_*.
OFFSET_BEGINNING = -2
OFFSET_END = -1
OFFSET_INVALID = -1001

#: Where a sent record landed: ``topic``, ``partition``, ``offset``,
#: ``timestamp_ms``, ``key``, ``value``.
DeliveryReport = _exactly.DeliveryReport
#: A consumed record: ``topic``, ``partition``, ``offset``, ``timestamp_ms``,
#: ``key``, ``value`` (bytes or None), ``headers`` (list of (str, bytes|None)).
Message = _exactly.Message
#: A consumer's group membership, for ``TransactionalProducer.send_offsets``.
ConsumerGroupMetadata = _exactly.ConsumerGroupMetadata


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class TopicPartitionOffset(NamedTuple):
    topic: str
    partition: int
    offset: int


class ProducerStats(NamedTuple):
    delivered: int  #: reports with success
    failed: int  #: reports with an error
    in_flight: int  #: sent, not yet reported
    callback_errors: int  #: exceptions thrown by C++ delivery callbacks


class TransactionStats(NamedTuple):
    committed: int
    aborted: int
    reruns: int  #: times transact() ran its function again after an abort
    retries: int  #: calls repeated after a retriable error
    rebuilds: int
    #: transactions begun with a new producer epoch, because the aborted one
    #: before them purged a record that may have reached the broker
    epoch_bumps: int = 0


class ProcessorStats(NamedTuple):
    records_in: int
    records_out: int
    transactions_committed: int
    transactions_aborted: int
    batches_replayed: int
    committed_offsets: List[TopicPartitionOffset]


@dataclass(frozen=True)
class RetryPolicy:
    """How transactional calls are repeated (librdkafka's rules).

    ``max_attempts`` runs of one transaction (abortable errors),
    ``max_retries`` repeats of one call (retriable errors), back-off from
    ``initial_backoff`` doubling up to ``max_backoff`` seconds.
    """

    max_attempts: int = 5
    max_retries: int = 10
    initial_backoff: float = 0.1
    max_backoff: float = 5.0

    def _native(self) -> Tuple[int, int, float, float]:
        return (
            self.max_attempts,
            self.max_retries,
            self.initial_backoff,
            self.max_backoff,
        )
