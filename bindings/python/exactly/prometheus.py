"""The SDK's statistics as Prometheus metrics: the same names as the C++
exporter (exactly/prometheus.h), as plain dicts and as a collector for
``prometheus_client``.

>>> import prometheus_client
>>> from exactly.prometheus import ExactlyCollector
>>> collector = ExactlyCollector()
>>> prometheus_client.REGISTRY.register(collector)
>>> collector.register("orders", producer)  # any exactly client, sync or aio

librdkafka's own statistics: pass ``collector.statistics_for("orders")`` as
a client's ``on_statistics=`` (with ``statistics_interval_ms`` set); the
last report per client and type is summarised into the
``exactly_librdkafka_*`` families, as the C++ ``StatisticsFor`` does, until
``forget_statistics("orders")``. ``librdkafka_metrics(report)`` gives one
report in the dict form of ``metrics()``.

``metrics(client)`` needs nothing else installed; ``ExactlyCollector``
imports ``prometheus_client`` when it is created.

The collector holds its clients weakly: a client that is garbage collected,
or closed, drops out of the scrapes by itself (``unregister(name)`` removes
one at once).

Python's transactional producers count their transactions in the binding
(the commit latency is that of the whole ``commit()``); the rest is the
same. Histograms appear in
``metrics(client)`` as their ``_bucket{le="..."}``, ``_count`` and ``_sum``
series, and in the collector as ``HistogramMetricFamily``.
"""

import json
import threading
import weakref
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple, Union)

from . import _exactly
from .spool import SpoolMetrics
from .types import (ABORT_CAUSES, PROCESSOR_ABORT_CAUSES, ProcessorStats,
                    ProducerStats, TransactionStats)

__all__ = ["ExactlyCollector", "librdkafka_metrics", "metrics"]

# (name, type, help, stats field) of each metric, in the order of a scrape.
_PRODUCER = [
    ("exactly_producer_delivered_records_total", "counter",
     "Records whose delivery report said they were written", "delivered"),
    ("exactly_producer_failed_records_total", "counter",
     "Records whose delivery report carried an error", "failed"),
    ("exactly_producer_queue_records", "gauge",
     "Records (and librdkafka requests) sent and not yet reported: "
     "librdkafka's out queue", "in_flight"),
    ("exactly_producer_callback_errors_total", "counter",
     "Exceptions thrown by delivery callbacks", "callback_errors"),
    ("exactly_producer_sent_records_total", "counter",
     "Records accepted by Send (queued; each is then reported as delivered "
     "or failed)", "sent"),
]
_TRANSACTIONS = [
    ("exactly_transactions_committed_total", "counter",
     "Transactions committed", "committed"),
    ("exactly_transaction_reruns_total", "counter",
     "Times Transact ran its function again after an abort", "reruns"),
    ("exactly_transaction_retries_total", "counter",
     "Transactional calls repeated after a retriable error", "retries"),
    ("exactly_transactional_producer_rebuilds_total", "counter",
     "Rebuild() calls that succeeded", "rebuilds"),
    ("exactly_transactional_producer_epoch_bumps_total", "counter",
     "Transactions begun with a new producer epoch", "epoch_bumps"),
    ("exactly_transactional_producer_fenced", "gauge",
     "1 once a newer instance with the same transactional.id fenced this one",
     "fenced"),
]
_SPOOL = [
    ("exactly_spool_depth_records", "gauge",
     "Records in the spool: not yet committed to Kafka", "depth"),
    ("exactly_spool_bytes", "gauge",
     "The stored size of the records spooled", "bytes"),
    ("exactly_spool_oldest_record_age_seconds", "gauge",
     "Age of the oldest record in the spool (0 if empty)", "oldest_age"),
    ("exactly_spool_disk_bytes", "gauge",
     "The spool database's WAL and SST files", "disk_bytes"),
    ("exactly_spool_appended_records_total", "counter",
     "Records accepted by Send, SendBatch and SendAsync", "appended"),
    ("exactly_spool_sent_records_total", "counter",
     "Records handed to the producer by the drainer (re-sends included)",
     "sent"),
    ("exactly_spool_committed_records_total", "counter",
     "Records committed to Kafka and deleted from the spool", "committed"),
    ("exactly_spool_transactions_total", "counter",
     "Transactions (batches, at-least-once) the drainer committed",
     "transactions"),
    ("exactly_spool_group_commits_total", "counter",
     "Spool writes (one WAL sync each under SyncPolicy::kAlways); "
     "appended / group commits is their mean size", "group_commits"),
    ("exactly_spool_recoveries_total", "counter",
     "Times the drainer learnt the committed watermark anew", "recoveries"),
    ("exactly_spool_drainer_errors_total", "counter",
     "Failed drainer transactions or recoveries (each retried)",
     "drainer_errors"),
    ("exactly_spool_last_commit_latency_seconds", "gauge",
     "The drainer's last commit", "last_commit_latency"),
    ("exactly_spool_max_commit_latency_seconds", "gauge",
     "The drainer's slowest commit since the spool opened",
     "max_commit_latency"),
    ("exactly_spool_mean_commit_latency_seconds", "gauge",
     "The drainer's mean commit time since the spool opened",
     "mean_commit_latency"),
    ("exactly_spool_quarantined_records", "gauge",
     "Records in the quarantine (damaged or missing), earlier instances' "
     "included", "quarantined"),
    ("exactly_spool_next_sequence", "gauge",
     "The next sequence to hand out", "next_sequence"),
    ("exactly_spool_committed_sequence", "gauge",
     "The last sequence committed to Kafka", "committed_sequence"),
]
_TXN_ABORTED = ("exactly_transactions_aborted_total", "counter",
                "Transactions aborted, by cause: requested (Abort()), error "
                "(Transact's function failed), abortable_error (Transact runs "
                "it again), close (Close() with one open)")
