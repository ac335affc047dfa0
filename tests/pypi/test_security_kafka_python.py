"""kafka-python 3 from PyPI against the bundled broker's security: produce and consume exact
records over SSL, SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and SASL_SSL; a wrong
password answered SASL_AUTHENTICATION_FAILED (kafka-python's SaslAuthenticationFailedError) with
Kafka's wording; a plaintext client on the TLS port fails and the broker goes on serving; the
broker's certificate verified against the CA (refused against another CA); client certificates
when the broker has --ssl-ca-file. With --authorizer: KafkaAdminClient's create_acls /
describe_acls / delete_acls round trip, TransactionalIdAuthorizationFailedError,
TopicAuthorizationFailedError, GroupAuthorizationFailedError, and a super user who needs no ACL.

kafka-python 3.0.12's clients never raise a SASL failure: their bootstrap retries it until
bootstrap_timeout_ms (KafkaTimeoutError), and their transport drops an answer that arrives in the
same read as the connection's close (Kafka closes the connection right after that answer, and so
does the broker). So the wrong-password tests drive kafka-python's own SASL mechanisms and
protocol classes over a socket to see the answer, and check that a producer fails within its
bootstrap timeout instead of hanging.

Bundled broker only: the Apache Kafka cluster of tests/kafka has no SASL listener (the fixtures
are parametrized "bundled", so the kafka1 label's `-k "not bundled"` leaves them out)."""
import socket
import time

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as Errors
from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType, \
    ACLResourcePatternType, NewTopic, ResourcePattern, ResourcePatternFilter, ResourceType
from kafka.net.sasl import get_sasl_mechanism
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

import security_support
from conftest import unique, wait_until
from kafka_python_support import subscribe
# password(user); and the fixtures: the certificates and the module's brokers.
from security_support import acl_broker, certs, client_auth, secured, password  # noqa: F401

TIMEOUT_MS = 30_000  # for each blocking client call
RECORDS = [(f"k{i}".encode(), f"value {i}".encode()) for i in range(5)]
EXPECTED = [(i, k, v) for i, (k, v) in enumerate(RECORDS)]



def config(broker, protocol, mechanism="PLAIN", user="alice", secret=None, cafile=None, **extra):
    """kafka-python's settings for `protocol` on `broker`'s listener of that protocol."""
    conf = {"bootstrap_servers": broker.listeners[protocol], "security_protocol": protocol,
            **extra}
    if protocol.startswith("SASL"):
        conf.update(sasl_mechanism=mechanism, sasl_plain_username=user,
                    sasl_plain_password=password(user) if secret is None else secret)
    if protocol.endswith("SSL"):
        conf["ssl_cafile"] = cafile
    return conf


def create_topic(conf):
    name = unique("sec")
    admin = KafkaAdminClient(request_timeout_ms=TIMEOUT_MS, **conf)
    admin.create_topics([NewTopic(name, 1, 1)], wait_for_metadata=True)
    admin.close()
    return name


def produce(conf, topic):
    producer = KafkaProducer(linger_ms=5, **conf)
    futures = [producer.send(topic, key=key, value=value, partition=0) for key, value in RECORDS]
    producer.flush(TIMEOUT_MS / 1000)
    offsets = [f.get(timeout=TIMEOUT_MS / 1000).offset for f in futures]
    producer.close()
    return offsets


def consume(conf, topic, group=None):
    """The records of partition 0 from offset 0: [(offset, key, value)], with `group` subscribed
    (else assigned)."""
    consumer = KafkaConsumer(group_id=group or unique("g"), auto_offset_reset="earliest",
                             enable_auto_commit=False, **conf)
    if group:
        subscribe(consumer, [topic])
    else:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek(TopicPartition(topic, 0), 0)
    read = []

    def pump():
        for batch in consumer.poll(timeout_ms=200).values():
            read.extend((r.offset, r.key, r.value) for r in batch)

    wait_until(lambda: len(read) >= len(RECORDS), lambda: f"read {read}", pump)
    consumer.close()
    return read


def round_trip(conf):
    topic = create_topic(conf)
    assert produce(conf, topic) == [0, 1, 2, 3, 4]
    assert consume(conf, topic) == EXPECTED


