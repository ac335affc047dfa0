"""Admin requests that the Python clients on Debian 12 cannot send, built with kafka-python's
protocol primitives (an encoder we did not write) and sent with its KafkaClient.

confluent-kafka-python 1.7.0 has no delete_records, and neither it nor kafka-python 2.0.2 has
incremental_alter_configs.
"""
from kafka.client_async import KafkaClient
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


def send(bootstrap_servers, request):
    """Sends `request` to the (only) broker and returns its decoded response."""
    client = KafkaClient(bootstrap_servers=bootstrap_servers, client_id='exactly-interop-raw')
    try:
        node = None
        for _ in range(200):
            node = client.least_loaded_node()
            if node is not None and client.ready(node):
                break
            client.poll(timeout_ms=50)
        assert node is not None and client.ready(node), "no connection to the broker"
        future = client.send(node, request)
        client.poll(future=future, timeout_ms=30000)
        assert future.succeeded(), future.exception
        return future.value
    finally:
        client.close()


def delete_records(bootstrap_servers, topic, offsets):
    """DeleteRecords v0: {partition: offset} -> {partition: (error_code, low_watermark)}."""
    response = send(bootstrap_servers, DeleteRecordsRequest_v0(
        topics=[(topic, list(offsets.items()))], timeout_ms=30000))
    return {p: (err, low) for _, parts in response.topics for p, low, err in parts}


def incremental_alter_configs(bootstrap_servers, topic, changes, validate_only=False):
    """IncrementalAlterConfigs v0 of one topic: changes are (name, op, value); -> error code."""
    response = send(bootstrap_servers, IncrementalAlterConfigsRequest_v0(
        resources=[(TOPIC, topic, list(changes))], validate_only=validate_only))
    assert len(response.responses) == 1
    return response.responses[0][0]