_TXN_LATENCY = ("exactly_transaction_commit_latency_seconds", "histogram",
                "How long each Commit() that committed took")
_SPOOL_GROUP_LATENCY = ("exactly_spool_group_commit_latency_seconds",
                        "histogram",
                        "How long each group commit took, from the start of "
                        "its write until it was durable")
_SPOOL_GROUP_SIZE = ("exactly_spool_group_commit_size_records", "histogram",
                     "Records written by each group commit")
_SPOOL_UP = ("exactly_spool_drainer_up", "gauge",
             "1 while the drainer runs, 0 once it stopped for good (fenced)")
_PROCESSOR = [
    ("exactly_processor_input_records_total", "counter",
     "Input records whose offsets were committed", "records_in"),
    ("exactly_processor_output_records_total", "counter",
     "Output records committed", "records_out"),
    ("exactly_processor_transactions_committed_total", "counter",
     "Batches committed (one transaction each)", "transactions_committed"),
    ("exactly_processor_batches_replayed_total", "counter",
     "Batches transformed again after an abort", "batches_replayed"),
    ("exactly_processor_partitions_assigned_total", "counter",
     "Rebalances that assigned partitions to this member",
     "partitions_assigned"),
    ("exactly_processor_partitions_revoked_total", "counter",
     "Rebalances that revoked (or lost) partitions of this member",
     "partitions_revoked"),
]
_PROC_ABORTED = ("exactly_processor_transactions_aborted_total", "counter",
                 "Batches aborted, by cause: error (processing stops), "
                 "abortable_error (transformed again), revoked (partitions "
                 "revoked), close")
_PROC_BATCH_SIZE = ("exactly_processor_batch_size_records", "histogram",
                    "Input records per committed batch")
_OFFSET = ("exactly_processor_committed_offset", "gauge",
           "The next input offset to read, as last committed")

# A histogram's value: its cumulative buckets (upper bound as the le label,
# count), the last one "+Inf", and the sum of its samples.
_Histogram = Tuple[List[Tuple[str, float]], float]
# One sample: (metric, type, help, extra labels, value).
_Sample = Tuple[str, str, str, Tuple[Tuple[str, str], ...],
                Union[float, _Histogram]]


def _le(bound: float) -> str:
    # As prometheus_client writes a bucket's bound (Go's float format).
    return repr(float(bound))


def _histogram(bounds: Sequence[float], counts: Sequence[int],
               total: float) -> _Histogram:
    """`counts[i]`: the samples above bounds[i - 1] and at most bounds[i];
    the last, above every bound. Made cumulative."""
    buckets: List[Tuple[str, float]] = []
    cumulative = 0
    for bound, count in zip(bounds, counts):
        cumulative += count
        buckets.append((_le(bound), float(cumulative)))
    cumulative += sum(counts[len(bounds):])
    buckets.append(("+Inf", float(cumulative)))
    return buckets, float(total)


