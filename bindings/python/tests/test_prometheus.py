"""The SDK's metrics from Python (exactly.prometheus): the same names as the
C++ exporter, as dicts and through a prometheus_client collector, checked
against what the clients did."""

import gc
import sys

import pytest

import exactly
from exactly.prometheus import ExactlyCollector, metrics

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
        p.flush()
        m = metrics(p)
    assert m["exactly_producer_delivered_records_total"] == 100
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
    assert m["exactly_transactions_aborted_total"] == 1
    assert m["exactly_producer_delivered_records_total"] == 2


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
        assert value("exactly_transactions_aborted_total", "payments") == 1
        assert value("exactly_producer_delivered_records_total", "payments") == 3
        assert value("exactly_producer_delivered_records_total", "orders") == 10
        assert value("exactly_transactions_committed_total", "orders") is None
        text = prometheus_client.generate_latest(registry).decode()
        assert "# TYPE exactly_producer_delivered_records_total counter" in text
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
        for i in range(50):
            spool.send(topic, value=f"v{i}")
        spool.flush(timeout=60)

        def value(name):
            return registry.get_sample_value(name, {"client": "ingest"})

        assert value("exactly_spool_depth_records") == 0
        assert value("exactly_spool_bytes") == 0
        assert value("exactly_spool_appended_records_total") == 50
        assert value("exactly_spool_committed_records_total") == 50
        assert value("exactly_spool_transactions_total") >= 1
        assert value("exactly_spool_drainer_up") == 1
        assert metrics(spool)["exactly_spool_committed_records_total"] == 50


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
