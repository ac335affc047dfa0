"""Blocking calls release the GIL and Ctrl-C interrupts them.

No timing assertions: a call that ignored SIGINT would block for its
whole (long) timeout and the test would fail by not returning
KeyboardInterrupt."""

import os
import signal
import sys
import threading

import pytest

import exactly


def interrupt_soon(delay=0.3):
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_interrupts_a_blocking_poll(exactly_broker, topic):
    with exactly.Consumer(exactly_broker.bootstrap_servers, "sig",
                          topics=[topic]) as c:
        timer = interrupt_soon()
        with pytest.raises(KeyboardInterrupt):
            c.poll(timeout=600)  # nothing to read: would block 10 minutes
        timer.join()
        with pytest.raises(KeyboardInterrupt):
            timer = interrupt_soon()
            c.poll_batch(100, timeout=None)  # no limit at all
        timer.join()
        # The consumer still works afterwards.
        with exactly.Producer(exactly_broker.bootstrap_servers) as p:
            p.send(topic, b"after")
        m = None
        while m is None:
            m = c.poll(1.0)
        assert m.value == b"after"


def test_ctrl_c_interrupts_flush_and_future(exactly_broker, topic):
    p = exactly.Producer(exactly_broker.bootstrap_servers)
    p.send(topic, b"warm-up")
    p.flush()
    exactly_broker.faults.add_latency(30, "produce")  # responses held 30 s
    p.send(topic, b"slow")
    timer = interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        p.flush()
    timer.join()
    future = p.send_future(topic, b"slow too")
    timer = interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        future.result()
    timer.join()
    exactly_broker.faults.clear()
    with pytest.raises(exactly.KafkaError, match="not yet reported"):
        p.close(0)


def test_ctrl_c_interrupts_a_commit(exactly_broker, topic):
    p = exactly.TransactionalProducer(exactly_broker.bootstrap_servers,
                                      "sig-txn")
    exactly_broker.faults.add_latency(30, "end_txn")
    with pytest.raises(KeyboardInterrupt):
        with p.transaction() as txn:
            txn.send(topic, b"x")
            interrupt_soon(0.5)
    exactly_broker.faults.clear()
    p.close(0)


def test_the_gil_is_released_while_poll_blocks(exactly_broker, topic):
    # With a 2 s switch interval the main thread never hands the GIL over
    # while it runs Python (the few statements between polling.set() and
    # poll take microseconds): the counter can only move while poll blocks
    # with the GIL released. (Each hand-over back costs up to one interval:
    # the test takes 3-5 s.)
    ticks = [0]
    polling = threading.Event()
    finished = threading.Event()

    def count():
        polling.wait()
        while not finished.is_set():
            ticks[0] += 1

    with exactly.Consumer(exactly_broker.bootstrap_servers, "gil",
                          topics=[topic]) as c:
        counter = threading.Thread(target=count)
        counter.start()
        old = sys.getswitchinterval()
        sys.setswitchinterval(2)
        try:
            polling.set()
            before = ticks[0]
            c.poll(1.0)
            during = ticks[0] - before
        finally:
            finished.set()
            sys.setswitchinterval(old)
            counter.join()
    assert during > 0