def _samples(client: Any) -> List[_Sample]:
    """The samples of one client, from its stats: a Producer,
    TransactionalProducer, SpooledProducer or Processor (or their aio
    versions)."""
    out: List[_Sample] = []

    def add(table: List[Tuple[str, str, str, str]], stats: Any) -> None:
        for name, kind, help_text, field in table:
            out.append((name, kind, help_text, (), float(getattr(stats, field))))

    def by_cause(family: Tuple[str, str, str], causes: Sequence[str],
                 counts: Dict[str, int]) -> None:
        # One sample per cause: they add up to the total.
        for cause in causes:
            out.append(family + ((("cause", cause),),
                                 float(counts.get(cause, 0))))

    if hasattr(client, "metrics"):
        m = client.metrics()
        if not isinstance(m, SpoolMetrics):
            raise TypeError(f"not an exactly client: {client!r}")
        add(_SPOOL, m)
        out.append(_SPOOL_GROUP_LATENCY + ((), _histogram(
            _exactly.GROUP_COMMIT_LATENCY_BOUNDS,
            m.group_commit_latency_counts, m.group_commit_latency_sum)))
        out.append(_SPOOL_GROUP_SIZE + ((), _histogram(
            _exactly.GROUP_COMMIT_SIZE_BOUNDS, m.group_commit_size_counts,
            m.appended)))
        out.append(_SPOOL_UP + ((), 1.0 if m.drainer_error is None else 0.0))
        return out
    stats = client.stats() if hasattr(client, "stats") else None
    if isinstance(stats, ProducerStats):
        add(_PRODUCER, stats)
        if hasattr(client, "transaction_stats"):
            txn = client.transaction_stats()
            if not isinstance(txn, TransactionStats):
                raise TypeError(f"not an exactly client: {client!r}")
            add(_TRANSACTIONS, txn)
            by_cause(_TXN_ABORTED, ABORT_CAUSES, txn.aborted_by_cause)
            out.append(_TXN_LATENCY + ((), _histogram(
                _exactly.COMMIT_LATENCY_BOUNDS, txn.commit_latency_counts,
                txn.commit_latency_sum)))
    elif isinstance(stats, ProcessorStats):
        add(_PROCESSOR, stats)
        by_cause(_PROC_ABORTED, PROCESSOR_ABORT_CAUSES, stats.aborted_by_cause)
        out.append(_PROC_BATCH_SIZE + ((), _histogram(
            _exactly.BATCH_SIZE_BOUNDS, stats.batch_size_counts,
            stats.records_in)))
        for tpo in stats.committed_offsets:
            out.append(_OFFSET + ((("topic", tpo.topic),
                                   ("partition", str(tpo.partition))),
                                  float(tpo.offset)))
    else:
        raise TypeError(f"not an exactly client: {client!r}")
    return out


# librdkafka's statistics (a client's on_statistics reports), summarised as
# the C++ exporter does: (name, type, help, field) of each per-client metric.
_LIBRDKAFKA = [
    ("exactly_librdkafka_queue_messages", "gauge",
     "librdkafka: messages in the producer queues (msg_cnt)", "msg_cnt"),
    ("exactly_librdkafka_queue_bytes", "gauge",
     "librdkafka: bytes of the messages in the producer queues (msg_size)",
     "msg_size"),
    ("exactly_librdkafka_reply_queue_ops", "gauge",
     "librdkafka: operations waiting to be served (replyq)", "replyq"),
    ("exactly_librdkafka_tx_messages_total", "counter",
     "librdkafka: messages sent to brokers (txmsgs)", "txmsgs"),
    ("exactly_librdkafka_tx_message_bytes_total", "counter",
     "librdkafka: bytes of the messages sent to brokers (txmsg_bytes)",
     "txmsg_bytes"),
    ("exactly_librdkafka_rx_messages_total", "counter",
     "librdkafka: messages received from brokers (rxmsgs)", "rxmsgs"),
]
# Per broker connection (labelled broker): rtt is in microseconds.
_LIBRDKAFKA_BROKER = [
    ("exactly_librdkafka_broker_rtt_avg_seconds", "gauge",
     "librdkafka: mean request round trip in the last interval (rtt.avg)"),
    ("exactly_librdkafka_broker_rtt_p99_seconds", "gauge",
     "librdkafka: 99th percentile request round trip in the last interval "
     "(rtt.p99)"),
    ("exactly_librdkafka_broker_requests_in_flight", "gauge",
     "librdkafka: requests awaiting a response (waitresp_cnt)"),
]
_LIBRDKAFKA_HIGH_WATERMARK = (
    "exactly_librdkafka_partition_high_watermark", "gauge",
    "librdkafka: the partition's high watermark (hi_offset)")
