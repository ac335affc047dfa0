"""exactly.aio: the asyncio clients, against the bundled broker. Each test
is a coroutine run by asyncio.run (no pytest-asyncio needed). Waits carry
generous guards (GUARD seconds) against hanging, never timing asserts."""

import asyncio
import importlib.util
import os
import subprocess
import sys
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


class _CountingNative:
    """The producer's native client, counting the sends it is handed."""

    def __init__(self, native):
        self._native = native
        self.sent = 0

    def send_future(self, *args):
        self.sent += 1
        return self._native.send_future(*args)

    def __getattr__(self, name):
        return getattr(self._native, name)


def test_a_gather_of_10000_sends_is_handed_over_in_slices(exactly_broker,
                                                          topic):
    n = 10000

    async def main():
        loop = asyncio.get_running_loop()
        p = exactly.aio.Producer(exactly_broker.bootstrap_servers)
        await p.send(topic, value=b"first")  # connected
        counting = _CountingNative(p._native)
        p._native = counting
        per_turn = []
        last = [0]

        def turn():  # runs once per turn of the loop
            per_turn.append(counting.sent - last[0])
            last[0] = counting.sent
            if counting.sent < n:
                loop.call_soon(turn)

        loop.call_soon(turn)
        reports = await asyncio.gather(
            *(p.send(topic, value=f"v{i}") for i in range(n)))
        await p.close()
        return reports, per_turn

    reports, per_turn = run(main())
    # Between two runs of `turn` lie parts of two turns, each with at most
    # SEND_SLICE sends.
    assert max(per_turn) <= 2 * exactly.aio.SEND_SLICE
    assert len([c for c in per_turn if c]) >= n // (2 * exactly.aio.SEND_SLICE)
    # In the order of the gather (one partition).
    assert [r.value for r in reports] == [f"v{i}".encode() for i in range(n)]
    assert [r.offset for r in reports] == list(range(1, n + 1))


def test_a_send_cancelled_while_waiting_its_turn_is_not_sent(exactly_broker,
                                                             topic):
    async def main():
        p = exactly.aio.Producer(exactly_broker.bootstrap_servers)
        slice_ = exactly.aio.SEND_SLICE
        tasks = [asyncio.ensure_future(p.send(topic, value=f"v{i}"))
                 for i in range(slice_ + 10)]
        await asyncio.sleep(0)  # every task began: the last 10 wait
        for task in tasks[slice_:slice_ + 5]:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await p.close()
        return results

    results = run(main())
    slice_ = exactly.aio.SEND_SLICE
    cancelled = [i for i, r in enumerate(results)
                 if isinstance(r, asyncio.CancelledError)]
    assert cancelled == list(range(slice_, slice_ + 5))
    sent = [f"v{i}".encode() for i in range(slice_ + 10)
            if i not in cancelled]
    assert [r.value for r in exactly_broker.records(topic)] == sent


def test_transaction_sends_of_one_gather_are_handed_over_in_slices(
        exactly_broker, topic):
    n = 2000

    async def main():
        tp = await exactly.aio.TransactionalProducer.create(
            exactly_broker.bootstrap_servers, "aio-txn-slices")
        async with tp.transaction() as txn:
            await asyncio.gather(*(txn.send(topic, value=f"v{i}")
                                   for i in range(n)))
        await tp.close()

    run(main())
    assert [r.value for r in exactly_broker.committed_records(topic)] == \
        [f"v{i}".encode() for i in range(n)]


def test_commit_completes_through_the_loop(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [f"v{i}" for i in range(30)])

    async def main():
        got = []
        async with exactly.aio.Consumer(servers, "aio-g3",
                                        topics=[topic]) as c:
            calls = []
            sync_commit = c._sync.commit

            def commit(offsets=None, **kwargs):
                calls.append(kwargs)
                return sync_commit(offsets, **kwargs)

            c._sync.commit = commit
            async for message in c:
                got.append(message.value)
                if len(got) == 10:
                    break
            await c.commit()  # nothing polls meanwhile but the commit
            first = exactly_broker.committed_offset("aio-g3", topic)
            while len(got) < 20:
                got.append((await c.poll()).value)
            await c.commit([exactly.TopicPartitionOffset(topic, 0, 15)])
            second = exactly_broker.committed_offset("aio-g3", topic)
            # The records the commit's polls fetched come next.
            while len(got) < 30:
                got.append((await c.poll()).value)
            await c.commit()
        return got, calls, first, second

    got, calls, first, second = run(main())
    assert got == [f"v{i}".encode() for i in range(30)]
    assert first == 10 and second == 15
    assert calls and all(k.get("asynchronous") for k in calls)
    assert exactly_broker.committed_offset("aio-g3", topic) == 30


