"""confluent-kafka from PyPI (its wheel's own librdkafka) against the bundled broker's security:
produce and consume exact records over SSL, SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
and SASL_SSL; a wrong password is librdkafka's _AUTHENTICATION error naming
SASL_AUTHENTICATION_FAILED at once, not a timeout; a plaintext client on the TLS port fails and
the broker goes on serving; the broker's certificate is verified against the CA (and refused
against another CA); client certificates when the broker has --ssl-ca-file. With --authorizer:
create_acls / describe_acls / delete_acls round trips, a fatal TRANSACTIONAL_ID_AUTHORIZATION_FAILED
for a transactional id without WRITE, TOPIC_AUTHORIZATION_FAILED for a topic without WRITE,
GROUP_AUTHORIZATION_FAILED for a group without READ, and a super user who needs no ACL.

Bundled broker only: the Apache Kafka cluster of tests/kafka has no SASL listener (the fixtures
are parametrized "bundled", so the kafka1 label's `-k "not bundled"` leaves them out)."""
import functools

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AclBinding, AclBindingFilter, AclOperation, AclPermissionType, \
    AdminClient, NewTopic, ResourcePatternType, ResourceType

import security_support
from conftest import unique, wait_until
# password(user); and the fixtures: the certificates and the module's brokers.
from security_support import acl_broker, certs, client_auth, secured, password  # noqa: F401

TIMEOUT = 30  # seconds, for each blocking client call
RECORDS = [(f"k{i}".encode(), f"value {i}".encode()) for i in range(5)]



def config(broker, protocol, mechanism="PLAIN", user="alice", secret=None, ca=None, **extra):
    """librdkafka's settings for `protocol` on `broker`'s listener of that protocol."""
    conf = {"bootstrap.servers": broker.listeners.get(protocol, broker.bootstrap),
            "security.protocol": protocol, **extra}
    if protocol.startswith("SASL"):
        conf.update({"sasl.mechanism": mechanism, "sasl.username": user,
                     "sasl.password": password(user) if secret is None else secret})
    if protocol.endswith("SSL"):
        conf["ssl.ca.location"] = ca
    return conf


class Errors:
    """An error_cb that keeps what it is given."""

    def __init__(self):
        self.seen = []

    def __call__(self, err):
        self.seen.append(err)

    def codes(self):
        return [err.code() for err in self.seen]


def create_topic(conf):
    name, client = unique("sec"), AdminClient(conf)
    client.create_topics([NewTopic(name, 1, 1)])[name].result(TIMEOUT)
    return name


def produce(conf, topic, records=RECORDS):
    """The records to partition 0: their offsets, each delivery checked."""
    producer = Producer({**conf, "linger.ms": 5})
    delivered = [None] * len(records)

    def on_delivery(index, err, msg):
        assert err is None, err
        delivered[index] = msg.offset()

    for index, (key, value) in enumerate(records):
        producer.produce(topic, key=key, value=value, partition=0,
                         on_delivery=functools.partial(on_delivery, index))
    assert producer.flush(TIMEOUT) == 0
    return delivered