def fails_to_bootstrap(conf, caplog=None, why=None):
    """A producer with `conf` gives up within its bootstrap timeout (KafkaTimeoutError), its
    log saying `why` its connections failed."""
    if caplog is not None:
        caplog.clear()
    started = time.monotonic()
    with pytest.raises(Errors.KafkaTimeoutError, match="Unable to bootstrap"):
        KafkaProducer(bootstrap_timeout_ms=1000, **conf)
    assert time.monotonic() - started < 15
    if why is not None:
        assert f"Bootstrap connection to bootstrap-0 failed: {why}" in caplog.text


def sasl_exchange(address, mechanism, user, secret):
    """SaslHandshake v1 and SaslAuthenticate v2 with kafka-python's protocol classes and its
    SASL mechanism for `mechanism`, as its connection does them: (error class, error message)
    of the answer, (NoError, None) once authenticated."""
    host, port = address.rsplit(":", 1)
    protocol = KafkaProtocol(client_id="pypi-security-test")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        def call(request):
            protocol.send_request(request)
            sock.sendall(protocol.send_bytes())
            while True:
                data = sock.recv(65536)
                assert data, f"the broker closed the connection before answering {request}"
                answers = protocol.receive_bytes(data)
                if answers:
                    return answers[0][1]

        handshake = call(SaslHandshakeRequest(mechanism=mechanism, version=1))
        assert handshake.error_code == 0, handshake
        assert mechanism in handshake.mechanisms
        client = get_sasl_mechanism(mechanism)(
            host=host, sasl_mechanism=mechanism, sasl_plain_username=user,
            sasl_plain_password=secret, security_protocol="SASL_PLAINTEXT")
        while not client.is_done():
            answer = call(SaslAuthenticateRequest(auth_bytes=client.auth_bytes(), version=2))
            error = Errors.for_code(answer.error_code)
            if error is not Errors.NoError:
                return error, answer.error_message
            client.receive(answer.auth_bytes)
        assert client.is_authenticated()
        return Errors.NoError, None


# Over every listener and mechanism.

