"""Error mapping: SDK statuses become exactly.* exceptions that carry the
Kafka error name, code and the retriable / txn_requires_abort / fatal
flags."""

import pickle

import pytest

import exactly
from exactly import errors


def test_unsafe_config_is_refused_with_the_property_named():
    with pytest.raises(exactly.ConfigError, match="acks") as caught:
        exactly.Producer("127.0.0.1:9", acks=0)
    assert isinstance(caught.value, ValueError)  # also a ValueError
    assert caught.value.status == "INVALID_ARGUMENT"
    with pytest.raises(exactly.ConfigError, match="enable.idempotence"):
        exactly.Producer("127.0.0.1:9", enable_idempotence=False)
    with pytest.raises(exactly.ConfigError, match="isolation.level"):
        exactly.Consumer("127.0.0.1:9", "g",
                         config={"isolation.level": "read_uncommitted"})
    with pytest.raises(exactly.ConfigError, match="enable.auto.commit"):
        exactly.Consumer("127.0.0.1:9", "g", enable_auto_commit=True)
    # mode="unchecked" lets a knowing caller through.
    exactly.Producer("127.0.0.1:9", acks=1, enable_idempotence=False,
                     mode="unchecked").close(0)


def test_missing_and_unknown_settings():
    with pytest.raises(exactly.ConfigError, match="transactional.id"):
        exactly.TransactionalProducer("127.0.0.1:9")
    with pytest.raises(exactly.ConfigError, match="group.id"):
        exactly.Consumer("127.0.0.1:9")
    with pytest.raises(exactly.ConfigError, match="no.such.property"):
        exactly.Producer("127.0.0.1:9", no_such_property=1)
    with pytest.raises(exactly.ConfigError, match="use TransactionalProducer"):
        exactly.Producer("127.0.0.1:9", transactional_id="x")
    with pytest.raises(exactly.ConfigError, match="queue_full"):
        exactly.Producer("127.0.0.1:9", queue_full="drop")


def test_delivery_failure_carries_the_kafka_error(exactly_broker, topic):
    exactly_broker.faults.fail_requests(exactly.testing.ApiKey.PRODUCE,
                                        "MESSAGE_TOO_LARGE", topic=topic)
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        error = p.send_future(topic, b"x").exception(timeout=60)
    assert isinstance(error, exactly.KafkaError)
    assert error.name == "MSG_SIZE_TOO_LARGE" and error.code == 10
    assert not error.retriable and not error.fatal
    assert not error.txn_requires_abort
    assert "Message size too large" in str(error)


def test_failures_without_a_callback_are_raised_by_flush(exactly_broker,
                                                         topic):
    exactly_broker.faults.fail_requests("produce", 10, count=2, topic=topic)
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send(topic, b"a")
        p.send(topic, b"b")
        with pytest.raises(exactly.KafkaError,
                           match="without a delivery callback") as caught:
            p.flush()
        assert caught.value.name == "MSG_SIZE_TOO_LARGE"
        p.flush()  # reported once


def test_queue_full_is_retriable(exactly_broker, topic):
    exactly_broker.faults.broker_down(5.0)
    p = exactly.Producer(exactly_broker.bootstrap_servers, queue_full="fail",
                         queue_buffering_max_messages=1)
    p.send(topic, b"fills the queue")
    with pytest.raises(exactly.KafkaError) as caught:
        p.send(topic, b"no room")
    error = caught.value
    assert error.name == "_QUEUE_FULL" and error.code == -184
    assert error.retriable and not error.fatal
    assert error.status == "RESOURCE_EXHAUSTED"
    exactly_broker.faults.clear()
    # Closing without waiting fails what is still queued, and says so.
    with pytest.raises(exactly.KafkaError, match="not yet reported"):
        p.close(0)


def test_closed_producer_raises_state_error(exactly_broker, topic):
    p = exactly.Producer(exactly_broker.bootstrap_servers)
    p.close()
    with pytest.raises(exactly.StateError):
        p.send(topic, b"x")
    with pytest.raises(RuntimeError):  # StateError is a RuntimeError
        p.flush()


def test_mapping_of_statuses():
    kafka = errors._from_status(
        "ABORTED", "commit_transaction: boom",
        (48, "INVALID_TXN_STATE", False, False, True, False))
    assert type(kafka) is exactly.KafkaError
    assert (kafka.code, kafka.name, kafka.fatal) == (48, "INVALID_TXN_STATE",
                                                     True)
    assert kafka.status == "ABORTED" and str(kafka) == \
        "commit_transaction: boom"
    assert "fatal" in repr(kafka)
    assert type(errors._from_status("INVALID_ARGUMENT", "m", None)) is \
        exactly.ConfigError
    assert type(errors._from_status("FAILED_PRECONDITION", "m", None)) is \
        exactly.StateError
    timeout = errors._from_status("DEADLINE_EXCEEDED", "m", None)
    assert isinstance(timeout, TimeoutError)  # the built-in one too
    assert type(errors._from_status("INTERNAL", "m", None)) is exactly.Error
    # Exceptions survive pickling (multiprocessing, pytest-xdist).
    again = pickle.loads(pickle.dumps(kafka))
    assert (again.name, again.fatal, again.message) == \
        (kafka.name, kafka.fatal, kafka.message)
    assert issubclass(exactly.KafkaError, exactly.Error)
