"""Transactions from Python: the context manager, transact(), offsets,
fencing."""

import threading

import pytest

import exactly
from conftest import read_committed


def values(messages):
    return [m.value for m in messages]


def test_context_manager_commits_and_aborts(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.TransactionalProducer(servers, "t1") as p:
        with p.transaction() as txn:
            for i in range(3):
                txn.send(topic, key=b"k", value=f"a{i}".encode())
        with pytest.raises(ValueError, match="changed my mind"):
            with p.transaction() as txn:
                for i in range(3):
                    txn.send(topic, key=b"k", value=f"b{i}".encode())
                p.flush()  # the aborted records did reach the log
                raise ValueError("changed my mind")
        assert not p.in_transaction
        with p.transaction() as txn:
            txn.send(topic, key="k", value="c0")  # str is sent as UTF-8
        stats = p.transaction_stats()
        assert (stats.committed, stats.aborted) == (2, 1)

    # read_committed sees the committed records only, in order.
    got = read_committed(servers, topic, 4)
    assert values(got) == [b"a0", b"a1", b"a2", b"c0"]
    # The aborted records are in the log, behind an ABORT marker.
    log = exactly_broker.read_log(topic, 0)
    assert [r.value for b in log if not b.control for r in b.records] == \
        [b"a0", b"a1", b"a2", b"b0", b"b1", b"b2", b"c0"]
    assert [b.commit_marker for b in log if b.control] == [True, False, True]
    assert values(exactly_broker.committed_records(topic)) == \
        [b"a0", b"a1", b"a2", b"c0"]


def test_read_uncommitted_would_see_the_aborted(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.TransactionalProducer(servers, "t2") as p:
        with pytest.raises(RuntimeError):
            with p.transaction() as txn:
                txn.send(topic, value=b"aborted")
                p.flush()  # in the log before the abort
                raise RuntimeError
        with p.transaction() as txn:
            txn.send(topic, value=b"committed")
    assert [r.value for r in exactly_broker.records(topic)] == \
        [b"aborted", b"committed"]
    assert values(read_committed(servers, topic, 1)) == [b"committed"]


def test_abortable_commit_error_aborts_and_raises(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.TransactionalProducer(servers, "t3") as p:
        exactly_broker.faults.fail_requests("produce",
                                            "MESSAGE_TOO_LARGE",
                                            topic=topic)
        with pytest.raises(exactly.KafkaError) as caught:
            with p.transaction() as txn:
                txn.send(topic, value=b"lost")
        assert caught.value.txn_requires_abort
        assert not caught.value.fatal
        assert not p.in_transaction  # aborted by the with block
        # The usual loop around a with block: run it again while the error
        # says abort-and-retry (librdkafka may need one more abort to bump
        # the producer epoch after a failed batch).
        for attempt in range(5):
            try:
                with p.transaction() as txn:
                    txn.send(topic, value=b"kept")
                break
            except exactly.KafkaError as error:
                assert error.txn_requires_abort, error
    assert values(exactly_broker.committed_records(topic)) == [b"kept"]


def test_transact_reruns_after_an_abortable_error(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    runs = []

    def work(txn, n):
        runs.append(threading.get_ident())
        for i in range(n):
            txn.send(topic, key=str(i), value=f"v{i}")
        return "done"

    retry = exactly.RetryPolicy(initial_backoff=0.01)
    with exactly.TransactionalProducer(servers, "t4", retry=retry) as p:
        exactly_broker.faults.fail_requests("produce",
                                            "MESSAGE_TOO_LARGE",
                                            topic=topic)
        assert p.transact(work, 5) == "done"
        # Run again after each abort (once or twice: librdkafka may need a
        # second abort to bump the epoch), always on this thread.
        reruns = p.transaction_stats().reruns
        assert reruns >= 1 and len(runs) == reruns + 1
        assert set(runs) == {threading.get_ident()}
        assert p.transaction_stats().committed == 1
    # Exactly one run's records are visible, each once.
    assert values(exactly_broker.committed_records(topic)) == \
        [f"v{i}".encode() for i in range(5)]


def test_transact_gives_up_after_max_attempts(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    retry = exactly.RetryPolicy(max_attempts=2, initial_backoff=0.01)
    with exactly.TransactionalProducer(servers, "t5", retry=retry) as p:
        exactly_broker.faults.fail_requests("produce",
                                            "MESSAGE_TOO_LARGE", -1,
                                            topic=topic)
        with pytest.raises(exactly.KafkaError, match="2 times") as caught:
            p.transact(lambda txn: txn.send(topic, value=b"x"))
        assert caught.value.txn_requires_abort, caught.value
        exactly_broker.faults.clear()
    assert exactly_broker.committed_records(topic) == []


def test_user_exception_in_transact_aborts_once(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    calls = []
    with exactly.TransactionalProducer(servers, "t6") as p:
        def boom(txn):
            calls.append(1)
            txn.send(topic, value=b"no")
            raise KeyError("mine")
        with pytest.raises(KeyError):
            p.transact(boom)
        assert calls == [1] and not p.in_transaction
    assert exactly_broker.committed_records(topic) == []


def test_consume_transform_produce_with_offsets(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    out_topic = topic + "-out"
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [f"in{i}" for i in range(10)])
    with exactly.Consumer(servers, "ctp", topics=[topic]) as consumer, \
            exactly.TransactionalProducer(servers, "ctp-1") as producer:
        seen = []
        while len(seen) < 10:
            batch = consumer.poll_batch(10, timeout=1.0)
            if not batch:
                continue
            with producer.transaction() as txn:
                for m in batch:
                    txn.send(out_topic, key=m.key, value=m.value.upper())
                txn.send_offsets([m.next_offset() for m in batch[-1:]],
                                 consumer)
            seen.extend(batch)
    assert exactly_broker.committed_offset("ctp", topic, 0) == 10
    assert values(exactly_broker.committed_records(out_topic)) == \
        [f"IN{i}".encode() for i in range(10)]


def test_fencing_is_fatal_and_final(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    old = exactly.TransactionalProducer(servers, "fenced-id")
    with old.transaction() as txn:
        txn.send(topic, value=b"old")
    new = exactly.TransactionalProducer(servers, "fenced-id")  # fences old
    with pytest.raises(exactly.KafkaError) as caught:
        with old.transaction() as txn:
            txn.send(topic, value=b"zombie")
    assert caught.value.fatal and caught.value.fenced
    assert not caught.value.retriable
    with pytest.raises(exactly.StateError, match="fenced"):
        old.rebuild()
    with new.transaction() as txn:
        txn.send(topic, value=b"new")
    new.close()
    old.close()
    assert values(exactly_broker.committed_records(topic)) == [b"old", b"new"]


def test_hold_transaction_markers_and_restart(exactly_broker_factory, topic,
                                              tmp_path):
    broker = exactly_broker_factory(data_dir=str(tmp_path / "data"))
    servers = broker.bootstrap_servers
    p = exactly.TransactionalProducer(servers, "held")
    broker.faults.hold_transaction_markers(1)
    with p.transaction() as txn:
        txn.send(topic, value=b"held")
    # Committed (EndTxn answered) but the marker is not written yet.
    assert not any(b.control for b in broker.read_log(topic, 0))
    assert broker.committed_records(topic) == []
    broker.restart("crash")
    # The restarted coordinator finishes the commit.
    got = read_committed(servers, topic, 1)
    assert values(got) == [b"held"]
    assert any("hold" in h.lower() for h in broker.faults.history())
    p.close()
