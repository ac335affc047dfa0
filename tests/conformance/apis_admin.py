"""Schemas of the admin APIs the metadata/admin/data-plane-error scenarios use (wire.py explains
the notation), written from Kafka's message definitions at the versions those scenarios send."""
from wire import Api

DELETE_TOPICS = Api(20, "DeleteTopics", 4, request=[
    ("topic_names", ["string"], "0-5"),
    ("timeout_ms", "int32", "0+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("responses", [("name", "string", "0+"), ("error_code", "int16", "0+"),
                   ("error_message", "string", "5+")], "0+"),
])

DELETE_RECORDS = Api(21, "DeleteRecords", 2, request=[
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [("partition_index", "int32", "0+"), ("offset", "int64", "0+")], "0+"),
    ], "0+"),
    ("timeout_ms", "int32", "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [("partition_index", "int32", "0+"), ("low_watermark", "int64", "0+"),
                        ("error_code", "int16", "0+")], "0+"),
    ], "0+"),
])

CREATE_PARTITIONS = Api(37, "CreatePartitions", 2, request=[
    ("topics", [
        ("name", "string", "0+"),
        ("count", "int32", "0+"),
        ("assignments", [("broker_ids", ["int32"], "0+")], "0+"),
    ], "0+"),
    ("timeout_ms", "int32", "0+"),
    ("validate_only", "bool", "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("results", [("name", "string", "0+"), ("error_code", "int16", "0+"),
                 ("error_message", "string", "0+")], "0+"),
])

# Resource types (Kafka's ConfigResource.Type) and config sources (DescribeConfigsResponse).
TOPIC, BROKER = 2, 4
SOURCES = {-1: "UNKNOWN", 0: "UNKNOWN", 1: "DYNAMIC_TOPIC_CONFIG",
           2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
           4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
           7: "CLIENT_METRICS_CONFIG", 8: "GROUP_CONFIG"}

DESCRIBE_CONFIGS = Api(32, "DescribeConfigs", 4, request=[
    ("resources", [
        ("resource_type", "int8", "0+"),
        ("resource_name", "string", "0+"),
        ("configuration_keys", ["string"], "0+"),
    ], "0+"),
    ("include_synonyms", "bool", "1+"),
    ("include_documentation", "bool", "3+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("results", [
        ("error_code", "int16", "0+"),
        ("error_message", "string", "0+"),
        ("resource_type", "int8", "0+"),
        ("resource_name", "string", "0+"),
        ("configs", [
            ("name", "string", "0+"),
            ("value", "string", "0+"),
            ("read_only", "bool", "0+"),
            ("is_default", "bool", "0"),
            ("config_source", "int8", "1+"),
            ("is_sensitive", "bool", "0+"),
            ("synonyms", [("name", "string", "1+"), ("value", "string", "1+"),
                          ("source", "int8", "1+")], "1+"),
            ("config_type", "int8", "3+"),
            ("documentation", "string", "3+"),
        ], "0+"),
    ], "0+"),
])

ALTER_CONFIGS = Api(33, "AlterConfigs", 2, request=[
    ("resources", [
        ("resource_type", "int8", "0+"),
        ("resource_name", "string", "0+"),
        ("configs", [("name", "string", "0+"), ("value", "string", "0+")], "0+"),
    ], "0+"),
    ("validate_only", "bool", "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("responses", [("error_code", "int16", "0+"), ("error_message", "string", "0+"),
                   ("resource_type", "int8", "0+"), ("resource_name", "string", "0+")], "0+"),
])

# IncrementalAlterConfigs operations.
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

INCREMENTAL_ALTER_CONFIGS = Api(44, "IncrementalAlterConfigs", 1, request=[
    ("resources", [
        ("resource_type", "int8", "0+"),
        ("resource_name", "string", "0+"),
        ("configs", [("name", "string", "0+"), ("config_operation", "int8", "0+"),
                     ("value", "string", "0+")], "0+"),
    ], "0+"),
    ("validate_only", "bool", "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("responses", [("error_code", "int16", "0+"), ("error_message", "string", "0+"),
                   ("resource_type", "int8", "0+"), ("resource_name", "string", "0+")], "0+"),
])
