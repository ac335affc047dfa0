"""exactly.testing.Broker's SCRAM credentials: set_scram_credential gives a
user a password confluent-kafka then authenticates with over SASL
(SCRAM-SHA-256 and -512), a changed password replaces the old one, a deleted
credential no longer authenticates, scram_credentials lists them, a cluster's
brokers all check them, and bad arguments fail clearly."""

import time

import pytest

from exactly.errors import Error
from exactly.testing import Broker

confluent_kafka = pytest.importorskip("confluent_kafka")


def authenticates(servers: str, mechanism: str, user: str,
                  password: str) -> bool:
    """Whether a confluent-kafka client logs in: True once its metadata is
    answered, False once it reports the login refused (_AUTHENTICATION).
    Waiting for the refusal rather than a timeout keeps a refused login from
    costing seconds and from being mistaken for a slow broker."""
    refused = []

    def on_error(error):
        if error.code() == confluent_kafka.KafkaError._AUTHENTICATION:
            refused.append(error)

    client = confluent_kafka.Producer({
        "bootstrap.servers": servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        "log_level": 0,
        "error_cb": on_error,
    })
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            client.list_topics(timeout=0.2)
            return True
        except confluent_kafka.KafkaException:
            client.poll(0)  # serves error_cb
            if refused:
                return False
    pytest.fail(f"{user}: neither logged in nor refused within 30 s")


@pytest.fixture(scope="module")
def broker():
    with Broker(listeners={"SASL_PLAINTEXT": 0},
                sasl_users={"admin": "admin-pw"}) as b:
        yield b


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_credential_set_authenticates_until_deleted(broker, mechanism):
    servers = broker.listener_bootstrap_servers("SASL_PLAINTEXT")
    user = "py-" + mechanism.lower()
    assert not authenticates(servers, mechanism, user, "first")
    broker.set_scram_credential(user, "first", mechanism=mechanism,
                                iterations=8192)
    assert broker.scram_credentials()[user] == {mechanism: 8192}
    assert authenticates(servers, mechanism, user, "first")
    assert not authenticates(servers, mechanism, user, "other")
    broker.set_scram_credential(user, "second", mechanism=mechanism)
    assert broker.scram_credentials()[user] == {mechanism: 4096}
    assert authenticates(servers, mechanism, user, "second")
    assert not authenticates(servers, mechanism, user, "first")
    broker.delete_scram_credential(user, mechanism)
    assert user not in broker.scram_credentials()
    assert not authenticates(servers, mechanism, user, "second")


def test_the_options_users_are_listed_and_bad_arguments_refused(broker):
    assert broker.scram_credentials()["admin"] == {"SCRAM-SHA-256": 4096,
                                                   "SCRAM-SHA-512": 4096}
    with pytest.raises(Error) as e:
        broker.set_scram_credential("x", "pw", mechanism="MD5")
    assert e.value.status == "INVALID_ARGUMENT"
    with pytest.raises(Error, match="iterations must be in"):
        broker.set_scram_credential("x", "pw", iterations=100)
    with pytest.raises(Error, match="must not be empty"):
        broker.set_scram_credential("", "pw")
    with pytest.raises(Error) as e:
        broker.delete_scram_credential("nobody", "SCRAM-SHA-256")
    assert e.value.status == "NOT_FOUND"


def test_a_clusters_brokers_share_the_credentials():
    with Broker(brokers=2, listeners={"SASL_PLAINTEXT": 0}) as cluster:
        cluster.set_scram_credential("zoe", "zoe-pw")
        # Each broker alone: the second one knows her too.
        for servers in cluster.listener_bootstrap_servers(
                "SASL_PLAINTEXT").split(","):
            assert authenticates(servers, "SCRAM-SHA-256", "zoe", "zoe-pw")
