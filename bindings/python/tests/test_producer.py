"""The idempotent producer: keys/values, callbacks on the caller's thread,
futures without polling, batches, mocking."""

import concurrent.futures
import threading
import time
from unittest import mock

import pytest

import exactly
from conftest import read_committed


def test_bytes_str_and_buffers_as_keys_and_values(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send(topic, b"bytes", b"k1")
        p.send(topic, "str é", "k2")  # UTF-8
        p.send(topic, bytearray(b"bytearray"), memoryview(b"k3"))
        p.send(topic, None, b"tombstone")  # null value
        p.send(topic, b"", None)  # empty value, null key
        p.flush()
    records = exactly_broker.records(topic)
    assert [(r.key, r.value) for r in records] == [
        (b"k1", b"bytes"),
        (b"k2", "str é".encode()),
        (b"k3", b"bytearray"),
        (b"tombstone", None),
        (None, b""),
    ]


def test_wrong_types_are_refused(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        with pytest.raises(TypeError, match="value must be bytes"):
            p.send(topic, 42)
        with pytest.raises(TypeError, match="key must be bytes"):
            p.send(topic, b"v", key=3.5)
        with pytest.raises(TypeError, match="topic must be str"):
            p.send(None, b"v")


@pytest.mark.partitions(2)
def test_send_parses_its_arguments_like_a_python_function(exactly_broker,
                                                          topic):
    # send() is a hand-written CPython function (fast_send.cc): its
    # signature must behave like the documented one.
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send(topic=topic, value=b"kw", key=b"k", partition=0)
        p.send(topic, b"p1", partition=1, timestamp_ms=1_700_000_000_000)
        p.send(topic, None, b"tombstone", partition=0, headers=[("h", b"v")])
        with pytest.raises(TypeError, match="unexpected keyword argument "
                                            "'no_such'"):
            p.send(topic, b"v", no_such=1)
        with pytest.raises(TypeError, match="positional arguments"):
            p.send(topic, b"v", b"k", 1)
        with pytest.raises(TypeError, match="multiple values for argument "
                                            "'value'"):
            p.send(topic, b"v", value=b"w")
        with pytest.raises(TypeError, match="missing required argument "
                                            "'topic'"):
            p.send(value=b"v")
        with pytest.raises(TypeError, match="partition must be int"):
            p.send(topic, b"v", partition="1")
        with pytest.raises(OverflowError, match="partition"):
            p.send(topic, b"v", partition=1 << 40)
        p.flush()
        assert p.send.__name__ == "send"
    assert [(r.value, r.key, r.headers) for r in exactly_broker.records(
        topic, 0)] == [(b"kw", b"k", []), (None, b"tombstone", [("h", b"v")])]
    [p1] = exactly_broker.records(topic, 1)
    assert p1.value == b"p1" and p1.timestamp_ms == 1_700_000_000_000


@pytest.mark.partitions(3)
def test_headers_partition_timestamp(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send(topic, b"v1", partition=2, timestamp_ms=1234,
               headers=[("a", b"1"), ("b", None), ("a", "2")])
        p.send(topic, b"v2", partition=1, headers={"x": b"y"})
        p.flush()
    [r2] = exactly_broker.records(topic, 2)
    assert r2.timestamp_ms == 1234
    assert r2.headers == [("a", b"1"), ("b", None), ("a", b"2")]
    [r1] = exactly_broker.records(topic, 1)
    assert r1.headers == [("x", b"y")]
    [m] = [m for m in read_committed(exactly_broker.bootstrap_servers, topic,
                                     2) if m.partition == 2]
    assert m.header("a") == b"2" and m.header("missing") is None


def test_callbacks_run_on_the_callers_thread(exactly_broker, topic):
    caller = threading.get_ident()
    seen = []

    def on_delivery(error, report):
        seen.append((threading.get_ident(), error, report.offset,
                     report.value))

    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        for i in range(100):
            p.send(topic, str(i), on_delivery=on_delivery)
        p.flush()  # runs what is still pending, here
        assert len(seen) == 100
    assert {t for t, _, _, _ in seen} == {caller}
    assert all(error is None for _, error, _, _ in seen)
    assert [o for _, _, o, _ in seen] == list(range(100))
    assert [v for _, _, _, v in seen] == [str(i).encode() for i in range(100)]


def test_default_on_delivery_and_close_runs_pending(exactly_broker, topic):
    seen = []
    p = exactly.Producer(exactly_broker.bootstrap_servers,
                         on_delivery=lambda e, r: seen.append(r.offset))
    for i in range(10):
        p.send(topic, b"x")
    p.close()  # no flush, no poll: close delivers the callbacks
    assert sorted(seen) == list(range(10))
    assert p.closed
    with pytest.raises(exactly.StateError, match="closed"):
        p.flush()


def test_futures_complete_without_polling(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        futures = [p.send_future(topic, f"v{i}") for i in range(20)]
        reports = [f.result(timeout=60) for f in futures]
        assert [r.offset for r in reports] == list(range(20))
        assert reports[3].topic == topic and reports[3].partition == 0
        assert reports[3].value == b"v3"
        assert all(f.exception() is None for f in futures)
        assert not futures[0].cancel()  # a record cannot be unsent
        # concurrent.futures helpers work too.
        more = [p.send_future(topic, b"w") for _ in range(5)]
        done, _ = concurrent.futures.wait(more, timeout=60)
        assert len(done) == 5
        # Done-callbacks run once, when the future completes.
        f = p.send_future(topic, b"z")
        calls = []
        f.add_done_callback(calls.append)
        f.result()
        assert calls == [f]


def test_send_batch(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        assert p.send_batch(topic, [b"a", "b", (b"k", b"c"), ("k", None)]) \
            == 4
        assert p.send_batch(topic, (v for v in [b"d", b"e"])) == 2
        with pytest.raises(TypeError) as caught:
            p.send_batch(topic, [b"f", b"g", 7, b"h"])
        assert caught.value.sent == 2  # f and g were queued, 7 was not
        reports = []
        p.send_batch(topic, [b"i"], on_delivery=lambda e, r: reports.append(r))
        p.flush()
        assert [r.value for r in reports] == [b"i"]
    assert [(r.key, r.value) for r in exactly_broker.records(topic)] == [
        (None, b"a"), (None, b"b"), (b"k", b"c"), (b"k", None),
        (None, b"d"), (None, b"e"), (None, b"f"), (None, b"g"),
        (None, b"i")]


@pytest.mark.partitions(4)
def test_send_batch_puts_each_keyless_chunk_in_one_partition(exactly_broker,
                                                             topic):
    # Keyless records without a partition go chunk by chunk (1,024 records)
    # to one partition chosen at random, as Kafka's sticky partitioner does;
    # keyed records still follow their key.
    chunk = 1024
    values = [b"v%d" % i for i in range(16 * chunk)]
    keyed = [(b"key-%d" % (i % 7), b"k%d" % i) for i in range(700)]
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        assert p.send_batch(topic, values) == len(values)
        assert p.send_batch(topic, keyed) == len(keyed)
        p.flush()
    where = {}  # value -> (partition, position in it)
    key_partitions = {}
    for q in range(4):
        for position, r in enumerate(exactly_broker.records(topic, q)):
            assert r.value not in where, "a record arrived twice"
            where[r.value] = (q, position)
            if r.key is not None:
                key_partitions.setdefault(r.key, set()).add(q)
    assert len(where) == len(values) + len(keyed), "a record is missing"
    used = set()
    for c in range(16):
        spots = [where[v] for v in values[c * chunk:(c + 1) * chunk]]
        partitions = {q for q, _ in spots}
        assert len(partitions) == 1, f"chunk {c} split over {partitions}"
        positions = [pos for _, pos in spots]
        assert positions == list(range(positions[0], positions[0] + chunk))
        used |= partitions
    # 16 chunks all landing in one of 4 partitions: p = 4 ** -15.
    assert len(used) > 1
    assert all(len(qs) == 1 for qs in key_partitions.values())
    assert len(key_partitions) == 7


@pytest.mark.partitions(3)
def test_close_from_another_thread_while_send_batch_waits(exactly_broker,
                                                           topic):
    # send_batch waits for room (and asks for metadata) with the GIL
    # released; a close() from another thread meanwhile must wait for it,
    # not destroy the handles under it. The sender then raises, and close
    # has flushed every record queued before: each is in the log once.
    exactly_broker.faults.add_latency(0.05)
    values = [b"%d" % i for i in range(50_000)]
    p = exactly.Producer(exactly_broker.bootstrap_servers,
                         queue_buffering_max_messages=500)
    outcome = []

    def sender():
        try:
            outcome.append(p.send_batch(topic, values))
        except exactly.Error as e:
            outcome.append(e)

    t = threading.Thread(target=sender)
    t.start()
    time.sleep(0.3)
    p.close(timeout=30)
    t.join(60)
    assert not t.is_alive()
    assert len(outcome) == 1
    if isinstance(outcome[0], int):
        queued = outcome[0]  # it finished before the close
    else:
        assert "closed" in str(outcome[0])
        queued = outcome[0].sent
    assert 0 < queued <= len(values)
    exactly_broker.faults.clear()
    logged = [r.value for q in range(3)
              for r in exactly_broker.records(topic, q)]
    assert sorted(logged, key=int) == values[:queued]


def test_poll_runs_callbacks(exactly_broker, topic):
    seen = []
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send(topic, b"x", on_delivery=lambda e, r: seen.append(r))
        ran = 0
        while ran == 0:
            ran = p.poll(1.0)
        assert ran == 1 and len(seen) == 1
        assert p.poll(0) == 0


def test_callback_exception_propagates_to_the_caller(exactly_broker, topic):
    def bad(error, report):
        raise ZeroDivisionError("in callback")

    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        p.send(topic, b"x", on_delivery=bad)
        with pytest.raises(ZeroDivisionError, match="in callback"):
            p.flush()
        p.flush()  # raised once; the producer goes on
        stats = p.stats()
        assert stats.delivered == 1 and stats.failed == 0


def test_idempotence_under_dropped_responses(exactly_broker, topic):
    """The broker appends, then drops the response: librdkafka retries, and
    the broker's dedup keeps every record exactly once."""
    exactly_broker.faults.drop_produce_responses(count=5, one_in=2)
    with exactly.Producer(exactly_broker.bootstrap_servers, linger_ms=1) as p:
        for i in range(2000):
            p.send(topic, str(i))
            if i % 200 == 0:
                p.flush()
        p.flush()
        assert p.stats().delivered == 2000
    values = [r.value for r in exactly_broker.records(topic)]
    assert values == [str(i).encode() for i in range(2000)]
    assert any("drop" in h.lower() for h in exactly_broker.faults.history())


def test_producer_class_is_mockable():
    producer = mock.create_autospec(exactly.Producer, instance=True)
    producer.send("orders", b"v")
    producer.send.assert_called_once_with("orders", b"v")
    with pytest.raises(TypeError):
        producer.send("orders", b"v", no_such_argument=1)  # autospec'd
    with mock.patch.object(exactly.Producer, "send") as send:
        exactly.Producer.send("orders", b"v")
        send.assert_called_once_with("orders", b"v")
    fake = mock.create_autospec(exactly.TransactionalProducer, instance=True)
    with fake.transaction() as txn:
        txn.send("orders", b"v")
    fake.transaction.assert_called_once_with()
    assert issubclass(exactly.Producer, object) and \
        type(exactly.Producer) is type  # a plain Python class


def test_config_passes_through(exactly_broker, topic):
    # librdkafka names in a dict, or keywords with underscores for dots.
    with exactly.Producer(exactly_broker.bootstrap_servers,
                          config={"linger.ms": 1, "client.id": "c1"},
                          compression_type="lz4",
                          enable_idempotence=True) as p:
        p.send(topic, b"x" * 1000)
        p.flush()
    [batch] = exactly_broker.read_log(topic, 0)
    assert batch.compression == "lz4"
    with pytest.raises(exactly.ConfigError, match="set twice"):
        exactly.Producer(exactly_broker.bootstrap_servers,
                         config={"linger.ms": 1}, linger_ms=2)


def test_send_batch_keeps_order_through_a_full_queue(exactly_broker, topic):
    # Batches much larger than librdkafka's queue: send_batch waits for room
    # and goes on where it stopped, in order, each record once.
    values = [str(i).encode() for i in range(20_000)]
    with exactly.Producer(exactly_broker.bootstrap_servers,
                          queue_buffering_max_messages=500) as p:
        assert p.send_batch(topic, values) == len(values)
        mixed = [("k", bytearray(b"ba")), (memoryview(b"mv"), "str"), None,
                 b""]
        assert p.send_batch(topic, mixed) == 4
        with pytest.raises(exactly.KafkaError) as caught:
            p.send_batch(topic, [b"ok", b"x" * 2_000_000, b"never"])
        assert caught.value.name == "MSG_SIZE_TOO_LARGE"
        assert caught.value.sent == 1
        p.send_batch(topic, [b"p0"] * 3, partition=0)
        p.flush()
        assert p.stats().delivered == len(values) + 4 + 1 + 3
    records = exactly_broker.records(topic)
    assert [r.value for r in records[:len(values)]] == values
    assert [(r.key, r.value) for r in records[len(values):]] == [
        (b"k", b"ba"), (b"mv", b"str"), (None, None), (None, b""),
        (None, b"ok"), (None, b"p0"), (None, b"p0"), (None, b"p0")]