def consume(conf, topic, count=len(RECORDS), subscribe=False):
    """`count` records of partition 0 from offset 0: [(offset, key, value)]."""
    consumer = Consumer({**conf, "group.id": unique("g"), "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    if subscribe:
        consumer.subscribe([topic])
    else:
        consumer.assign([TopicPartition(topic, 0, 0)])
    read = []

    def pump():
        msg = consumer.poll(0.2)
        if msg is not None:
            assert msg.error() is None, msg.error()
            read.append((msg.offset(), msg.key(), msg.value()))

    wait_until(lambda: len(read) >= count, lambda: f"read {len(read)} of {count}", pump)
    consumer.close()
    return read


def round_trip(conf):
    topic = create_topic(conf)
    assert produce(conf, topic) == [0, 1, 2, 3, 4]
    assert consume(conf, topic) == [(i, k, v) for i, (k, v) in enumerate(RECORDS)]


def first_error(conf):
    """Makes a producer with `conf` ask for metadata; the first error its error_cb gets."""
    errors = Errors()
    producer = Producer({**conf, "error_cb": errors})
    wait_until(lambda: errors.seen, "an error from the error callback",
               lambda: producer.poll(0.2),
               timeout=20)
    return errors.seen[0]


# Over every listener and mechanism.

@pytest.mark.parametrize("protocol,mechanism", [
    ("SSL", None), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-512"), ("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-512")])
def test_produce_consume(secured, certs, protocol, mechanism):
    round_trip(config(secured, protocol, mechanism or "PLAIN", ca=certs.ca))


@pytest.mark.parametrize("protocol,mechanism,says", [
    ("SASL_PLAINTEXT", "PLAIN", "Invalid username or password"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-256", "invalid credentials with SASL mechanism SCRAM-SHA-256"),
    ("SASL_SSL", "SCRAM-SHA-512", "invalid credentials with SASL mechanism SCRAM-SHA-512")])
def test_wrong_password_is_an_authentication_error(secured, certs, protocol, mechanism, says):
    err = first_error(config(secured, protocol, mechanism, secret="not-it", ca=certs.ca))
    assert err.code() == KafkaError._AUTHENTICATION, err
    assert says in err.str(), err


def test_unknown_user_is_an_authentication_error(secured, certs):
    err = first_error(config(secured, "SASL_PLAINTEXT", "SCRAM-SHA-256", user="mallory",
                             secret="x"))
    assert err.code() == KafkaError._AUTHENTICATION, err


def test_plaintext_client_on_the_tls_port(secured, certs):
    conf = {"bootstrap.servers": secured.listeners["SSL"], "security.protocol": "PLAINTEXT"}
    err = first_error(conf)
    # The broker closes the connection: librdkafka's only broker is down (or a transport
    # error first, depending on its timing); not a hang.
    assert err.code() in (KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT), err
    # The broker goes on serving, TLS clients as before.
    assert secured.alive()
    round_trip(config(secured, "SSL", ca=certs.ca))


def test_server_certificate_from_another_ca_is_refused(secured, certs):
    # librdkafka reports a failed handshake as _SSL ("SSL handshake failed") or _TRANSPORT,
    # depending on the step of its state machine that sees it, naming OpenSSL's reason.
    for conf in (config(secured, "SSL", ca=certs.wrong_ca),
                 config(secured, "SASL_SSL", "SCRAM-SHA-256", ca=certs.wrong_ca)):
        err = first_error(conf)
        assert err.code() in (KafkaError._SSL, KafkaError._TRANSPORT), err
        assert "certificate verify failed" in err.str(), err


def test_client_certificate(client_auth, certs):
    signed = {"ssl.certificate.location": certs.client, "ssl.key.location": certs.client_key}
    round_trip(config(client_auth, "SSL", ca=certs.ca, **signed))
    round_trip(config(client_auth, "SASL_SSL", "SCRAM-SHA-512", ca=certs.ca, **signed))
    # Without a certificate, or with one another CA signed, the broker's TLS alert ends it.
    err = first_error(config(client_auth, "SSL", ca=certs.ca))
    assert err.code() in (KafkaError._SSL, KafkaError._TRANSPORT), err
    assert "certificate required" in err.str(), err
    err = first_error(config(client_auth, "SSL", ca=certs.ca,
                             **{"ssl.certificate.location": certs.stranger,
                                "ssl.key.location": certs.stranger_key}))
    assert err.code() in (KafkaError._SSL, KafkaError._TRANSPORT), err
    assert "unknown ca" in err.str(), err
    assert client_auth.alive()


# ACLs (--authorizer, User:admin the super user), principals from SASL_PLAINTEXT PLAIN users.

def as_user(broker, user, **extra):
    return config(broker, "SASL_PLAINTEXT", "PLAIN", user=user, **extra)


def allow(user, restype, name, operation):
    return AclBinding(restype, name, ResourcePatternType.LITERAL, f"User:{user}", "*", operation,
                      AclPermissionType.ALLOW)


def grant(broker, *bindings):
    client = AdminClient(as_user(broker, "admin"))
    for binding, future in client.create_acls(list(bindings), request_timeout=TIMEOUT).items():
        assert future.result(TIMEOUT) is None, binding


def named(restype, name):
    """A filter for the ACLs of one literal resource, whoever they are for."""
    return AclBindingFilter(restype, name, ResourcePatternType.LITERAL, None, None,
                            AclOperation.ANY, AclPermissionType.ANY)


def acl_topic(broker):
    """A topic the super user creates (nobody else may)."""
    return create_topic(as_user(broker, "admin"))


def test_acls_round_trip(acl_broker):
    admin = AdminClient(as_user(acl_broker, "admin"))
    topic, group = unique("acl-topic"), unique("acl-group")
    bindings = [allow("alice", ResourceType.TOPIC, topic, AclOperation.WRITE),
                allow("bob", ResourceType.TOPIC, topic, AclOperation.READ),
                allow("bob", ResourceType.GROUP, group, AclOperation.READ),
                AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:carol",
                           "*", AclOperation.WRITE, AclPermissionType.DENY)]
    created = admin.create_acls(bindings, request_timeout=TIMEOUT)
    assert set(created) == set(bindings)
    assert [future.result(TIMEOUT) for future in created.values()] == [None] * 4

    described = admin.describe_acls(named(ResourceType.TOPIC, topic)).result(TIMEOUT)
    assert sorted(described) == sorted(bindings[:2] + bindings[3:])
    described = admin.describe_acls(named(ResourceType.GROUP, group)).result(TIMEOUT)
    assert described == [bindings[2]]
    # A filter by principal and operation, over every resource (other tests give bob READ on
    # resources of their own: only this test's are compared).
    only_bob_read = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:bob",
                                     None, AclOperation.READ, AclPermissionType.ALLOW)
    described = admin.describe_acls(only_bob_read).result(TIMEOUT)
    assert all(b.principal == "User:bob" and b.operation == AclOperation.READ for b in described)
    assert sorted(b for b in described if b.name in (topic, group)) == \
        sorted([bindings[1], bindings[2]])

    topic_filter = named(ResourceType.TOPIC, topic)
    deleted = admin.delete_acls([topic_filter], request_timeout=TIMEOUT)
    assert sorted(deleted[topic_filter].result(TIMEOUT)) == sorted(bindings[:2] + bindings[3:])
    assert admin.describe_acls(named(ResourceType.TOPIC, topic)).result(TIMEOUT) == []
    assert admin.describe_acls(named(ResourceType.GROUP, group)).result(TIMEOUT) == [bindings[2]]
    # Deleting again deletes nothing.
    assert admin.delete_acls([topic_filter])[topic_filter].result(TIMEOUT) == []


def test_acl_calls_need_cluster_alter(acl_broker):
    alice = AdminClient(as_user(acl_broker, "alice"))
    future = alice.create_acls([allow("alice", ResourceType.TOPIC, unique("t"),
                                      AclOperation.ALL)])
    with pytest.raises(KafkaException) as raised:
        list(future.values())[0].result(TIMEOUT)
    assert raised.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_transactional_id_without_write_is_fatal(acl_broker):
    topic, txn = acl_topic(acl_broker), unique("txn")
    producer = Producer(as_user(acl_broker, "alice", **{"transactional.id": txn}))
    with pytest.raises(KafkaException) as raised:
        producer.init_transactions(TIMEOUT)
    err = raised.value.args[0]
    assert err.code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, err
    assert err.fatal(), err

    # With WRITE on the transactional id and the topic, alice commits.
    grant(acl_broker, allow("alice", ResourceType.TRANSACTIONAL_ID, txn, AclOperation.WRITE),
          allow("alice", ResourceType.TOPIC, topic, AclOperation.WRITE))
    producer = Producer(as_user(acl_broker, "alice", **{"transactional.id": txn}))
    producer.init_transactions(TIMEOUT)
    producer.begin_transaction()
    for key, value in RECORDS:
        producer.produce(topic, key=key, value=value, partition=0)
    producer.commit_transaction(TIMEOUT)
    # Records 0-4 and the commit marker at 5; admin reads them back.
    assert consume(as_user(acl_broker, "admin", **{"isolation.level": "read_committed"}),
                   topic) == [(i, k, v) for i, (k, v) in enumerate(RECORDS)]


def test_producer_without_topic_write(acl_broker):
    topic = acl_topic(acl_broker)
    # bob may read it, not write it.
    grant(acl_broker, allow("bob", ResourceType.TOPIC, topic, AclOperation.READ))
    reports = []
    producer = Producer(as_user(acl_broker, "bob"))
    producer.produce(topic, value=b"v", partition=0,
                     on_delivery=lambda err, msg: reports.append(err))
    producer.flush(TIMEOUT)
    assert [err.code() for err in reports] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], reports
    # Nothing was written: the super user finds the partition empty.
    consumer = Consumer({**as_user(acl_broker, "admin"), "group.id": unique("g")})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), TIMEOUT)
    consumer.close()
    assert (low, high) == (0, 0)