def test_commit_after_a_cancelled_poll_covers_only_returned_records(
        exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [f"v{i}" for i in range(20)])

    async def main():
        got = []
        committed = []
        async with exactly.aio.Consumer(servers, "aio-g5",
                                        topics=[topic]) as c:
            got.append((await c.poll()).value)
            while len(got) < 20:
                task = asyncio.ensure_future(c.poll())
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                task.cancel()
                try:
                    got.append((await task).value)
                except asyncio.CancelledError:
                    pass
                # The cancelled poll may still be fetching on the worker.
                await c.commit()
                committed.append((len(got), exactly_broker.committed_offset(
                    "aio-g5", topic)))
                if len(got) < 20:
                    got.append((await c.poll()).value)
        return got, committed

    got, committed = run(main())
    assert got == [f"v{i}".encode() for i in range(20)]
    assert all(returned == offset for returned, offset in committed), \
        committed


@pytest.mark.parametrize("how", ["poll", "async-for"])
def test_close_ends_a_waiting_poll(exactly_broker, topic, how):

    async def main():
        c = exactly.aio.Consumer(exactly_broker.bootstrap_servers, "aio-g4",
                                 topics=[topic])

        async def iterate():
            return [m async for m in c]

        # No timeout, and nothing comes.
        waiting = asyncio.ensure_future(
            c.poll() if how == "poll" else iterate())
        await asyncio.sleep(0.5)
        await c.close()
        return await waiting

    assert run(main()) == (None if how == "poll" else [])


def test_processor_with_a_coroutine_transform_commits_exactly_once(
        exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.Producer(servers) as p:
        p.send_batch(topic, [(f"k{i}", f"v{i}") for i in range(100)])
    out = topic + "-out"
    threads = set()
    failed = []

    async def transform(message, emitter):
        threads.add(threading.get_ident())
        await asyncio.sleep(0)  # awaits on the loop
        emitter.send(out, key=message.key, value=message.value.upper())
        if message.value == b"v50" and not failed:
            failed.append(message.offset)  # once: the batch is aborted
            raise ValueError("transform failed once")

    async def main():
        loop_thread = threading.get_ident()
        p = await exactly.aio.Processor.create(
            servers, group_id="aio-proc-async", input_topics=topic,
            transactional_id="aio-proc-async-1", transform=transform,
            max_batch_records=30)
        errors = 0
        async with p:
            while p.stats().records_in < 100 or errors == 0:
                try:
                    await p.run_once()
                except (exactly.Error, ValueError):
                    errors += 1
        return loop_thread, errors

    loop_thread, errors = run(main())
    assert errors == 1 and failed
    assert threads == {loop_thread}
    assert [r.value for r in exactly_broker.committed_records(out)] == \
        [f"V{i}".encode() for i in range(100)]
    assert exactly_broker.committed_offset("aio-proc-async", topic) == 100


@pytest.mark.exactly_aio(timeout=GUARD)
async def test_the_plugin_runs_a_marked_coroutine_test(exactly_broker, topic):
    async with exactly.aio.Producer(exactly_broker.bootstrap_servers) as p:
        report = await p.send(topic, value=b"v")
    assert report.offset == 0
    assert threading.current_thread() is threading.main_thread()


def test_the_plugin_runs_a_coroutine_in_a_plain_test(exactly_aio_run,
                                                     exactly_broker, topic):
    async def send():
        async with exactly.aio.Producer(exactly_broker.bootstrap_servers) \
                as p:
            return await p.send(topic, value=b"v")

    assert exactly_aio_run(send(), timeout=GUARD).offset == 0
    with pytest.raises(asyncio.TimeoutError):
        exactly_aio_run(asyncio.sleep(10), timeout=0.01)


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (apt-get install mypy)")
def test_mypy_accepts_a_typed_asyncio_program(tmp_path):
    program = tmp_path / "user_aio.py"
    program.write_text(
        "import asyncio\n"
        "from typing import List\n"
        "import exactly\n"
        "import exactly.aio\n"
        "async def enrich(message: exactly.Message, out: exactly.Emitter"
        ") -> None:\n"
        "    await asyncio.sleep(0)\n"
        "    out.send('enriched', key=message.key, value=message.value)\n"
        "async def main(servers: str) -> None:\n"
        "    async with exactly.aio.Producer(servers) as p:\n"
        "        report: exactly.DeliveryReport = await p.send('t', b'v')\n"
        "        reports: List[exactly.DeliveryReport] = "
        "await asyncio.gather(*(p.send('t', b'v') for _ in range(3)))\n"
        "    tp = await exactly.aio.TransactionalProducer.create(servers, 'x')\n"
        "    async with tp.transaction() as txn:\n"
        "        await txn.send('t', value='v')\n"
        "    await tp.close()\n"
        "    async with exactly.aio.Consumer(servers, 'g', topics=['t']) as c:\n"
        "        async for m in c:\n"
        "            await c.commit([m])\n"
        "            break\n"
        "        await c.commit()\n"
        "    transform: exactly.aio.AsyncTransform = enrich\n"
        "    proc = await exactly.aio.Processor.create(\n"
        "        servers, group_id='g', input_topics='t',\n"
        "        transactional_id='p', transform=transform)\n"
        "    await proc.run_once()\n"
        "    await proc.close()\n"
        "    print(report.offset, len(reports))\n")
    env = dict(os.environ)
    package = os.path.dirname(exactly.__file__)
    where = os.path.dirname(package)
    if os.path.basename(where) not in ("site-packages", "dist-packages"):
        env["MYPYPATH"] = where
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(program)],
        capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
