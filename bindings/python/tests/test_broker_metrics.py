"""The bundled broker's Prometheus endpoint from Python: Broker(metrics_port=0)
serves text that a scrape over HTTP reads, with the values real traffic
left behind (the C++ side is tested in broker_metrics_test.cc)."""

import urllib.request

import pytest

import exactly
from exactly.testing import Broker


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def sample(text, name, *labels):
    """The value of the first sample of `name` whose labels hold each of
    `labels` (each 'key="value"'), or None."""
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        label_set, _, value = line.partition("} ")
        if all(label in label_set for label in labels):
            return float(value)
    return None


def start_with_metrics(**options):
    broker = Broker(metrics_port=0, **options)
    try:
        broker.start()
    except exactly.Error as e:
        if "built without prometheus-cpp" in str(e):
            pytest.skip("this build has no prometheus-cpp: " + str(e))
        raise
    return broker


def test_without_metrics_port_there_is_no_url():
    with Broker() as broker:
        assert broker.metrics_url is None


def test_a_scrape_shows_the_records_and_transactions_sent():
    broker = start_with_metrics(topics={"metered": 1})
    try:
        url = broker.metrics_url
        assert url is not None and url.endswith("/metrics")
        p = exactly.TransactionalProducer(broker.bootstrap_servers, "metered")
        with p.transaction() as txn:
            for i in range(7):
                txn.send("metered", value=f"v{i}", partition=0)
        p.close()
        text = scrape(url)
        # 7 records and the commit marker.
        assert sample(text, "exactly_broker_partition_high_watermark",
                      'topic="metered"', 'partition="0"') == 8
        assert sample(text, "exactly_broker_partition_last_stable_offset",
                      'topic="metered"') == 8
        assert sample(text, "exactly_broker_transactions_total",
                      'outcome="commit"') == 1
        assert sample(text, "exactly_broker_requests_total",
                      'api="EndTxn"') >= 1
        assert sample(text, "exactly_broker_up", 'broker="1"') == 1
    finally:
        broker.stop()


def test_a_cluster_serves_one_endpoint_labelled_by_broker():
    broker = start_with_metrics(brokers=3)
    try:
        broker.create_topic("replicated", 1)
        text = scrape(broker.metrics_url)
        for node in (1, 2, 3):
            assert sample(text, "exactly_broker_up", f'broker="{node}"') == 1
        leaders = [sample(text, "exactly_broker_partition_leader",
                          f'broker="{node}"', 'topic="replicated"')
                   for node in (1, 2, 3)]
        assert sorted(leaders) == [0, 0, 1]
    finally:
        broker.stop()
