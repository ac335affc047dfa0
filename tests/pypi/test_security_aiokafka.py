"""aiokafka (asyncio) from PyPI against the bundled broker's security: produce and consume exact
records over SSL, SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and SASL_SSL; a wrong
password fails start() at once (KafkaConnectionError "Unable to bootstrap", its log naming
[Error 58] SaslAuthenticationFailed with Kafka's wording), not a hang; a plaintext client on the
TLS port fails and the broker goes on serving; the broker's certificate verified against the CA
(refused against another CA); client certificates when the broker has --ssl-ca-file.

No ACL tests here: aiokafka 0.14's admin client has no ACL calls (test_security_confluent_kafka.py
and test_security_kafka_python.py cover the authorizer).

Bundled broker only: the Apache Kafka cluster of tests/kafka has no SASL listener (the fixtures
are parametrized "bundled", so the kafka1 label's `-k "not bundled"` leaves them out)."""
import asyncio
import functools
import time

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError
from aiokafka.helpers import create_ssl_context

import security_support
from conftest import async_wait_until, unique
# password(user); and the fixtures: the certificates and the module's brokers.
from security_support import certs, client_auth, secured, password  # noqa: F401

RECORDS = [(f"k{i}".encode(), f"value {i}".encode()) for i in range(5)]
EXPECTED = [(i, k, v) for i, (k, v) in enumerate(RECORDS)]



def synchronous(test):
    """Runs an async test in its own event loop (no pytest plugin needed)."""
    @functools.wraps(test)
    def run(*args, **kwargs):
        asyncio.run(test(*args, **kwargs))
    return run


def config(broker, protocol, mechanism="PLAIN", user="alice", secret=None, cafile=None,
           certfile=None, keyfile=None):
    """aiokafka's settings for `protocol` on `broker`'s listener of that protocol."""
    conf = {"bootstrap_servers": broker.listeners[protocol], "security_protocol": protocol}
    if protocol.startswith("SASL"):
        conf.update(sasl_mechanism=mechanism, sasl_plain_username=user,
                    sasl_plain_password=password(user) if secret is None else secret)
    if protocol.endswith("SSL"):
        conf["ssl_context"] = create_ssl_context(cafile=cafile, certfile=certfile,
                                                 keyfile=keyfile)
    return conf


async def round_trip(conf):
    admin = AIOKafkaAdminClient(**conf)
    await admin.start()
    try:
        topic = unique("sec")
        await admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        await admin.close()

    producer = AIOKafkaProducer(linger_ms=5, **conf)
    await producer.start()
    try:
        futures = [await producer.send(topic, key=k, value=v, partition=0) for k, v in RECORDS]
        assert [(await f).offset for f in futures] == [0, 1, 2, 3, 4]
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(group_id=unique("g"), auto_offset_reset="earliest",
                                enable_auto_commit=False, **conf)
    await consumer.start()
    read = []
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek(TopicPartition(topic, 0), 0)

        async def pump():
            for batch in (await consumer.getmany(timeout_ms=200)).values():
                read.extend((r.offset, r.key, r.value) for r in batch)

        await async_wait_until(lambda: len(read) >= len(RECORDS), lambda: f"read {read}", pump)
    finally:
        await consumer.stop()
    assert read == EXPECTED


async def fails_to_start(conf, caplog, why):
    """A producer with `conf` fails start() at once with "Unable to bootstrap", its log saying
    `why` it could not connect."""
    caplog.clear()
    producer = AIOKafkaProducer(request_timeout_ms=10_000, **conf)
    started = time.monotonic()
    try:
        with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
            await producer.start()
    finally:
        await producer.stop()
    assert time.monotonic() - started < 10
    assert why in caplog.text, caplog.text


# Over every listener and mechanism.

@pytest.mark.parametrize("protocol,mechanism", [
    ("SSL", None), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-512"), ("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-512")])
@synchronous
async def test_produce_consume(secured, certs, protocol, mechanism):
    await round_trip(config(secured, protocol, mechanism or "PLAIN", cafile=certs.ca))


@pytest.mark.parametrize("protocol,mechanism,says", [
    ("SASL_PLAINTEXT", "PLAIN", "Authentication failed: Invalid username or password"),
    ("SASL_PLAINTEXT", "SCRAM-SHA-256", "Authentication failed during authentication due to "
                                        "invalid credentials with SASL mechanism SCRAM-SHA-256"),
    ("SASL_SSL", "SCRAM-SHA-512", "Authentication failed during authentication due to "
                                  "invalid credentials with SASL mechanism SCRAM-SHA-512")])
@synchronous
async def test_wrong_password_is_sasl_authentication_failed(secured, certs, caplog, protocol,
                                                            mechanism, says):
    why = f"[Error 58] SaslAuthenticationFailed: {says}"
    await fails_to_start(config(secured, protocol, mechanism, secret="not-it", cafile=certs.ca),
                         caplog, why)
    await fails_to_start(config(secured, protocol, mechanism, user="mallory", secret="x",
                                cafile=certs.ca), caplog, why)


@synchronous
async def test_plaintext_client_on_the_tls_port(secured, certs, caplog):
    address = secured.listeners["SSL"]
    await fails_to_start({"bootstrap_servers": address}, caplog,
                         f"KafkaConnectionError: Connection at {address} closed")
    assert secured.alive()
    await round_trip(config(secured, "SSL", cafile=certs.ca))


@synchronous
async def test_server_certificate_from_another_ca_is_refused(secured, certs, caplog):
    for conf in (config(secured, "SSL", cafile=certs.wrong_ca),
                 config(secured, "SASL_SSL", "SCRAM-SHA-256", cafile=certs.wrong_ca)):
        await fails_to_start(conf, caplog, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
                                           "failed: unable to get local issuer certificate")


@synchronous
async def test_client_certificate(client_auth, certs, caplog):
    signed = {"certfile": certs.client, "keyfile": certs.client_key}
    await round_trip(config(client_auth, "SSL", cafile=certs.ca, **signed))
    await round_trip(config(client_auth, "SASL_SSL", "SCRAM-SHA-256", cafile=certs.ca, **signed))
    # Without a certificate, or with one another CA signed, the broker's TLS alert ends the
    # connection (aiokafka reports only that it closed).
    closed = f"KafkaConnectionError: Connection at {client_auth.listeners['SSL']} closed"
    await fails_to_start(config(client_auth, "SSL", cafile=certs.ca), caplog, closed)
    await fails_to_start(config(client_auth, "SSL", cafile=certs.ca, certfile=certs.stranger,
                                keyfile=certs.stranger_key), caplog, closed)
    assert client_auth.alive()
