"""exactly: exactly-once delivery with Apache Kafka, from Python.

>>> import exactly
>>> with exactly.testing.Broker() as broker:      # in-process, no JVM/Docker
...     p = exactly.TransactionalProducer(broker.bootstrap_servers, "t1")
...     with p.transaction() as txn:
...         txn.send("orders", key=b"k", value=b"v")

Producers, consumers and the processor wrap exactly's C++ SDK (librdkafka
underneath); ``exactly.testing`` is the bundled broker in this process, and
``exactly.pytest_plugin`` its pytest fixtures. Blocking calls release the
GIL and Ctrl-C interrupts them; callbacks run on the calling thread.
"""

from exactly import _exactly
from exactly import testing
from exactly.consumer import Consumer
from exactly.errors import (
    ConfigError,
    Error,
    KafkaError,
    ResourceExhaustedError,
    StateError,
    TimeoutError,
)
from exactly.processor import Emitter, Processor
from exactly.producer import (
    DeliveryFuture,
    Producer,
    Transaction,
    TransactionalProducer,
)
from exactly.types import (
    ABORT_CAUSES,
    ANY_PARTITION,
    BATCH_SIZE_BOUNDS,
    COMMIT_LATENCY_BOUNDS,
    OFFSET_BEGINNING,
    OFFSET_END,
    OFFSET_INVALID,
    PROCESSOR_ABORT_CAUSES,
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

__version__ = "0.1.0"
#: The librdkafka underneath.
librdkafka_version: str = _exactly.librdkafka_version

__all__ = [
    "ABORT_CAUSES",
    "ANY_PARTITION",
    "BATCH_SIZE_BOUNDS",
    "COMMIT_LATENCY_BOUNDS",
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "OFFSET_INVALID",
    "PROCESSOR_ABORT_CAUSES",
    "ConfigError",
    "Consumer",
    "ConsumerGroupMetadata",
    "DeliveryFuture",
    "DeliveryReport",
    "Emitter",
    "Error",
    "KafkaError",
    "Message",
    "Processor",
    "ProcessorStats",
    "Producer",
    "ProducerStats",
    "ResourceExhaustedError",
    "RetryPolicy",
    "StateError",
    "TimeoutError",
    "TopicPartition",
    "TopicPartitionOffset",
    "Transaction",
    "TransactionStats",
    "TransactionalProducer",
    "testing",
]

if _exactly.has_spool:
    from exactly.spool import SpooledProducer, SpoolMetrics  # noqa: F401

    __all__ += ["SpooledProducer", "SpoolMetrics"]
