"""The exactly-once consume-transform-produce loop."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union

from exactly import _config, _exactly
from exactly._closing import ClosesOnExit
from exactly.errors import Error
from exactly.types import Message, ProcessorStats, RetryPolicy

__all__ = ["Emitter", "Processor"]

#: Where a transform sends its output: ``emitter.send(topic, value=None,
#: key=None, *, partition=-1, timestamp_ms=0, headers=None)``, into the
#: batch's transaction.
Emitter = _exactly.Emitter
#: transform(message, emitter): turns one input record into zero or more
#: output records.
Transform = Callable[[Message, Any], Any]


class Processor(ClosesOnExit):
    """Consumes `input_topics` in consumer group `group_id`, calls
    ``transform(message, emitter)`` for each record, and commits the outputs
    together with the inputs' offsets in one transaction per batch: every
    input record affects the committed output exactly once, across crashes
    and rebalances.

    >>> def enrich(message, out):
    ...     out.send("enriched", key=message.key, value=message.value.upper())
    >>> with exactly.Processor("localhost:9092", group_id="enricher",
    ...                        input_topics=["orders"],
    ...                        transactional_id="enricher-1",
    ...                        transform=enrich) as p:
    ...     p.run()            # until p.stop(), an error, or Ctrl-C

    The transform may run more than once for an input (after an abort the
    batch is transformed again); only one run's output is ever committed, so
    keep it free of other side effects. An exception it raises aborts the
    batch (whose input stays uncommitted and is transformed again by the
    next run) and is raised by run()/run_once(). Properties for the two
    clients go in ``consumer_config`` and ``producer_config``.
    ``on_statistics(json)``: librdkafka's statistics reports of both
    clients (the JSON's "type" says which: "consumer" or "producer"), every
    ``statistics.interval.ms`` set in either config; the newest of each is
    passed on by the next ``run_once()``.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        group_id: str,
        input_topics: Union[str, Sequence[str]],
        transactional_id: str,
        transform: Transform,
        max_batch_records: int = 500,
        max_batch_time: float = 0.1,
        consumer_config: Optional[Mapping[str, Any]] = None,
        producer_config: Optional[Mapping[str, Any]] = None,
        retry: Optional[RetryPolicy] = None,
        init_timeout: Optional[float] = 60.0,
        on_error: Optional[Callable[[Error], Any]] = None,
        on_statistics: Optional[Callable[[str], Any]] = None,
    ) -> None:
        if isinstance(input_topics, str):
            input_topics = [input_topics]
        consumer = _config.properties(consumer_config, {},
                                      bootstrap_servers=bootstrap_servers,
                                      group_id=group_id)
        producer = _config.properties(producer_config, {},
                                      bootstrap_servers=bootstrap_servers,
                                      transactional_id=transactional_id)
        self._stopping = False
        self._native = _exactly.Processor(
            consumer,
            producer,
            list(input_topics),
            int(max_batch_records),
            float(max_batch_time),
            transform,
            on_error,
            (retry or RetryPolicy())._native(),
            init_timeout,
            on_statistics,
        )

    def run(self) -> None:
        """Processes batches until stop() (the last batch committed), an
        error, or Ctrl-C (KeyboardInterrupt; the batch in progress is
        aborted and transformed again by the next run)."""
        self._stopping = False
        while not self._stopping:
            self._native.run_once()

    def run_once(self) -> None:
        """One batch: waits up to max_batch_time for a first record, collects
        until the batch is full or its time is up, and commits it."""
        self._native.run_once()

    def stop(self) -> None:
        """Makes run() return after the current batch. Any thread."""
        self._stopping = True

    def stats(self) -> ProcessorStats:
        return self._native.stats()  # type: ignore[no-any-return]

    def close(self) -> None:
        """Leaves the group (an open batch is aborted) and closes both
        clients."""
        self._native.close()

    @property
    def closed(self) -> bool:
        return bool(self._native.closed)

