"""Schemas of the APIs every conformance scenario needs, and those the Kafka harness
(tests/kafka/kafka_cluster.py) and the side-by-side tests of tests/kafka and tests/pypi send
(wire.py explains the notation), written from Kafka's message definitions at the versions they
use. The conformance scenario families keep their own APIs in tests/conformance/apis_<family>.py."""
from wire import Api

API_VERSIONS = Api(18, "ApiVersions", 3, request=[
    ("client_software_name", "string", "3+"),
    ("client_software_version", "string", "3+"),
], response=[
    ("error_code", "int16", "0+"),
    ("api_keys", [("api_key", "int16", "0+"), ("min_version", "int16", "0+"),
                  ("max_version", "int16", "0+")], "0+"),
    ("throttle_time_ms", "int32", "1+"),
])

METADATA = Api(3, "Metadata", 9, request=[
    ("topics", [("topic_id", "uuid", "10+"), ("name", "string", "0+")], "0+"),
    ("allow_auto_topic_creation", "bool", "4+"),
    ("include_cluster_authorized_operations", "bool", "8-10"),
    ("include_topic_authorized_operations", "bool", "8+"),
], response=[
    ("throttle_time_ms", "int32", "3+"),
    ("brokers", [("node_id", "int32", "0+"), ("host", "string", "0+"), ("port", "int32", "0+"),
                 ("rack", "string", "1+")], "0+"),
    ("cluster_id", "string", "2+"),
    ("controller_id", "int32", "1+"),
    ("topics", [
        ("error_code", "int16", "0+"),
        ("name", "string", "0+"),
        ("topic_id", "uuid", "10+"),
        ("is_internal", "bool", "1+"),
        ("partitions", [
            ("error_code", "int16", "0+"),
            ("partition_index", "int32", "0+"),
            ("leader_id", "int32", "0+"),
            ("leader_epoch", "int32", "7+"),
            ("replica_nodes", ["int32"], "0+"),
            ("isr_nodes", ["int32"], "0+"),
            ("offline_replicas", ["int32"], "5+"),
        ], "0+"),
        ("topic_authorized_operations", "int32", "8+"),
    ], "0+"),
    ("cluster_authorized_operations", "int32", "8-10"),
])

CREATE_TOPICS = Api(19, "CreateTopics", 5, request=[
    ("topics", [
        ("name", "string", "0+"),
        ("num_partitions", "int32", "0+"),
        ("replication_factor", "int16", "0+"),
        ("assignments", [("partition_index", "int32", "0+"), ("broker_ids", ["int32"], "0+")],
         "0+"),
        ("configs", [("name", "string", "0+"), ("value", "string", "0+")], "0+"),
    ], "0+"),
    ("timeout_ms", "int32", "0+"),
    ("validate_only", "bool", "1+"),
], response=[
    ("throttle_time_ms", "int32", "2+"),
    ("topics", [
        ("name", "string", "0+"),
        ("topic_id", "uuid", "7+"),
        ("error_code", "int16", "0+"),
        ("error_message", "string", "1+"),
        ("num_partitions", "int32", "5+"),
        ("replication_factor", "int16", "5+"),
        ("configs", [("name", "string", "5+"), ("value", "string", "5+"),
                     ("read_only", "bool", "5+"), ("config_source", "int8", "5+"),
                     ("is_sensitive", "bool", "5+")], "5+"),
    ], "0+"),
])

PRODUCE = Api(0, "Produce", 9, request=[
    ("transactional_id", "string", "3+"),
    ("acks", "int16", "0+"),
    ("timeout_ms", "int32", "0+"),
    ("topic_data", [
        ("name", "string", "0+"),
        ("partition_data", [("index", "int32", "0+"), ("records", "records", "0+")], "0+"),
    ], "0+"),
], response=[
    ("responses", [
        ("name", "string", "0+"),
        ("partition_responses", [
            ("index", "int32", "0+"),
            ("error_code", "int16", "0+"),
            ("base_offset", "int64", "0+"),
            ("log_append_time_ms", "int64", "2+"),
            ("log_start_offset", "int64", "5+"),
            ("record_errors", [("batch_index", "int32", "8+"),
                               ("batch_index_error_message", "string", "8+")], "8+"),
            ("error_message", "string", "8+"),
        ], "0+"),
    ], "0+"),
    ("throttle_time_ms", "int32", "1+"),
])

