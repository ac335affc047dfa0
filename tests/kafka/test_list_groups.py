"""ListGroups on Apache Kafka and on the bundled broker side by side: a classic consumer group,
listed at v4 and at v5 (KIP-848's group type, what kafka-python 3.x sends) with and without
state and type filters, gets the same answer from both brokers' coordinators.

CTest runs it in the kafka labels (EXACTLY_KAFKA_CLUSTER names the running Kafka cluster,
EXACTLY_BROKER_BIN the bundled broker's binary); without a Kafka cluster the Kafka half skips and
says so. /usr/bin/python3 (Debian's confluent-kafka joins the group; the requests are encoded
by tests/wire, the codec the conformance scenarios use).
"""
import pathlib
import sys
import time
import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402  (puts tests/wire on the path)
import wire  # noqa: E402
from apis import LIST_GROUPS  # noqa: E402


def list_groups(host, port, version, states=None, types=None):
    """ListGroups at `version`: (error, {group id: (protocol type, state, type)})."""
    answer = wire.call_once(host, port, LIST_GROUPS, version,
                            client_id="exactly-side-by-side-test", timeout=10,
                            states_filter=states or [], types_filter=types or [])
    return answer["error_code"], {
        g["group_id"]: (g["protocol_type"], g.get("group_state"), g.get("group_type"))
        for g in answer["groups"]}


def answers(bootstrap):
    """A classic group joined on the broker at `bootstrap`, listed every way this test asks."""
    topic = f"listed-{uuid.uuid4().hex[:8]}"
    group = f"listed-group-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 1, -1)]).values():
        f.result()
    kafka_cluster.wait_served(bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "session.timeout.ms": 10000})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while not consumer.assignment():
            assert time.monotonic() < deadline, "the group never assigned the partition"
            consumer.poll(0.2)
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        error, node = kafka_cluster.find_coordinator(host, int(port), group, 0)
        assert error == 0
        host, port = kafka_cluster.metadata(host, int(port))["brokers"][node]
        out = {}
        for name, version, states, types in [
                ("v3", 3, None, None),
                ("v4", 4, None, None),
                ("v4 Stable", 4, ["Stable"], None),
                ("v4 Empty", 4, ["Empty"], None),
                ("v5", 5, None, None),
                ("v5 classic", 5, None, ["classic"]),
                ("v5 Classic", 5, None, ["Classic"]),
                ("v5 consumer", 5, None, ["consumer"]),
                ("v5 Stable classic", 5, ["Stable"], ["classic"])]:
            error, groups = list_groups(host, port, version, states, types)
            out[name] = (error, groups.get(group))
        return out
    finally:
        consumer.close()


EXPECTED = {
    "v3": (0, ("consumer", None, None)),
    "v4": (0, ("consumer", "Stable", None)),
    "v4 Stable": (0, ("consumer", "Stable", None)),
    "v4 Empty": (0, None),
    "v5": (0, ("consumer", "Stable", "classic")),
    "v5 classic": (0, ("consumer", "Stable", "classic")),
    "v5 Classic": (0, ("consumer", "Stable", "classic")),
    "v5 consumer": (0, None),
    "v5 Stable classic": (0, ("consumer", "Stable", "classic")),
}


@pytest.mark.parametrize("which", ["bundled", "kafka"])
def test_list_groups_answers(which, request):
    assert answers(request.getfixturevalue(which)) == EXPECTED
