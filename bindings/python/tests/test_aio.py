"""exactly.aio: the asyncio clients, against the bundled broker. Each test
is a coroutine run by asyncio.run (no pytest-asyncio needed). Waits carry
generous guards (GUARD seconds) against hanging, never timing asserts."""

import asyncio
import threading

import pytest

import exactly
import exactly.aio
from conftest import read_committed

GUARD = 60.0


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, GUARD))


class Ticker:
    """Counts the turns a concurrent task gets while something else is
    awaited: zero means the awaited call held the loop."""

    def __init__(self):
        self.ticks = 0
        self._task = asyncio.ensure_future(self._run())

    async def _run(self):
        while True:
            await asyncio.sleep(0.001)
            self.ticks += 1

    def stop(self):
        self._task.cancel()
        return self.ticks


def test_send_resolves_with_the_report_without_any_other_call(
        exactly_broker, topic):
    async def main():
        p = exactly.aio.Producer(exactly_broker.bootstrap_servers)
        # Nothing calls into the producer while these are awaited: only the
        # loop's reader on the eventfd can complete them.
        reports = await asyncio.gather(
            *(p.send(topic, key="k", value=f"v{i}") for i in range(500)))
        await p.close()
        return reports

    reports = run(main())
    assert [r.value for r in reports] == [f"v{i}".encode() for i in range(500)]
    assert {r.topic for r in reports} == {topic}
    assert [r.offset for r in reports] == list(range(500))  # one partition
    assert [r.value for r in exactly_broker.records(topic)] == \
        [f"v{i}".encode() for i in range(500)]


def test_futures_complete_on_the_loop_thread(exactly_broker, topic):
    async def main():
        loop_thread = threading.get_ident()
        seen = []
        async with exactly.aio.Producer(exactly_broker.bootstrap_servers) as p:
            futures = [p.send_future(topic, value=b"x") for _ in range(50)]
            for f in futures:
                f.add_done_callback(lambda _: seen.append(threading.get_ident()))
            reports = await asyncio.gather(*futures)
        return loop_thread, seen, reports

    loop_thread, seen, reports = run(main())
    assert seen == [loop_thread] * 50
    assert sorted(r.offset for r in reports) == list(range(50))


def test_a_failed_delivery_raises_from_the_await(exactly_broker, topic):
    exactly_broker.faults.fail_requests("produce", "MESSAGE_TOO_LARGE",
                                        topic=topic)

    async def main():
        async with exactly.aio.Producer(exactly_broker.bootstrap_servers) as p:
            with pytest.raises(exactly.KafkaError) as caught:
                await p.send(topic, b"refused")
            report = await p.send(topic, b"accepted")
        return caught.value, report

    error, report = run(main())
    assert error.name == "MSG_SIZE_TOO_LARGE" and not error.retriable
    assert report.value == b"accepted"
    assert [r.value for r in exactly_broker.records(topic)] == [b"accepted"]


def test_a_full_queue_waits_without_blocking_the_loop(exactly_broker, topic):
    # Room for 2 records in librdkafka's queue, and a slow broker: most
    # sends find the queue full, wait on the loop (sleeping) and go later.
    exactly_broker.faults.add_latency(0.02, "produce")

    async def main():
        async with exactly.aio.Producer(exactly_broker.bootstrap_servers,
                                        queue_buffering_max_messages=2) as p:
            ticker = Ticker()
            reports = await p.send_batch(topic, [f"v{i}" for i in range(40)])
            return reports, ticker.stop()

    reports, ticks = run(main())
    assert [r.value for r in reports] == [f"v{i}".encode() for i in range(40)]
    assert [r.offset for r in reports] == list(range(40))
    assert ticks > 0


def test_flush_runs_off_the_loop(exactly_broker, topic):
    # The broker holds produce responses for 0.5 s: a flush on the loop's
    # thread would keep the ticker from running at all until it returned.
    exactly_broker.faults.add_latency(0.5, "produce")

    async def main():
        async with exactly.aio.Producer(exactly_broker.bootstrap_servers) as p:
            future = p.send_future(topic, b"slow")
            ticker = Ticker()
            await p.flush()
            ticks = ticker.stop()
            # The flush ran the report's completion on the worker thread,
            # which handed it to the loop.
            report = await future
        return ticks, report

    ticks, report = run(main())
    assert ticks > 0
    assert report.value == b"slow"