_LIBRDKAFKA_LAG = (
    "exactly_librdkafka_consumer_lag_messages", "gauge",
    "librdkafka: the consumer's lag behind the high watermark "
    "(consumer_lag)")


def _number(j: Any, key: str, otherwise: float = 0.0) -> float:
    # A JSON number (not a bool) under `key` of an object, or `otherwise`.
    if not isinstance(j, dict):
        return otherwise
    v = j.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return otherwise
    return float(v)


def _librdkafka_samples(report: Union[str, bytes]
                        ) -> Optional[Tuple[str, List[_Sample]]]:
    """The type ("producer", "consumer") of one librdkafka statistics
    report and its samples (labelled type, and broker or topic and
    partition), or None if it is not librdkafka's JSON."""
    try:
        j = json.loads(report)
    except (ValueError, TypeError):
        return None
    if not isinstance(j, dict):
        return None
    kind = j.get("type")
    if not isinstance(kind, str):
        kind = "unknown"
    typed = (("type", kind),)
    out: List[_Sample] = []
    for name, metric, help_text, field in _LIBRDKAFKA:
        out.append((name, metric, help_text, typed, _number(j, field)))
    brokers = j.get("brokers")
    if isinstance(brokers, dict):
        for broker, b in brokers.items():
            # Not the bootstrap connections nor the internal pseudo-broker.
            if _number(b, "nodeid", -1) < 0:
                continue
            rtt = b.get("rtt")
            values = (_number(rtt, "avg") / 1e6, _number(rtt, "p99") / 1e6,
                      _number(b, "waitresp_cnt"))
            labels = typed + (("broker", broker),)
            for family, value in zip(_LIBRDKAFKA_BROKER, values):
                out.append(family + (labels, value))
    topics = j.get("topics")
    if isinstance(topics, dict):
        for topic, t in topics.items():
            partitions = t.get("partitions") if isinstance(t, dict) else None
            if not isinstance(partitions, dict):
                continue
            for p in partitions.values():
                partition = _number(p, "partition", -1)
                if partition < 0:  # the unassigned-records pseudo-partition
                    continue
                labels = typed + (("topic", topic),
                                  ("partition", str(int(partition))))
                hi_offset = _number(p, "hi_offset", -1)
                if hi_offset >= 0:
                    out.append(
                        _LIBRDKAFKA_HIGH_WATERMARK + (labels, hi_offset))
                lag = _number(p, "consumer_lag", -1)
                if lag >= 0:
                    out.append(_LIBRDKAFKA_LAG + (labels, lag))
    return kind, out


def _series(name: str, labels: Tuple[Tuple[str, str], ...]) -> str:
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in labels)
    return f"{name}{{{inner}}}"


def metrics(client: Any) -> Dict[str, float]:
    """The client's metrics as a dict: series name (with its labels other
    than ``client``, e.g. ``exactly_processor_committed_offset{topic="in",
    partition="0"}``) to value. A histogram gives its ``_bucket`` series
    (with ``le``), ``_count`` and ``_sum``."""
    return _as_dict(_samples(client))


def librdkafka_metrics(report: Union[str, bytes]) -> Dict[str, float]:
    """One librdkafka statistics report (the JSON a client's
    ``on_statistics`` receives) summarised as the collector exports it:
    series name (with its labels other than ``client``, e.g.
    ``exactly_librdkafka_consumer_lag_messages{type="consumer",
    topic="in",partition="0"}``) to value. Empty if `report` is not
    librdkafka's JSON."""
    summary = _librdkafka_samples(report)
    return {} if summary is None else _as_dict(summary[1])