FETCH = Api(1, "Fetch", 12, request=[
    ("replica_id", "int32", "0-14"),
    ("max_wait_ms", "int32", "0+"),
    ("min_bytes", "int32", "0+"),
    ("max_bytes", "int32", "3+"),
    ("isolation_level", "int8", "4+"),
    ("session_id", "int32", "7+"),
    ("session_epoch", "int32", "7+"),
    ("topics", [
        ("topic", "string", "0-12"),
        ("topic_id", "uuid", "13+"),
        ("partitions", [
            ("partition", "int32", "0+"),
            ("current_leader_epoch", "int32", "9+"),
            ("fetch_offset", "int64", "0+"),
            ("last_fetched_epoch", "int32", "12+"),
            ("log_start_offset", "int64", "5+"),
            ("partition_max_bytes", "int32", "0+"),
        ], "0+"),
    ], "0+"),
    ("forgotten_topics_data", [("topic", "string", "7-12"), ("topic_id", "uuid", "13+"),
                               ("partitions", ["int32"], "7+")], "7+"),
    ("rack_id", "string", "11+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("error_code", "int16", "7+"),
    ("session_id", "int32", "7+"),
    ("responses", [
        ("topic", "string", "0-12"),
        ("topic_id", "uuid", "13+"),
        ("partitions", [
            ("partition_index", "int32", "0+"),
            ("error_code", "int16", "0+"),
            ("high_watermark", "int64", "0+"),
            ("last_stable_offset", "int64", "4+"),
            ("log_start_offset", "int64", "5+"),
            ("aborted_transactions", [("producer_id", "int64", "4+"),
                                      ("first_offset", "int64", "4+")], "4+"),
            ("preferred_read_replica", "int32", "11+"),
            ("records", "records", "0+"),
        ], "0+"),
    ], "0+"),
])

LIST_OFFSETS = Api(2, "ListOffsets", 6, request=[
    ("replica_id", "int32", "0+"),
    ("isolation_level", "int8", "2+"),
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [
            ("partition_index", "int32", "0+"),
            ("current_leader_epoch", "int32", "4+"),
            ("timestamp", "int64", "0+"),
            ("max_num_offsets", "int32", "0"),
        ], "0+"),
    ], "0+"),
], response=[
    ("throttle_time_ms", "int32", "2+"),
    ("topics", [
        ("name", "string", "0+"),
        ("partitions", [
            ("partition_index", "int32", "0+"),
            ("error_code", "int16", "0+"),
            ("old_style_offsets", ["int64"], "0"),
            ("timestamp", "int64", "1+"),
            ("offset", "int64", "1+"),
            ("leader_epoch", "int32", "4+"),
        ], "0+"),
    ], "0+"),
])

FIND_COORDINATOR = Api(10, "FindCoordinator", 3, request=[
    ("key", "string", "0-3"),
    ("key_type", "int8", "1+"),
    ("coordinator_keys", ["string"], "4+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("error_code", "int16", "0-3"),
    ("error_message", "string", "1-3"),
    ("node_id", "int32", "0-3"),
    ("host", "string", "0-3"),
    ("port", "int32", "0-3"),
    ("coordinators", [("key", "string", "4+"), ("node_id", "int32", "4+"),
                      ("host", "string", "4+"), ("port", "int32", "4+"),
                      ("error_code", "int16", "4+"), ("error_message", "string", "4+")], "4+"),
])

INIT_PRODUCER_ID = Api(22, "InitProducerId", 2, request=[
    ("transactional_id", "string", "0+"),
    ("transaction_timeout_ms", "int32", "0+"),
    ("producer_id", "int64", "3+"),
    ("producer_epoch", "int16", "3+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("error_code", "int16", "0+"),
    ("producer_id", "int64", "0+"),
    ("producer_epoch", "int16", "0+"),
])

LIST_GROUPS = Api(16, "ListGroups", 3, request=[
    ("states_filter", ["string"], "4+"),
    ("types_filter", ["string"], "5+"),
], response=[
    ("throttle_time_ms", "int32", "1+"),
    ("error_code", "int16", "0+"),
    ("groups", [("group_id", "string", "0+"), ("protocol_type", "string", "0+"),
                ("group_state", "string", "4+"), ("group_type", "string", "5+")], "0+"),
])
