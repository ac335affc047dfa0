"""The values that travel through the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, NamedTuple, Tuple

from exactly import _exactly

__all__ = [
    "ABORT_CAUSES",
    "ANY_PARTITION",
    "BATCH_SIZE_BOUNDS",
    "COMMIT_LATENCY_BOUNDS",
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "PROCESSOR_ABORT_CAUSES",
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

#: Upper bounds (seconds) of TransactionStats.commit_latency_counts.
COMMIT_LATENCY_BOUNDS: Tuple[float, ...] = _exactly.COMMIT_LATENCY_BOUNDS
#: Upper bounds (input records) of ProcessorStats.batch_size_counts.
BATCH_SIZE_BOUNDS: Tuple[int, ...] = _exactly.BATCH_SIZE_BOUNDS
#: Why a transaction was aborted (TransactionStats.aborted_by_cause):
#: ``requested`` (abort() by the application), ``error`` (transact's function
#: or a ``with`` block raised, or an error transact does not rerun),
#: ``abortable_error`` (an abortable Kafka error), ``close`` (close() with a
#: transaction open).
ABORT_CAUSES: Tuple[str, ...] = ("requested", "error", "abortable_error",
                                 "close")
#: Why the processor aborted a batch (ProcessorStats.aborted_by_cause):
#: ``error`` (the transform's own error: processing stops),
#: ``abortable_error`` (the batch is transformed again), ``revoked``
#: (partitions it read were revoked), ``close``.
PROCESSOR_ABORT_CAUSES: Tuple[str, ...] = ("error", "abortable_error",
                                           "revoked", "close")

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
    #: records accepted by send (queued; each then reported once). Of the
    #: current librdkafka instance (a rebuild starts it afresh).
    sent: int = 0


class TransactionStats(NamedTuple):
    committed: int
    aborted: int
    reruns: int  #: times transact() ran its function again after an abort
    retries: int  #: calls repeated after a retriable error
    rebuilds: int
    #: transactions begun with a new producer epoch, because the aborted one
    #: before them purged a record that may have reached the broker
    epoch_bumps: int = 0
    #: ``aborted`` by cause (the keys are ABORT_CAUSES; they add up to it)
    aborted_by_cause: Dict[str, int] = {}
    #: how long each commit() that committed took: counts per bucket of
    #: COMMIT_LATENCY_BOUNDS (seconds), the last one above them all
    commit_latency_counts: Tuple[int, ...] = ()
    commit_latency_sum: float = 0.0  #: seconds
    #: a newer instance with the same transactional.id fenced this one
    #: (final: rebuild() is refused)
    fenced: bool = False


class ProcessorStats(NamedTuple):
    records_in: int
    records_out: int
    transactions_committed: int
    transactions_aborted: int
    batches_replayed: int
    committed_offsets: List[TopicPartitionOffset]
    #: ``transactions_aborted`` by cause (keys: PROCESSOR_ABORT_CAUSES)
    aborted_by_cause: Dict[str, int] = {}
    #: input records per committed batch: counts per bucket of
    #: BATCH_SIZE_BOUNDS, the last one above them all (their sum: records_in)
    batch_size_counts: Tuple[int, ...] = ()
    partitions_assigned: int = 0  #: rebalances that assigned partitions
    partitions_revoked: int = 0  #: rebalances that revoked (or lost) some


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