@pytest.mark.parametrize("protocol,mechanism", [
    ("SSL", None), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-512"), ("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256")])
def test_produce_consume(secured, certs, protocol, mechanism):
    round_trip(config(secured, protocol, mechanism or "PLAIN", cafile=certs.ca))


@pytest.mark.parametrize("mechanism,says", [
    ("PLAIN", "Authentication failed: Invalid username or password"),
    ("SCRAM-SHA-256", "Authentication failed during authentication due to invalid credentials "
                      "with SASL mechanism SCRAM-SHA-256"),
    ("SCRAM-SHA-512", "Authentication failed during authentication due to invalid credentials "
                      "with SASL mechanism SCRAM-SHA-512")])
def test_wrong_password_is_sasl_authentication_failed(secured, certs, mechanism, says):
    address = secured.listeners["SASL_PLAINTEXT"]
    assert sasl_exchange(address, mechanism, "alice", "not-it") == \
        (Errors.SaslAuthenticationFailedError, says)
    assert sasl_exchange(address, mechanism, "mallory", "x") == \
        (Errors.SaslAuthenticationFailedError, says)
    assert sasl_exchange(address, mechanism, "alice", password("alice")) == (Errors.NoError, None)
    # The client itself: no connection, and a timeout rather than a hang.
    fails_to_bootstrap(config(secured, "SASL_PLAINTEXT", mechanism, secret="not-it"))
    fails_to_bootstrap(config(secured, "SASL_SSL", mechanism, secret="not-it", cafile=certs.ca))


def test_plaintext_client_on_the_tls_port(secured, certs, caplog):
    # The broker reads no request from it: the TLS handshake fails and the connection closes.
    closed = "KafkaConnectionError: socket disconnected"
    fails_to_bootstrap({"bootstrap_servers": secured.listeners["SSL"]}, caplog, closed)
    fails_to_bootstrap({"bootstrap_servers": secured.listeners["SASL_SSL"],
                        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
                        "sasl_plain_username": "alice", "sasl_plain_password": password("alice")},
                       caplog, closed)
    assert secured.alive()
    round_trip(config(secured, "SSL", cafile=certs.ca))


def test_server_certificate_from_another_ca_is_refused(secured, certs, caplog):
    for conf in (config(secured, "SSL", cafile=certs.wrong_ca),
                 config(secured, "SASL_SSL", "SCRAM-SHA-256", cafile=certs.wrong_ca)):
        fails_to_bootstrap(conf, caplog, "KafkaConnectionError: Handshake failed: "
                                         "[SSL: CERTIFICATE_VERIFY_FAILED]")
    # With the right CA the same settings work (test_produce_consume: over every listener).
    round_trip(config(secured, "SASL_SSL", "SCRAM-SHA-512", cafile=certs.ca))


def test_client_certificate(client_auth, certs, caplog):
    signed = {"ssl_certfile": certs.client, "ssl_keyfile": certs.client_key}
    round_trip(config(client_auth, "SSL", cafile=certs.ca, **signed))
    round_trip(config(client_auth, "SASL_SSL", "PLAIN", cafile=certs.ca, **signed))
    # Without a certificate, or with one another CA signed, the broker's TLS alert ends it.
    fails_to_bootstrap(config(client_auth, "SSL", cafile=certs.ca), caplog,
                       "KafkaConnectionError: [SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED]")
    fails_to_bootstrap(config(client_auth, "SSL", cafile=certs.ca, ssl_certfile=certs.stranger,
                              ssl_keyfile=certs.stranger_key), caplog,
                       "KafkaConnectionError: [SSL: TLSV1_ALERT_UNKNOWN_CA]")
    assert client_auth.alive()


# ACLs (--authorizer, User:admin the super user), principals from SASL_PLAINTEXT PLAIN users.

def as_user(broker, user, **extra):
    return config(broker, "SASL_PLAINTEXT", "PLAIN", user=user, **extra)


def admin_as(broker, user):
    return KafkaAdminClient(request_timeout_ms=TIMEOUT_MS, **as_user(broker, user))


def allow(user, resource_type, name, operation, permission=ACLPermissionType.ALLOW):
    return ACL(principal=f"User:{user}", host="*", operation=operation,
               permission_type=permission,
               resource_pattern=ResourcePattern(resource_type, name,
                                                ACLResourcePatternType.LITERAL))


def named(resource_type, name):
    return ACLFilter(principal=None, host=None, operation=ACLOperation.ANY,
                     permission_type=ACLPermissionType.ANY,
                     resource_pattern=ResourcePatternFilter(resource_type, name,
                                                            ACLResourcePatternType.LITERAL))


def grant(broker, *acls):
    admin = admin_as(broker, "admin")
    created = admin.create_acls(list(acls))
    admin.close()
    assert created["failed"] == []
    assert len(created["succeeded"]) == len(acls)


def described(acls):
    return sorted((a.resource_pattern.resource_type.name, a.resource_pattern.resource_name,
                   a.resource_pattern.pattern_type.name, a.principal, a.host, a.operation.name,
                   a.permission_type.name) for a in acls)


def test_acls_round_trip(acl_broker):
    admin = admin_as(acl_broker, "admin")
    topic, group = unique("acl-topic"), unique("acl-group")
    acls = [allow("alice", ResourceType.TOPIC, topic, ACLOperation.WRITE),
            allow("bob", ResourceType.TOPIC, topic, ACLOperation.READ),
            allow("bob", ResourceType.GROUP, group, ACLOperation.READ),
            allow("carol", ResourceType.TOPIC, topic, ACLOperation.WRITE, ACLPermissionType.DENY)]
    created = admin.create_acls(acls)
    assert created["failed"] == [] and created["succeeded"] == acls

    found, error = admin.describe_acls(named(ResourceType.TOPIC, topic))
    assert error is Errors.NoError
    assert described(found) == [
        ("TOPIC", topic, "LITERAL", "User:alice", "*", "WRITE", "ALLOW"),
        ("TOPIC", topic, "LITERAL", "User:bob", "*", "READ", "ALLOW"),
        ("TOPIC", topic, "LITERAL", "User:carol", "*", "WRITE", "DENY")]
    found, _ = admin.describe_acls(named(ResourceType.GROUP, group))
    assert described(found) == [("GROUP", group, "LITERAL", "User:bob", "*", "READ", "ALLOW")]

    [(_, deleted, error)] = admin.delete_acls([named(ResourceType.TOPIC, topic)])
    assert error is Errors.NoError
    assert described(deleted) == described(acls[:2] + acls[3:])
    assert admin.describe_acls(named(ResourceType.TOPIC, topic))[0] == []
    assert len(admin.describe_acls(named(ResourceType.GROUP, group))[0]) == 1
    [(_, deleted, _)] = admin.delete_acls([named(ResourceType.TOPIC, topic)])
    assert deleted == []
    admin.close()

    # Without ALTER on the cluster, alice may not create ACLs.
    alice = admin_as(acl_broker, "alice")
    created = alice.create_acls([allow("alice", ResourceType.TOPIC, topic, ACLOperation.ALL)])
    assert created["succeeded"] == []
    assert created["failed"] == [Errors.ClusterAuthorizationFailedError]
    alice.close()


def admin_topic(broker):
    """A topic the super user creates (nobody else may)."""
    return create_topic(as_user(broker, "admin"))


def test_transactional_id_without_write(acl_broker):
    topic, txn = admin_topic(acl_broker), unique("txn")
    producer = KafkaProducer(transactional_id=txn, **as_user(acl_broker, "alice"))
    with pytest.raises(Errors.TransactionalIdAuthorizationFailedError):
        producer.init_transactions()
    producer.close(timeout=5)

    grant(acl_broker, allow("alice", ResourceType.TRANSACTIONAL_ID, txn, ACLOperation.WRITE),
          allow("alice", ResourceType.TOPIC, topic, ACLOperation.WRITE))
    producer = KafkaProducer(transactional_id=txn, **as_user(acl_broker, "alice"))
    producer.init_transactions()
    producer.begin_transaction()
    futures = [producer.send(topic, key=k, value=v, partition=0) for k, v in RECORDS]
    producer.commit_transaction()
    assert [f.get(timeout=TIMEOUT_MS / 1000).offset for f in futures] == [0, 1, 2, 3, 4]
    producer.close()
    assert consume(as_user(acl_broker, "admin", isolation_level="read_committed"), topic) \
        == EXPECTED


def test_producer_without_topic_write(acl_broker):
    topic = admin_topic(acl_broker)
    grant(acl_broker, allow("bob", ResourceType.TOPIC, topic, ACLOperation.READ))
    # Not idempotent (kafka-python's default): bob's InitProducerId would need IDEMPOTENT_WRITE
    # on the cluster or WRITE on some topic, and fail first with CLUSTER_AUTHORIZATION_FAILED.
    producer = KafkaProducer(max_block_ms=10_000, enable_idempotence=False,
                             **as_user(acl_broker, "bob"))
    with pytest.raises(Errors.TopicAuthorizationFailedError):
        producer.send(topic, value=b"v", partition=0).get(timeout=TIMEOUT_MS / 1000)
    producer.close(timeout=5)
    consumer = KafkaConsumer(**as_user(acl_broker, "admin"))
    assert consumer.end_offsets([TopicPartition(topic, 0)]) == {TopicPartition(topic, 0): 0}
    consumer.close()


def test_consumer_without_group_read(acl_broker):
    topic, group = admin_topic(acl_broker), unique("g")
    assert produce(as_user(acl_broker, "admin"), topic) == [0, 1, 2, 3, 4]
    grant(acl_broker, allow("bob", ResourceType.TOPIC, topic, ACLOperation.READ))
    consumer = KafkaConsumer(group_id=group, auto_offset_reset="earliest",
                             **as_user(acl_broker, "bob"))
    consumer.subscribe([topic])
    with pytest.raises(Errors.GroupAuthorizationFailedError):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert consumer.poll(timeout_ms=200) == {}
    consumer.close()

    grant(acl_broker, allow("bob", ResourceType.GROUP, group, ACLOperation.READ))
    assert consume(as_user(acl_broker, "bob"), topic, group=group) == EXPECTED


def test_super_user_needs_no_acl(acl_broker):
    conf = as_user(acl_broker, "admin")
    topic = admin_topic(acl_broker)
    admin = admin_as(acl_broker, "admin")
    assert admin.describe_acls(named(ResourceType.TOPIC, topic))[0] == []
    admin.close()
    assert produce(conf, topic) == [0, 1, 2, 3, 4]
    assert consume(conf, topic, group=unique("g")) == EXPECTED
