"""The exactly-broker binary's ACL authorizer (--authorizer) seen by clients written elsewhere,
over SASL_PLAINTEXT: kafka-python's admin client creates, describes and deletes ACLs
(confluent-kafka 1.7.0, Debian's, has no ACL API; kafka-python 2.0.2 speaks CreateAcls,
DescribeAcls and DeleteAcls v1), and confluent-kafka producers meet the authorization errors:
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, fatal, for a transactional id without an ACL, and
TOPIC_AUTHORIZATION_FAILED for a topic without WRITE, while the user with the ACLs commits.
"""
import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                         KafkaAdminClient, NewTopic, ResourcePattern, ResourcePatternFilter, ResourceType)
from kafka.errors import NoError, SecurityDisabledError

TIMEOUT = 30
USERS = "alice:alice-pw,bob:bob-pw,admin:admin-pw"


def sasl_listener(broker):
    """The SASL_PLAINTEXT listener's address, from the lines after bootstrap.servers."""
    while True:
        line = broker.proc.stdout.readline()
        assert line, "no listener line"
        if line.startswith("listener.SASL_PLAINTEXT="):
            return line.strip().split("=", 1)[1]


@pytest.fixture
def secured(broker_factory):
    broker = broker_factory("--listeners", "SASL_PLAINTEXT://:0", "--sasl-users", USERS,
                            "--authorizer", "--super-users", "User:admin")
    return sasl_listener(broker)


def admin_as(servers, user):
    return KafkaAdminClient(bootstrap_servers=servers, security_protocol="SASL_PLAINTEXT",
                            sasl_mechanism="PLAIN", sasl_plain_username=user,
                            sasl_plain_password=f"{user}-pw", request_timeout_ms=TIMEOUT * 1000)


def producer_as(servers, user, **extra):
    return Producer({"bootstrap.servers": servers, "security.protocol": "SASL_PLAINTEXT",
                     "sasl.mechanism": "PLAIN", "sasl.username": user,
                     "sasl.password": f"{user}-pw", **extra})


def allow(user, resource_type, name, operation, pattern=ACLResourcePatternType.LITERAL):
    return ACL(principal=f"User:{user}", host="*", operation=operation,
               permission_type=ACLPermissionType.ALLOW,
               resource_pattern=ResourcePattern(resource_type, name, pattern))


def everything(principal=None, resource_type=ResourceType.ANY, name=None,
               pattern=ACLResourcePatternType.ANY):
    return ACLFilter(principal=principal, host=None, operation=ACLOperation.ANY,
                     permission_type=ACLPermissionType.ANY,
                     resource_pattern=ResourcePatternFilter(resource_type, name, pattern))


def described(acls):
    return sorted((a.resource_pattern.resource_type.name, a.resource_pattern.resource_name,
                   a.resource_pattern.pattern_type.name, a.principal, a.operation.name)
                  for a in acls)


def test_acls_round_trip_and_decide(secured):
    admin = admin_as(secured, "admin")
    # Alice may not create topics: the super user does.
    admin.create_topics([NewTopic("orders", 1, 1)])
    created = admin.create_acls([
        allow("alice", ResourceType.TRANSACTIONAL_ID, "alice-txn", ACLOperation.WRITE),
        allow("alice", ResourceType.TOPIC, "orders", ACLOperation.WRITE),
        allow("bob", ResourceType.TOPIC, "ord", ACLOperation.READ, ACLResourcePatternType.PREFIXED),
    ])
    assert created["failed"] == []
    assert len(created["succeeded"]) == 3

    acls, error = admin.describe_acls(everything())
    assert error is NoError
    assert described(acls) == [
        ("TOPIC", "ord", "PREFIXED", "User:bob", "READ"),
        ("TOPIC", "orders", "LITERAL", "User:alice", "WRITE"),
        ("TRANSACTIONAL_ID", "alice-txn", "LITERAL", "User:alice", "WRITE"),
    ]
    acls, _ = admin.describe_acls(everything(resource_type=ResourceType.TOPIC, name="orders",
                                             pattern=ACLResourcePatternType.MATCH))
    assert len(acls) == 2

    # Alice commits a transaction with exactly those ACLs.
    alice = producer_as(secured, "alice", **{"transactional.id": "alice-txn"})
    alice.init_transactions(TIMEOUT)
    alice.begin_transaction()
    for i in range(5):
        alice.produce("orders", key=str(i), value=b"v")
    alice.commit_transaction(TIMEOUT)

    # Bob's transactional id has no ACL: a fatal error that names it.
    bob = producer_as(secured, "bob", **{"transactional.id": "bob-txn"})
    with pytest.raises(KafkaException) as raised:
        bob.init_transactions(TIMEOUT)
    assert raised.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert raised.value.args[0].fatal()

    # Alice may not write where she has no ACL: the delivery report says so.
    reports = []
    plain = producer_as(secured, "alice")
    plain.produce("payments", value=b"v", on_delivery=lambda err, msg: reports.append(err))
    plain.flush(TIMEOUT)
    assert [e.code() for e in reports] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]

    deleted = admin.delete_acls([everything(principal="User:alice")])
    assert len(deleted[0][1]) == 2
    acls, _ = admin.describe_acls(everything())
    assert described(acls) == [("TOPIC", "ord", "PREFIXED", "User:bob", "READ")]
    admin.close()


def test_without_the_authorizer_the_acl_apis_are_disabled(broker_factory):
    servers = sasl_listener(broker_factory("--listeners", "SASL_PLAINTEXT://:0",
                                           "--sasl-users", USERS))
    admin = admin_as(servers, "bob")
    with pytest.raises(SecurityDisabledError):
        admin.describe_acls(everything())
    admin.close()
