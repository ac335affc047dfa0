"""The two brokers every conformance scenario runs on: the bundled broker's binary (a fresh one
per test module, in memory) and the 1-broker Apache Kafka cluster of the kafka1 label
(EXACTLY_KAFKA_CLUSTER); without that cluster `kafka_broker` is None and the comparisons skip."""
import os
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "wire"))  # the codec and the shared schemas
sys.path.insert(0, str(HERE.parent / "kafka"))
import kafka_cluster  # noqa: E402
from side_by_side import Broker  # noqa: E402


@pytest.fixture(scope="module")
def bundled_broker():
    with kafka_cluster.bundled_broker() as bootstrap:
        yield Broker("bundled", bootstrap)


@pytest.fixture(scope="session")
def kafka_broker():
    directory = os.environ.get("EXACTLY_KAFKA_CLUSTER")
    if not directory:
        return None
    cluster = kafka_cluster.KafkaCluster.attach(directory)
    assert len(cluster.node_ids) == 1, "the scenarios compare with a 1-broker Kafka (kafka1)"
    return Broker("kafka", cluster.bootstrap_servers)
