"""The consumer: poll, batches, iteration, commit, rebalance callbacks."""

import threading

import pytest

import exactly


def fill(broker, topic, n, partitions=1):
    """n records, over `partitions` partitions of the topic (made by the
    `topic` fixture: its `partitions` marker says how many)."""
    with exactly.Producer(broker.bootstrap_servers) as p:
        for i in range(n):
            p.send(topic, f"v{i}", key=f"k{i}",
                   partition=i % partitions if partitions > 1 else -1)


def test_poll_returns_messages(exactly_broker, topic):
    fill(exactly_broker, topic, 3)
    with exactly.Consumer(exactly_broker.bootstrap_servers, "g",
                          topics=topic) as c:
        got = []
        while len(got) < 3:
            m = c.poll(1.0)
            if m is not None:
                got.append(m)
        m = got[1]
        assert (m.topic, m.partition, m.offset) == (topic, 0, 1)
        assert (m.key, m.value) == (b"k1", b"v1")
        assert m.timestamp_ms > 0 and m.headers == []
        assert m.topic_partition == exactly.TopicPartition(topic, 0)
        assert m.next_offset() == exactly.TopicPartitionOffset(topic, 0, 2)
        assert "offset=1" in repr(m)
        assert c.poll(0.2) is None


def test_batches_iteration_and_commit(exactly_broker, topic):
    fill(exactly_broker, topic, 50)
    servers = exactly_broker.bootstrap_servers
    with exactly.Consumer(servers, "batches", topics=[topic]) as c:
        got = []
        for batch in c.batches(max_records=20, timeout=0.5):
            assert 0 < len(batch) <= 20
            got.extend(batch)
            if len(got) >= 30:
                break
        c.commit()  # the position after every record returned so far
        assert exactly_broker.committed_offset("batches", topic) == len(got)
        assert c.committed() == [exactly.TopicPartitionOffset(topic, 0,
                                                              len(got))]
        assert c.position() == [exactly.TopicPartitionOffset(topic, 0,
                                                             len(got))]
    # A new member of the group resumes after the commit; iteration.
    with exactly.Consumer(servers, "batches", topics=[topic]) as c:
        rest = []
        for m in c:
            rest.append(m)
            if m.offset == 49:
                break
        assert [m.offset for m in rest] == list(range(len(got), 50))
        c.commit(rest[-1])  # a message: commits the offset after it
    assert exactly_broker.committed_offset("batches", topic) == 50


def test_async_commit_callback_runs_in_poll(exactly_broker, topic):
    fill(exactly_broker, topic, 5)
    results = []
    with exactly.Consumer(exactly_broker.bootstrap_servers, "async",
                          topics=[topic]) as c:
        got = []
        while len(got) < 5:
            got.extend(c.poll_batch(10, timeout=1.0))
        c.commit(asynchronous=True, on_commit=lambda e: results.append(
            (e, threading.get_ident())))
        while not results:
            c.poll(0.1)
        assert results == [(None, threading.get_ident())]
        c.commit([(topic, 0, 3)])  # explicit offsets
    assert exactly_broker.committed_offset("async", topic) == 3


@pytest.mark.partitions(2)
def test_rebalance_callbacks_on_the_polling_thread(exactly_broker, topic):
    fill(exactly_broker, topic, 4, partitions=2)
    events = []

    def on_assign(partitions):
        events.append(("assign", sorted(partitions),
                       threading.get_ident()))

    def on_revoke(partitions):
        events.append(("revoke", sorted(partitions),
                       threading.get_ident()))

    c = exactly.Consumer(exactly_broker.bootstrap_servers, "rb",
                         topics=[topic], on_assign=on_assign,
                         on_revoke=on_revoke)
    got = []
    while len(got) < 4:
        got.extend(c.poll_batch(10, timeout=1.0))
    assert sorted(c.assignment()) == [exactly.TopicPartition(topic, 0),
                                      exactly.TopicPartition(topic, 1)]
    c.close()
    me = threading.get_ident()
    parts = [exactly.TopicPartition(topic, 0),
             exactly.TopicPartition(topic, 1)]
    assert events == [("assign", parts, me), ("revoke", parts, me)]


def test_exception_in_listener_is_raised_by_poll(exactly_broker, topic):
    fill(exactly_broker, topic, 3)

    def on_assign(partitions):
        raise LookupError("from on_assign")

    with exactly.Consumer(exactly_broker.bootstrap_servers, "raise",
                          topics=[topic], on_assign=on_assign) as c:
        with pytest.raises(LookupError, match="from on_assign"):
            while True:
                c.poll(1.0)
        # Nothing was lost: every record still comes, in order.
        got = []
        while len(got) < 3:
            got.extend(c.poll_batch(10, timeout=1.0))
        assert [m.value for m in got] == [b"v0", b"v1", b"v2"]


def test_seek(exactly_broker, topic):
    fill(exactly_broker, topic, 5)
    with exactly.Consumer(exactly_broker.bootstrap_servers, "seek",
                          topics=[topic]) as c:
        got = []
        while len(got) < 5:
            got.extend(c.poll_batch(10, timeout=1.0))
        c.seek(topic, 0, 2)
        again = []
        while len(again) < 3:
            again.extend(c.poll_batch(10, timeout=1.0))
        assert [m.offset for m in again] == [2, 3, 4]
        c.seek(topic, 0, exactly.OFFSET_BEGINNING)
        m = None
        while m is None:
            m = c.poll(1.0)
        assert m.offset == 0


def test_closed_consumer(exactly_broker, topic):
    c = exactly.Consumer(exactly_broker.bootstrap_servers, "closed",
                         topics=[topic])
    c.close()
    c.close()  # later calls do nothing
    assert c.closed
    with pytest.raises(exactly.StateError, match="closed"):
        c.poll(0)
    assert list(c) == []  # iteration ends
