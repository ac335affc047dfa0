"""The two brokers the side-by-side tests compare (test_compaction.py, test_list_groups.py,
test_list_offsets.py, test_min_insync_replicas.py): the bundled broker's binary, and the Apache
Kafka cluster the kafka labels run (EXACTLY_KAFKA_CLUSTER). Each fixture gives the broker's
bootstrap.servers; without a Kafka cluster the Kafka half skips and says so."""
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402


@pytest.fixture(scope="module")
def bundled():
    with kafka_cluster.bundled_broker() as bootstrap:
        yield bootstrap


@pytest.fixture(scope="module")
def kafka():
    directory = os.environ.get("EXACTLY_KAFKA_CLUSTER")
    if not directory:
        pytest.skip("needs an Apache Kafka cluster (EXACTLY_KAFKA_CLUSTER, set by the kafka labels)")
    return kafka_cluster.KafkaCluster.attach(directory).bootstrap_servers