def test_transaction_commits_and_aborts(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers

    async def main():
        p = await exactly.aio.TransactionalProducer.create(servers, "aio-t1")
        async with p.transaction() as txn:
            for i in range(3):
                await txn.send(topic, key="k", value=f"a{i}")
        with pytest.raises(ValueError, match="changed my mind"):
            async with p.transaction() as txn:
                await txn.send(topic, key="k", value="b0")
                await p.flush()  # in the log before the abort
                raise ValueError("changed my mind")
        assert not p.in_transaction
        async with p.transaction() as txn:
            await txn.send(topic, key="k", value="c0")
        stats = p.transaction_stats()
        await p.close()
        return stats

    stats = run(main())
    assert (stats.committed, stats.aborted) == (2, 1)
    assert [r.value for r in exactly_broker.records(topic)] == \
        [b"a0", b"a1", b"a2", b"b0", b"c0"]
    assert [r.value for r in exactly_broker.committed_records(topic)] == \
        [b"a0", b"a1", b"a2", b"c0"]


def test_transaction_is_aborted_when_its_task_is_cancelled(exactly_broker,
                                                           topic):
    servers = exactly_broker.bootstrap_servers

    async def main():
        p = await exactly.aio.TransactionalProducer.create(servers, "aio-t2")
        entered = asyncio.Event()

        async def writer():
            async with p.transaction() as txn:
                await txn.send(topic, value=b"never committed")
                entered.set()
                await asyncio.sleep(3600)

        task = asyncio.ensure_future(writer())
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        in_txn = p.in_transaction
        async with p.transaction() as txn:
            await txn.send(topic, value=b"committed")
        await p.close()
        return in_txn

    assert run(main()) is False
    assert [r.value for r in exactly_broker.committed_records(topic)] == \
        [b"committed"]


def test_transact_reruns_after_an_abortable_error(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    runs = []

    async def body(txn, n):
        runs.append(n)
        for i in range(n):
            await txn.send(topic, key=str(i), value=f"v{i}")
        return "done"

    async def main():
        p = await exactly.aio.TransactionalProducer.create(
            servers, "aio-t3",
            retry=exactly.RetryPolicy(initial_backoff=0.01))
        exactly_broker.faults.fail_requests("produce", "MESSAGE_TOO_LARGE",
                                            topic=topic)
        try:
            return await p.transact(body, 5), p.transaction_stats()
        finally:
            await p.close()

    result, stats = run(main())
    assert result == "done"
    # Run again after each abort (librdkafka may need a second abort).
    assert stats.reruns >= 1 and len(runs) == stats.reruns + 1
    assert stats.committed == 1
    assert [r.value for r in exactly_broker.committed_records(topic)] == \
        [f"v{i}".encode() for i in range(5)]


def test_consumer_async_for_and_commit(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [f"v{i}" for i in range(20)])

    async def main():
        got = []
        async with exactly.aio.Consumer(servers, "aio-g1",
                                        topics=[topic]) as c:
            ticker = Ticker()
            async for message in c:
                got.append(message.value)
                if len(got) == 15:
                    await c.commit(message)
                    break
            ticks = ticker.stop()
        return got, ticks

    got, ticks = run(main())
    assert got == [f"v{i}".encode() for i in range(15)]
    assert ticks > 0  # the group join and fetches did not hold the loop
    assert exactly_broker.committed_offset("aio-g1", topic) == 15
    # The next member of the group starts after the committed offset.
    rest = read_committed(servers, topic, 5, group="aio-g1")
    assert [m.value for m in rest] == [f"v{i}".encode() for i in range(15, 20)]


def test_a_cancelled_poll_loses_no_record(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [f"v{i}" for i in range(50)])

    async def main():
        got = []
        async with exactly.aio.Consumer(servers, "aio-g2",
                                        topics=[topic]) as c:
            orphaned = 0
            # Cancel polls until one is cancelled while its fetch on the
            # worker returns a record: that record must come next.
            while len(got) < 50:
                task = asyncio.ensure_future(c.poll())
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                task.cancel()
                try:
                    # A poll can finish before the cancellation reaches it
                    # (a slow machine, TSan): then its record is simply next.
                    got.append((await task).value)
                    continue
                except asyncio.CancelledError:
                    pass
                # What the cancelled poll fetched is kept: fetched just
                # before the cancellation reached it, or still in flight.
                if c._ready:
                    orphaned += 1
                inflight = c._inflight
                if inflight is not None:
                    await asyncio.wait([inflight])
                    if (not inflight.cancelled() and
                            inflight.exception() is None and
                            inflight.result()):
                        orphaned += 1
                message = await c.poll()
                got.append(message.value)
            await c.commit()
        return got, orphaned

    got, orphaned = run(main())
    assert got == [f"v{i}".encode() for i in range(50)]
    assert orphaned > 0  # the case under test did happen
    assert exactly_broker.committed_offset("aio-g2", topic) == 50


@pytest.mark.skipif(not exactly._exactly.has_spool,
                    reason="built without the spool")
def test_spool_send_resolves_once_durable(exactly_broker, topic, tmp_path):
    servers = exactly_broker.bootstrap_servers

    async def main():
        s = await exactly.aio.SpooledProducer.create(
            str(tmp_path / "spool"), servers, "aio-spool-1")
        await asyncio.gather(*(s.send(topic, key="k", value=f"v{i}",
                                      cursor=f"c{i}") for i in range(100)))
        appended = s.metrics().appended
        await s.send_batch(topic, [("k", f"w{i}") for i in range(10)],
                           cursor="batch")
        await s.flush()
        left = await s.close()
        return appended, left

    appended, left = run(main())
    assert appended == 100 and left == 0
    values = [r.value for r in exactly_broker.committed_records(topic)]
    assert sorted(values[:100]) == sorted(f"v{i}".encode()
                                          for i in range(100))
    assert values[100:] == [f"w{i}".encode() for i in range(10)]

    async def reopen():
        s = await exactly.aio.SpooledProducer.create(
            str(tmp_path / "spool"), servers, "aio-spool-1")
        cursor = s.recovered_cursor
        await s.close()
        return cursor

    assert run(reopen()) == "batch"  # the cursor of the last record spooled


def test_processor_runs_off_the_loop(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [(f"k{i}", f"v{i}") for i in range(100)])
    out = topic + "-out"
    threads = set()

    def transform(message, emitter):
        threads.add(threading.get_ident())
        emitter.send(out, key=message.key, value=message.value.upper())

    async def main():
        loop_thread = threading.get_ident()
        p = await exactly.aio.Processor.create(
            servers, group_id="aio-proc", input_topics=topic,
            transactional_id="aio-proc-1", transform=transform)
        async with p:
            ticker = Ticker()
            while p.stats().records_in < 100:
                await p.run_once()
            ticks = ticker.stop()
        return loop_thread, ticks

    loop_thread, ticks = run(main())
    assert ticks > 0
    assert threads and loop_thread not in threads
    assert [r.value for r in exactly_broker.committed_records(out)] == \
        [f"V{i}".encode() for i in range(100)]
    assert exactly_broker.committed_offset("aio-proc", topic) == 100