def _as_dict(samples: List[_Sample]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for name, _, _, labels, value in samples:
        if isinstance(value, tuple):
            buckets, total = value
            for le, count in buckets:
                out[_series(name + "_bucket", labels + (("le", le),))] = count
            out[_series(name + "_count", labels)] = buckets[-1][1]
            out[_series(name + "_sum", labels)] = total
        else:
            out[_series(name, labels)] = value
    return out


class ExactlyCollector:
    """A ``prometheus_client`` collector of exactly clients' metrics, each
    labelled ``client=<the name it was registered under>``."""

    def __init__(self) -> None:
        try:
            import prometheus_client.core as core  # noqa: F401
        except ImportError as e:
            raise ImportError(
                "exactly.prometheus.ExactlyCollector needs prometheus_client: "
                "pip install prometheus-client (or apt-get install "
                "python3-prometheus-client)") from e
        self._core = core
        self._lock = threading.Lock()
        self._clients: Dict[str, "weakref.ref[Any]"] = {}
        # The last librdkafka statistics per (client, type), summarised;
        # a lock of their own (a report never waits for a scrape's reading
        # of the clients).
        self._statistics_lock = threading.Lock()
        self._statistics: Dict[Tuple[str, str], List[_Sample]] = {}

    def statistics_for(self, name: str) -> Callable[[Union[str, bytes]], None]:
        """A callback for a client's ``on_statistics=`` (with
        ``statistics_interval_ms`` set): it keeps the last report per
        (`name`, librdkafka's type) and the scrapes export it as
        ``exactly_librdkafka_*``, labelled ``client=<name>``, ``type``
        (and ``broker``, or ``topic`` and ``partition``). A report that is
        not librdkafka's JSON is ignored. It stays until
        ``forget_statistics(name)``; the callback holds the collector
        weakly."""
        collector = weakref.ref(self)

        def on_statistics(report: Union[str, bytes]) -> None:
            self_ = collector()
            if self_ is None:
                return
            summary = _librdkafka_samples(report)
            if summary is None:
                return
            with self_._statistics_lock:
                self_._statistics[(name, summary[0])] = summary[1]

        return on_statistics

    def forget_statistics(self, name: str) -> None:
        """Drops the librdkafka statistics kept for `name`."""
        with self._statistics_lock:
            for key in [k for k in self._statistics if k[0] == name]:
                del self._statistics[key]

    def register(self, name: str, client: Any) -> None:
        """Adds `client` under `name` (its ``client`` label). ValueError if
        the name is empty or taken by a client still alive."""
        if not name:
            raise ValueError("a client needs a name (its label)")
        _samples(client)  # TypeError now rather than at each scrape
        with self._lock:
            known = self._clients.get(name)
            if known is not None and known() is not None:
                raise ValueError(f'a client is already registered as "{name}"')
            self._clients[name] = weakref.ref(client)

    def unregister(self, name: str) -> None:
        with self._lock:
            self._clients.pop(name, None)

    def _live(self) -> List[Tuple[str, Any]]:
        with self._lock:
            out = []
            for name, ref in list(self._clients.items()):
                client = ref()
                if client is None:
                    del self._clients[name]
                elif not getattr(client, "closed", False):
                    out.append((name, client))
            return out

    def collect(self) -> Iterator[Any]:
        """One scrape (called by prometheus_client)."""
        families: Dict[str, Any] = {}
        with self._statistics_lock:
            clients: List[Tuple[str, List[_Sample]]] = [
                (key[0], samples)
                for key, samples in sorted(self._statistics.items())]
        clients += [(name, _samples(client)) for name, client in self._live()]
        for name, samples in clients:
            for metric, kind, help_text, labels, value in samples:
                family = families.get(metric)
                if family is None:
                    label_names = ["client"] + [k for k, _ in labels]
                    cls = {
                        "counter": self._core.CounterMetricFamily,
                        "histogram": self._core.HistogramMetricFamily,
                    }.get(kind, self._core.GaugeMetricFamily)
                    family = cls(metric, help_text, labels=label_names)
                    families[metric] = family
                label_values = [name] + [v for _, v in labels]
                if isinstance(value, tuple):
                    buckets, total = value
                    family.add_metric(label_values, buckets=buckets,
                                      sum_value=total)
                else:
                    family.add_metric(label_values, value)
        yield from families.values()

    def describe(self) -> Iterator[Any]:
        """Nothing up front: the clients, hence the series, come and go."""
        return iter(())
