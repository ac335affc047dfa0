"""Admin requests that the Python clients on Debian 12 cannot send, built with kafka-python's
protocol primitives (an encoder we did not write) and sent with its KafkaClient.

confluent-kafka-python 1.7.0 has no delete_records, and neither it nor kafka-python 2.0.2 has
incremental_alter_configs.
"""
from kafka.client_async import KafkaClient
from kafka.structs import TopicPartition
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Array, Boolean, Int8, Int16, Int32, Int64, Schema, String


class DeleteRecordsResponse_v0(Response):
    API_KEY = 21
    API_VERSION = 0
    SCHEMA = Schema(
        ('throttle_time_ms', Int32),
        ('topics', Array(
            ('name', String('utf-8')),
            ('partitions', Array(
                ('partition_index', Int32),
                ('low_watermark', Int64),
                ('error_code', Int16))))))


class DeleteRecordsRequest_v0(Request):
    API_KEY = 21
    API_VERSION = 0
    RESPONSE_TYPE = DeleteRecordsResponse_v0
    SCHEMA = Schema(
        ('topics', Array(
            ('name', String('utf-8')),
            ('partitions', Array(
                ('partition_index', Int32),
                ('offset', Int64))))),
        ('timeout_ms', Int32))


class IncrementalAlterConfigsResponse_v0(Response):
    API_KEY = 44
    API_VERSION = 0
    SCHEMA = Schema(
        ('throttle_time_ms', Int32),
        ('responses', Array(
            ('error_code', Int16),
            ('error_message', String('utf-8')),
            ('resource_type', Int8),
            ('resource_name', String('utf-8')))))


class IncrementalAlterConfigsRequest_v0(Request):
    API_KEY = 44
    API_VERSION = 0
    RESPONSE_TYPE = IncrementalAlterConfigsResponse_v0
    SCHEMA = Schema(
        ('resources', Array(
            ('resource_type', Int8),
            ('resource_name', String('utf-8')),
            ('configs', Array(
                ('name', String('utf-8')),
                ('config_operation', Int8),
                ('value', String('utf-8')))))),
        ('validate_only', Boolean))


SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
TOPIC = 2


def _ready(client, node):
    for _ in range(200):
        if client.ready(node):
            return
        client.poll(timeout_ms=50)
    raise AssertionError(f"no connection to broker {node}")


def _call(client, node, request):
    _ready(client, node)
    future = client.send(node, request)
    client.poll(future=future, timeout_ms=30000)
    assert future.succeeded(), future.exception
    return future.value


def _client(bootstrap_servers):
    return KafkaClient(bootstrap_servers=bootstrap_servers, client_id='exactly-interop-raw')


def send(bootstrap_servers, request):
    """Sends `request` to any one broker (one that can answer it for the whole cluster) and
    returns its decoded response."""
    client = _client(bootstrap_servers)
    try:
        node = None
        for _ in range(200):
            node = client.least_loaded_node()
            if node is not None and client.ready(node):
                break
            client.poll(timeout_ms=50)
        assert node is not None and client.ready(node), "no connection to the broker"
        return _call(client, node, request)
    finally:
        client.close()


def _leaders(client, topic, partitions):
    """{partition: leader node id, or None when the metadata names no leader}, from the
    client's own metadata request, as an admin client learns them."""
    future = client.set_topics([topic])
    client.poll(future=future, timeout_ms=30000)
    assert future.succeeded(), future.exception
    leaders = {}
    for p in partitions:
        leader = client.cluster.leader_for_partition(TopicPartition(topic, p))
        leaders[p] = leader if leader is not None and leader >= 0 else None
    return leaders


def delete_records(bootstrap_servers, topic, offsets):
    """DeleteRecords v0: {partition: offset} -> {partition: (error_code, low_watermark)}.

    Like Kafka's admin client, one request per partition leader. A partition the metadata
    gives no leader (one that does not exist) is asked of any broker, whose answer is the
    error."""
    client = _client(bootstrap_servers)
    try:
        by_node = {}
        for p, leader in _leaders(client, topic, offsets).items():
            by_node.setdefault(leader, {})[p] = offsets[p]
        if None in by_node:
            node = client.least_loaded_node()
            assert node is not None, "no broker to ask"
            by_node.setdefault(node, {}).update(by_node.pop(None))
        out = {}
        for node, parts in by_node.items():
            response = _call(client, node, DeleteRecordsRequest_v0(
                topics=[(topic, list(parts.items()))], timeout_ms=30000))
            out.update({p: (err, low) for _, ps in response.topics for p, low, err in ps})
        return out
    finally:
        client.close()


def incremental_alter_configs(bootstrap_servers, topic, changes, validate_only=False):
    """IncrementalAlterConfigs v0 of one topic: changes are (name, op, value); -> error code."""
    response = send(bootstrap_servers, IncrementalAlterConfigsRequest_v0(
        resources=[(TOPIC, topic, list(changes))], validate_only=validate_only))
    assert len(response.responses) == 1
    return response.responses[0][0]
