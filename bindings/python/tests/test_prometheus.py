"""The SDK's metrics from Python (exactly.prometheus): the same names as the
C++ exporter, as dicts and through a prometheus_client collector, checked
against what the clients did."""

import gc
import json
import sys

import pytest

import exactly
from exactly.prometheus import ExactlyCollector, librdkafka_metrics, metrics

try:
    import prometheus_client
except ImportError:  # the dict tests still run
    prometheus_client = None

needs_prometheus_client = pytest.mark.skipif(
    prometheus_client is None,
    reason="prometheus_client is not installed (apt-get install "
           "python3-prometheus-client, or pip install prometheus-client)")


def test_producer_metrics_as_a_dict(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        for i in range(100):
            p.send(topic, value=f"v{i}")
        # The batch path (straight onto librdkafka's queue) counts too.
        assert p.send_batch(topic, [f"b{i}" for i in range(20)]) == 20
        p.flush()
        m = metrics(p)
    assert m["exactly_producer_sent_records_total"] == 120
    assert m["exactly_producer_delivered_records_total"] == 120
    assert m["exactly_producer_failed_records_total"] == 0
    assert m["exactly_producer_queue_records"] == 0
    assert "exactly_transactions_committed_total" not in m


def test_transactional_producer_metrics_as_a_dict(exactly_broker, topic):
    with exactly.TransactionalProducer(exactly_broker.bootstrap_servers,
                                       "metrics-dict") as p:
        for _ in range(2):
            with p.transaction() as txn:
                txn.send(topic, value=b"c")
        with pytest.raises(RuntimeError):
            with p.transaction() as txn:
                raise RuntimeError("aborted")
        m = metrics(p)
    assert m["exactly_transactions_committed_total"] == 2
    assert m['exactly_transactions_aborted_total{cause="error"}'] == 1
    assert m['exactly_transactions_aborted_total{cause="requested"}'] == 0
    assert "exactly_transactions_aborted_total" not in m
    assert m["exactly_producer_delivered_records_total"] == 2
    assert m["exactly_producer_sent_records_total"] == 2
    # The commit latency histogram: one count per commit.
    assert m["exactly_transaction_commit_latency_seconds_count"] == 2
    assert m['exactly_transaction_commit_latency_seconds_bucket{le="+Inf"}'] == 2
    assert m["exactly_transaction_commit_latency_seconds_sum"] > 0
    bounds = exactly.COMMIT_LATENCY_BOUNDS
    assert len([k for k in m if k.startswith(
        "exactly_transaction_commit_latency_seconds_bucket")]) == len(bounds) + 1


def test_the_fenced_flag_follows_a_newer_instance(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    old = exactly.TransactionalProducer(servers, "metrics-fenced")
    with old.transaction() as txn:
        txn.send(topic, value=b"old")
    assert metrics(old)["exactly_transactional_producer_fenced"] == 0
    assert not old.transaction_stats().fenced
    new = exactly.TransactionalProducer(servers, "metrics-fenced")
    with pytest.raises(exactly.KafkaError):
        with old.transaction() as txn:
            txn.send(topic, value=b"zombie")
    assert old.transaction_stats().fenced
    assert metrics(old)["exactly_transactional_producer_fenced"] == 1
    assert metrics(new)["exactly_transactional_producer_fenced"] == 0
    new.close()
    old.close()


def test_transaction_aborts_by_cause(exactly_broker, topic):
    with exactly.TransactionalProducer(exactly_broker.bootstrap_servers,
                                       "metrics-causes") as p:
        # transact: the function's own error (aborted, raised).
        with pytest.raises(ValueError):
            p.transact(lambda txn: (_ for _ in ()).throw(ValueError("no")))
        # transact: an abortable Kafka error, twice, then a commit.
        runs = []

        def fn(txn):
            runs.append(1)
            if len(runs) <= 2:
                raise exactly.KafkaError("abortable", code=-172,
                                         name="_STATE",
                                         txn_requires_abort=True)
            txn.send(topic, value=b"x")

        p.transact(fn)
        assert len(runs) == 3
        # abort() itself.
        p.begin()
        p.abort()
        stats = p.transaction_stats()
        assert stats.aborted == 4
        assert stats.aborted_by_cause == {"requested": 1, "error": 1,
                                          "abortable_error": 2, "close": 0}
        m = metrics(p)
        assert m['exactly_transactions_aborted_total{cause="requested"}'] == 1
        assert m['exactly_transactions_aborted_total{cause="error"}'] == 1
        assert m[
            'exactly_transactions_aborted_total{cause="abortable_error"}'] == 2
        assert m['exactly_transactions_aborted_total{cause="close"}'] == 0
        assert m["exactly_transaction_reruns_total"] == 2
        # close() with a transaction open.
        p.begin()
        p.send(topic, value=b"y")
    stats = p.transaction_stats()
    assert stats.aborted == 5
    assert stats.aborted_by_cause["close"] == 1
    assert sum(stats.aborted_by_cause.values()) == stats.aborted


@needs_prometheus_client
def test_collector_scrapes_transactions_and_producers(exactly_broker, topic):
    registry = prometheus_client.CollectorRegistry()
    collector = ExactlyCollector()
    registry.register(collector)
    servers = exactly_broker.bootstrap_servers
    with exactly.TransactionalProducer(servers, "metrics-txn") as txn_producer, \
            exactly.Producer(servers) as producer:
        collector.register("payments", txn_producer)
        collector.register("orders", producer)
        for _ in range(3):
            with txn_producer.transaction() as txn:
                txn.send(topic, value=b"c")
        with pytest.raises(ValueError):
            with txn_producer.transaction() as txn:
                raise ValueError("aborted")
        for _ in range(10):
            producer.send(topic, value=b"x")
        producer.flush()

        def value(name, client):
            return registry.get_sample_value(name, {"client": client})

        assert value("exactly_transactions_committed_total", "payments") == 3
        assert registry.get_sample_value(
            "exactly_transactions_aborted_total",
            {"client": "payments", "cause": "error"}) == 1
        assert registry.get_sample_value(
            "exactly_transactions_aborted_total",
            {"client": "payments", "cause": "requested"}) == 0
        assert value("exactly_transaction_commit_latency_seconds_count",
                     "payments") == 3
        assert registry.get_sample_value(
            "exactly_transaction_commit_latency_seconds_bucket",
            {"client": "payments", "le": "+Inf"}) == 3
        assert value("exactly_producer_sent_records_total", "orders") == 10
        assert value("exactly_producer_delivered_records_total", "payments") == 3
        assert value("exactly_producer_delivered_records_total", "orders") == 10
        assert value("exactly_transactions_committed_total", "orders") is None
        text = prometheus_client.generate_latest(registry).decode()
        assert "# TYPE exactly_producer_delivered_records_total counter" in text
        assert ("# TYPE exactly_transaction_commit_latency_seconds histogram"
                in text)
        assert 'exactly_producer_queue_records{client="orders"} 0.0' in text
    # Closed clients drop out of the scrapes.
    assert "exactly_" not in prometheus_client.generate_latest(registry).decode()


@needs_prometheus_client
@pytest.mark.skipif(not hasattr(exactly, "SpooledProducer"),
                    reason="this build of exactly has no SpooledProducer")
def test_collector_scrapes_a_drained_spool(exactly_broker, topic, tmp_path):
    registry = prometheus_client.CollectorRegistry()
    collector = ExactlyCollector()
    registry.register(collector)
    with exactly.SpooledProducer(tmp_path / "spool", exactly_broker.bootstrap_servers,
                                 "metrics-spool") as spool:
        collector.register("ingest", spool)
        # One at a time, each send waiting for its own write: 50 group
        # commits of one record; then one send_batch, a group commit of 10.
        for i in range(50):
            spool.send(topic, value=f"v{i}")
        spool.send_batch(topic, [f"b{i}" for i in range(10)])
        spool.flush(timeout=60)

        def value(name):
            return registry.get_sample_value(name, {"client": "ingest"})

        assert value("exactly_spool_depth_records") == 0
        assert value("exactly_spool_bytes") == 0
        assert value("exactly_spool_appended_records_total") == 60
        assert value("exactly_spool_committed_records_total") == 60
        assert value("exactly_spool_transactions_total") >= 1
        assert value("exactly_spool_drainer_up") == 1
        assert value("exactly_spool_group_commits_total") == 51

        def bucket(name, le):
            return registry.get_sample_value(
                name + "_bucket", {"client": "ingest", "le": le})

        size = "exactly_spool_group_commit_size_records"
        assert bucket(size, "1.0") == 50
        assert bucket(size, "8.0") == 50
        assert bucket(size, "16.0") == 51
        assert bucket(size, "+Inf") == 51
        assert value(size + "_count") == 51
        assert value(size + "_sum") == 60
        latency = "exactly_spool_group_commit_latency_seconds"
        assert value(latency + "_count") == 51
        assert bucket(latency, "+Inf") == 51
        assert value(latency + "_sum") > 0
        m = metrics(spool)
        assert m["exactly_spool_committed_records_total"] == 60
        assert m[size + '_bucket{le="1.0"}'] == 50
        assert m[size + "_sum"] == 60
        assert m[latency + "_count"] == 51
        assert sum(spool.metrics().group_commit_latency_counts) == 51


@needs_prometheus_client
def test_registration_names_and_lifetime(exactly_broker):
    collector = ExactlyCollector()
    servers = exactly_broker.bootstrap_servers
    a = exactly.Producer(servers)
    b = exactly.Producer(servers)
    collector.register("a", a)
    with pytest.raises(ValueError, match="already registered"):
        collector.register("a", b)
    with pytest.raises(ValueError, match="name"):
        collector.register("", b)
    with pytest.raises(TypeError, match="not an exactly client"):
        collector.register("c", object())
    collector.register("b", b)

    def clients():
        return {s.labels["client"] for f in collector.collect() for s in f.samples}

    assert clients() == {"a", "b"}
    collector.unregister("b")
    assert clients() == {"a"}
    # Held weakly: a client that is gone is gone from the scrapes, and its
    # name is free again.
    del a
    gc.collect()
    assert clients() == set()
    collector.register("a", b)
    assert clients() == {"a"}
    b.close()
    assert clients() == set()


def test_collector_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    monkeypatch.setitem(sys.modules, "prometheus_client.core", None)
    with pytest.raises(ImportError, match="needs prometheus_client"):
        ExactlyCollector()


def test_processor_batches_rebalances_and_aborts(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send_batch(topic, [(f"k{i}", "v") for i in range(5)] +
                     [("bad", "v")])
    out = topic + "-out"

    def transform(message, emitter):
        if message.key == b"bad":
            raise ValueError("bad record")
        emitter.send(out, key=message.key, value=message.value)

    with exactly.Processor(exactly_broker.bootstrap_servers,
                           group_id="metrics-proc", input_topics=topic,
                           transactional_id="metrics-proc-1",
                           transform=transform, max_batch_records=5,
                           max_batch_time=2.0) as p:
        # The first batch (5 records) commits; in the second, "bad" aborts
        # it (cause "error") and stops the processor.
        with pytest.raises(ValueError):
            while True:
                p.run_once()
        stats = p.stats()
        m = metrics(p)
    assert stats.records_in == 5
    assert stats.transactions_committed == 1
    assert stats.aborted_by_cause == {"error": 1, "abortable_error": 0,
                                      "revoked": 0, "close": 0}
    assert stats.partitions_assigned == 1
    assert stats.partitions_revoked == 0
    assert m['exactly_processor_transactions_aborted_total{cause="error"}'] == 1
    assert m['exactly_processor_transactions_aborted_total'
             '{cause="abortable_error"}'] == 0
    assert m["exactly_processor_partitions_assigned_total"] == 1
    assert m["exactly_processor_batch_size_records_count"] == 1
    assert m["exactly_processor_batch_size_records_sum"] == 5
    assert m['exactly_processor_batch_size_records_bucket{le="5.0"}'] == 1
    assert m['exactly_processor_batch_size_records_bucket{le="2.0"}'] == 0
    assert sum(stats.batch_size_counts) == 1
    # Closing left the group: its partitions were revoked.
    assert p.stats().partitions_revoked == 1


@pytest.mark.parametrize("transactional", [False, True])
def test_librdkafka_statistics_reach_python(exactly_broker, topic,
                                            transactional):
    import json
    reports = []
    servers = exactly_broker.bootstrap_servers
    if transactional:
        p = exactly.TransactionalProducer(servers, f"stats-{topic}",
                                          statistics_interval_ms=100,
                                          on_statistics=reports.append)
    else:
        p = exactly.Producer(servers, statistics_interval_ms=100,
                             on_statistics=reports.append)
    with p:
        if transactional:
            with p.transaction() as txn:
                for i in range(10):
                    txn.send(topic, value=f"v{i}")
        else:
            for i in range(10):
                p.send(topic, value=f"v{i}")
            p.flush()
        # Reports come every 100 ms, passed on by calls into the client:
        # wait for one made after the 10 records went out.
        for _ in range(100):
            p.poll(0.05)
            if reports and json.loads(reports[-1])["txmsgs"] == 10:
                break
    report = json.loads(reports[-1])
    assert report["type"] == "producer"
    assert report["txmsgs"] == 10
    assert all(isinstance(r, str) for r in reports)


def test_librdkafka_statistics_of_a_consumer_reach_python(exactly_broker,
                                                          topic):
    import json
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send_batch(topic, [f"v{i}" for i in range(20)])
    reports = []
    with exactly.Consumer(exactly_broker.bootstrap_servers, "stats-consumer",
                          topics=[topic], auto_offset_reset="earliest",
                          statistics_interval_ms=100,
                          on_statistics=reports.append) as c:
        read = 0
        for _ in range(200):
            if c.poll(0.05) is not None:
                read += 1
            if read == 20 and reports and \
                    json.loads(reports[-1])["rxmsgs"] == 20:
                break
    assert read == 20
    report = json.loads(reports[-1])
    assert report["type"] == "consumer"
    assert report["rxmsgs"] == 20


def _librdkafka_samples(registry, name, client):
    """{labels other than client: value} of one exactly_librdkafka_* family
    in a scrape of `registry`."""
    out = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == name and sample.labels.get("client") == client:
                labels = {k: v for k, v in sample.labels.items()
                          if k != "client"}
                out[tuple(sorted(labels.items()))] = sample.value
    return out


@needs_prometheus_client
def test_collector_summarises_a_producers_librdkafka_statistics(
        exactly_broker, topic):
    registry = prometheus_client.CollectorRegistry()
    collector = ExactlyCollector()
    registry.register(collector)
    values = [f"value-{i}" for i in range(10)]
    forward = collector.statistics_for("orders")
    # Every report, kept before the collector gets it: whatever a scrape
    # shows is already here.
    reports = []

    def on_statistics(report):
        reports.append(report)
        forward(report)

    with exactly.Producer(exactly_broker.bootstrap_servers,
                          statistics_interval_ms=100,
                          on_statistics=on_statistics) as p:
        for v in values:
            p.send(topic, value=v)
        p.flush()

        def value(name):
            return registry.get_sample_value(
                name, {"client": "orders", "type": "producer"})

        # A report made after the records went out (and were acknowledged).
        for _ in range(100):
            p.poll(0.05)
            if value("exactly_librdkafka_tx_messages_total") == 10 and \
                    value("exactly_librdkafka_queue_messages") == 0:
                break
        assert value("exactly_librdkafka_tx_messages_total") == 10
        assert value("exactly_librdkafka_queue_messages") == 0
        assert value("exactly_librdkafka_queue_bytes") == 0
        assert value("exactly_librdkafka_rx_messages_total") == 0
        # With the framing: more than the values alone.
        assert value("exactly_librdkafka_tx_message_bytes_total") >= sum(
            len(v) for v in values)
        assert value("exactly_librdkafka_reply_queue_ops") >= 0
        # Brokers by librdkafka's name ("host:port/nodeid"), not the
        # bootstrap connection; rtt in seconds: a report's rtt.avg
        # (microseconds) exactly, whatever the machine's load made it (a
        # bound on the seconds failed once on 3 loaded Kafka brokers:
        # 1.07 s). One of the last reports: they come on the producer's
        # delivery thread, and another may land between scrape and read.
        rtt = _librdkafka_samples(
            registry, "exactly_librdkafka_broker_rtt_avg_seconds", "orders")
        recent = [json.loads(r)["brokers"] for r in reports[-3:]]
        assert rtt
        for labels, seconds in rtt.items():
            broker = dict(labels)["broker"]
            assert "bootstrap" not in broker
            assert seconds in [r[broker]["rtt"]["avg"] / 1e6 for r in recent
                               if broker in r], (broker, seconds, recent)
        assert any(seconds > 0 for seconds in rtt.values())
        in_flight = _librdkafka_samples(
            registry, "exactly_librdkafka_broker_requests_in_flight", "orders")
        assert set(in_flight) == set(rtt)
        text = prometheus_client.generate_latest(registry).decode()
        assert "# TYPE exactly_librdkafka_tx_messages_total counter" in text
        assert "# TYPE exactly_librdkafka_queue_messages gauge" in text
        assert ('exactly_librdkafka_tx_messages_total{client="orders",'
                'type="producer"} 10.0') in text
    # The last report stays after the client closed, until forgotten.
    assert "exactly_librdkafka_" in \
        prometheus_client.generate_latest(registry).decode()
    collector.forget_statistics("orders")
    assert "exactly_librdkafka_" not in \
        prometheus_client.generate_latest(registry).decode()


@needs_prometheus_client
@pytest.mark.partitions(3)
def test_collector_summarises_a_consumers_lag_and_watermarks(exactly_broker,
                                                             topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        for i in range(30):
            p.send(topic, value=f"v{i}", key=f"k{i}")
        p.flush()
    registry = prometheus_client.CollectorRegistry()
    collector = ExactlyCollector()
    registry.register(collector)
    reports = []
    on_statistics = collector.statistics_for("reader")

    def keep(report):
        reports.append(report)
        on_statistics(report)

    def family(name):
        return {dict(labels)["partition"]: v for labels, v in
                _librdkafka_samples(registry, name, "reader").items()
                if dict(labels)["topic"] == topic}

    with exactly.Consumer(exactly_broker.bootstrap_servers, f"lag-{topic}",
                          topics=[topic], auto_offset_reset="earliest",
                          statistics_interval_ms=100,
                          on_statistics=keep) as c:
        by_partition = {}
        for _ in range(400):
            m = c.poll(0.05)
            if m is not None:
                by_partition[m.partition] = by_partition.get(m.partition,
                                                             0) + 1
            if sum(by_partition.values()) == 30:
                break
        assert sum(by_partition.values()) == 30
        c.commit()
        # A report made after the commit: every partition read has lag 0.
        for _ in range(100):
            c.poll(0.05)
            lag = family("exactly_librdkafka_consumer_lag_messages")
            if set(lag) == {str(p) for p in by_partition} and \
                    all(v == 0 for v in lag.values()):
                break
        high = family("exactly_librdkafka_partition_high_watermark")
        lag = family("exactly_librdkafka_consumer_lag_messages")
    assert registry.get_sample_value(
        "exactly_librdkafka_rx_messages_total",
        {"client": "reader", "type": "consumer"}) >= 30
    # No pseudo-partition -1; the watermarks are the records per partition.
    assert set(high) <= {"0", "1", "2"}
    assert sum(high.values()) == 30
    assert {p: high[p] for p in high if high[p] > 0} == \
        {str(p): n for p, n in by_partition.items()}
    # A partition without a commit has no lag (librdkafka's -1 is skipped).
    assert lag == {str(p): 0.0 for p in by_partition}
    # The dict form of the same report.
    m = librdkafka_metrics(reports[-1])
    assert m['exactly_librdkafka_rx_messages_total{type="consumer"}'] >= 30
    for p, n in by_partition.items():
        assert m['exactly_librdkafka_partition_high_watermark{type="consumer",'
                 f'topic="{topic}",partition="{p}"}}'] == n
        assert m['exactly_librdkafka_consumer_lag_messages{type="consumer",'
                 f'topic="{topic}",partition="{p}"}}'] == 0


def test_librdkafka_metrics_of_a_report():
    import json
    report = {
        "type": "consumer", "msg_cnt": 2, "msg_size": 30, "replyq": 1,
        "txmsgs": 5, "txmsg_bytes": 50, "rxmsgs": 7,
        "brokers": {
            "localhost:9092/1": {"nodeid": 1, "waitresp_cnt": 2,
                                 "rtt": {"avg": 1500, "p99": 3000}},
            "localhost:9092/bootstrap": {"nodeid": -1, "waitresp_cnt": 9},
        },
        "topics": {"in": {"partitions": {
            "0": {"partition": 0, "hi_offset": 7, "consumer_lag": 2},
            "1": {"partition": 1, "hi_offset": 3, "consumer_lag": -1},
            "-1": {"partition": -1, "hi_offset": 9, "consumer_lag": 0},
        }}},
    }
    assert librdkafka_metrics(json.dumps(report)) == {
        'exactly_librdkafka_queue_messages{type="consumer"}': 2,
        'exactly_librdkafka_queue_bytes{type="consumer"}': 30,
        'exactly_librdkafka_reply_queue_ops{type="consumer"}': 1,
        'exactly_librdkafka_tx_messages_total{type="consumer"}': 5,
        'exactly_librdkafka_tx_message_bytes_total{type="consumer"}': 50,
        'exactly_librdkafka_rx_messages_total{type="consumer"}': 7,
        'exactly_librdkafka_broker_rtt_avg_seconds{type="consumer",'
        'broker="localhost:9092/1"}': 0.0015,
        'exactly_librdkafka_broker_rtt_p99_seconds{type="consumer",'
        'broker="localhost:9092/1"}': 0.003,
        'exactly_librdkafka_broker_requests_in_flight{type="consumer",'
        'broker="localhost:9092/1"}': 2,
        'exactly_librdkafka_partition_high_watermark{type="consumer",'
        'topic="in",partition="0"}': 7,
        'exactly_librdkafka_consumer_lag_messages{type="consumer",'
        'topic="in",partition="0"}': 2,
        'exactly_librdkafka_partition_high_watermark{type="consumer",'
        'topic="in",partition="1"}': 3,
    }
    assert librdkafka_metrics("not json") == {}
    assert librdkafka_metrics("[1, 2]") == {}


def test_librdkafka_statistics_of_a_processor_reach_python(exactly_broker,
                                                           topic):
    import json
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send_batch(topic, [f"v{i}" for i in range(20)])
    out = topic + "-out"
    # Both clients report into the one callback; neither replaces the
    # other's report.
    newest = {}

    def keep(report):
        assert isinstance(report, str)
        j = json.loads(report)
        newest[j["type"]] = j

    with exactly.Processor(
            exactly_broker.bootstrap_servers, group_id=f"stats-{topic}",
            input_topics=topic, transactional_id=f"stats-{topic}",
            transform=lambda m, e: e.send(out, value=m.value),
            max_batch_records=20, max_batch_time=0.1,
            consumer_config={"statistics.interval.ms": "100"},
            producer_config={"statistics.interval.ms": "100"},
            on_statistics=keep) as proc:
        for _ in range(100):
            proc.run_once()
            if "consumer" in newest and "producer" in newest and \
                    newest["consumer"]["rxmsgs"] == 20 and \
                    newest["producer"]["txmsgs"] == 20:
                break
        assert proc.stats().records_out == 20
    assert newest["consumer"]["rxmsgs"] == 20
    assert newest["producer"]["txmsgs"] == 20


@pytest.mark.skipif(not hasattr(exactly, "SpooledProducer"),
                    reason="this build of exactly has no SpooledProducer")
def test_librdkafka_statistics_of_a_spool_reach_python(exactly_broker, topic,
                                                       tmp_path):
    import json
    newest = {}

    def keep(report):
        assert isinstance(report, str)
        j = json.loads(report)
        newest[j["type"]] = j

    def sent_to_topic():
        # The drainer's producer also writes the spool's checkpoints: count
        # the records of `topic` alone.
        partitions = newest.get("producer", {}).get("topics", {}).get(
            topic, {}).get("partitions", {})
        return sum(p["txmsgs"] for p in partitions.values()
                   if p["partition"] >= 0)

    with exactly.SpooledProducer(tmp_path / "spool",
                                 exactly_broker.bootstrap_servers,
                                 f"stats-{topic}", statistics_interval_ms=100,
                                 on_statistics=keep) as spool:
        for i in range(10):
            spool.send(topic, value=f"v{i}")
        spool.flush(timeout=60)
        for _ in range(100):
            spool.poll(0.05)
            if sent_to_topic() == 10:
                break
    assert sent_to_topic() == 10
    assert newest["producer"]["txmsgs"] >= 10