def test_consumer_without_group_read(acl_broker):
    topic, group = acl_topic(acl_broker), unique("g")
    assert produce(as_user(acl_broker, "admin"), topic) == [0, 1, 2, 3, 4]
    grant(acl_broker, allow("bob", ResourceType.TOPIC, topic, AclOperation.READ))
    errors = Errors()
    consumer = Consumer({**as_user(acl_broker, "bob"), "group.id": group,
                         "auto.offset.reset": "earliest", "error_cb": errors})
    consumer.subscribe([topic])
    seen = []

    def pump():
        msg = consumer.poll(0.2)
        if msg is not None:
            assert msg.error() is not None, f"read a record at offset {msg.offset()}"
            seen.append(msg.error().code())

    wait_until(lambda: KafkaError.GROUP_AUTHORIZATION_FAILED in seen + errors.codes(),
               lambda: f"GROUP_AUTHORIZATION_FAILED, got {seen} and {errors.seen}", pump)
    consumer.close()

    # With READ on the group, bob reads every record in that group.
    grant(acl_broker, allow("bob", ResourceType.GROUP, group, AclOperation.READ))
    consumer = Consumer({**as_user(acl_broker, "bob"), "group.id": group,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    read = []

    def pump_records():
        msg = consumer.poll(0.2)
        if msg is not None:
            assert msg.error() is None, msg.error()
            read.append((msg.offset(), msg.key(), msg.value()))

    wait_until(lambda: len(read) >= len(RECORDS), lambda: f"read {read}", pump_records)
    consumer.close()
    assert read == [(i, k, v) for i, (k, v) in enumerate(RECORDS)]


def test_super_user_needs_no_acl(acl_broker):
    admin = as_user(acl_broker, "admin")
    topic = acl_topic(acl_broker)
    assert AdminClient(admin).describe_acls(named(ResourceType.TOPIC, topic)).result(TIMEOUT) \
        == []
    assert produce(admin, topic) == [0, 1, 2, 3, 4]
    assert consume(admin, topic, subscribe=True) == [(i, k, v) for i, (k, v) in
                                                     enumerate(RECORDS)]
