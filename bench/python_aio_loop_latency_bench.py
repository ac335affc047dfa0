#!/usr/bin/env python3
"""Does exactly.aio keep the event loop responsive? A 1 ms periodic timer
runs in the loop and records how late each tick fires, while the same loop
awaits 10,000 sends through exactly.aio.Producer to the bundled broker
(in this process). Its lateness is compared with the timer's own in the
same run with nothing else going on (the baseline).

  baseline   the timer alone, for BASELINE seconds
  writers    10,000 awaited sends: WRITERS tasks, each awaiting its sends
             one after the other (`await p.send(...)` resolves on delivery)
  gather0    for reference, no Kafka: asyncio.gather over 10,000
             coroutines that return at once, i.e. what the loop pays for
             the 10,000 tasks of a gather itself (3 turns of 10,000 steps)
  burst      10,000 sends awaited at once: asyncio.gather over 10,000
             send() coroutines. The sends of one turn are handed to
             librdkafka SEND_SLICE (128) per turn, the rest wait their
             turn; what remains is the gather's own cost (gather0)
  batch      10,000 sends by one `await p.send_batch(...)`, which queues
             256 records per turn of the loop
  sync       for contrast: the blocking exactly.Producer called on the
             loop's thread (send x 10,000, then flush)

Per scenario: ticks, and the timer's lateness p50 / p99 / max in ms; at
the end the worst max over the rounds, with its difference from the
baseline (and, for burst, from gather0) and its ratio to the baseline.
The target (issue 23): the writers' and burst's max lateness within a few
ms of the baseline's (burst: of gather0's, which no client can avoid).

With 10,000 tasks alive, CPython's cyclic garbage collector runs full
passes over them, inside whatever turn allocates at the time: on a loaded
2-core machine a good part of gather0's and burst's lateness. GC=0 runs
the rounds with the collector disabled, to tell the two apart.

  PYTHONPATH=build/bindings/python /usr/bin/python3 \\
      bench/python_aio_loop_latency_bench.py [N=10000] [WRITERS=100] \\
      [ROUNDS=3] [GC=1]
"""

import asyncio
import gc
import statistics
import sys
import time
from typing import Awaitable, Callable, List

import exactly
import exactly.aio
from exactly.testing import Broker

TOPIC = "bench"
VALUE = b"x" * 100
PERIOD = 0.001
BASELINE = 2.0


class Timer:
    """Fires every PERIOD seconds (call_at at the planned times) and
    records how late each firing is."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lateness: List[float] = []
        self.next = loop.time() + PERIOD
        self.handle = loop.call_at(self.next, self.fire)

    def fire(self) -> None:
        now = self.loop.time()
        self.lateness.append(now - self.next)
        self.next += PERIOD
        if self.next < now:  # skip the periods missed entirely
            self.next = now + PERIOD
        self.handle = self.loop.call_at(self.next, self.fire)

    def stop(self) -> List[float]:
        self.handle.cancel()
        return self.lateness


def summary(name: str, lateness: List[float], seconds: float) -> str:
    ms = sorted(x * 1000 for x in lateness)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return (f"{name:9s} {seconds:7.3f} s  {len(ms):6d} ticks  "
            f"p50 {statistics.median(ms):6.3f}  p99 {p99:7.3f}  "
            f"max {ms[-1]:8.3f} ms")


async def measure(work: Callable[[], Awaitable[None]]):
    loop = asyncio.get_running_loop()
    timer = Timer(loop)
    start = time.perf_counter()
    await work()
    seconds = time.perf_counter() - start
    await asyncio.sleep(2 * PERIOD)  # the tick the work may have delayed
    return timer.stop(), seconds


async def main(servers: str, n: int, writers: int):
    results = {}

    async def idle():
        await asyncio.sleep(BASELINE)

    results["baseline"] = await measure(idle)

    p = exactly.aio.Producer(servers)
    await p.send(TOPIC, VALUE)  # connected, metadata known

    async def writer(count: int):
        for _ in range(count):
            await p.send(TOPIC, VALUE)

    async def with_writers():
        per = n // writers
        await asyncio.gather(*(writer(per) for _ in range(writers)))

    results["writers"] = await measure(with_writers)

    async def nothing():
        return None

    async def gather0():
        await asyncio.gather(*(nothing() for _ in range(n)))

    results["gather0"] = await measure(gather0)

    async def burst():
        await asyncio.gather(*(p.send(TOPIC, VALUE) for _ in range(n)))

    results["burst"] = await measure(burst)

    async def batch():
        await p.send_batch(TOPIC, [VALUE] * n)

    results["batch"] = await measure(batch)
    await p.close()

    sync = exactly.Producer(servers)
    sync.send(TOPIC, VALUE)
    sync.flush()

    async def blocking():
        for _ in range(n):
            sync.send(TOPIC, VALUE)
        sync.flush()

    results["sync"] = await measure(blocking)
    sync.close()
    return results


def run() -> None:
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    n = int(args.get("N", 10000))
    writers = int(args.get("WRITERS", 100))
    rounds = int(args.get("ROUNDS", 3))
    if args.get("GC", "1") == "0":
        gc.disable()
    print(f"exactly.aio: a {PERIOD * 1000:.0f} ms timer's lateness while "
          f"the loop awaits {n} sends ({writers} writers), "
          f"librdkafka {exactly.librdkafka_version}, "
          f"SEND_SLICE {getattr(exactly.aio, 'SEND_SLICE', None)}, "
          f"gc {'on' if gc.isenabled() else 'off'}")
    with Broker(topics={TOPIC: 1}) as broker:
        worst = {}
        for r in range(rounds):
            results = asyncio.run(main(broker.bootstrap_servers, n, writers))
            print(f"round {r + 1}:")
            for name, (lateness, seconds) in results.items():
                print("  " + summary(name, lateness, seconds))
                worst[name] = max(worst.get(name, 0.0), max(lateness))
        base = worst["baseline"] * 1000
        print(f"worst max lateness over {rounds} rounds (ms), against the "
              f"baseline {base:.3f} ms:")
        for name in ("writers", "gather0", "burst", "batch", "sync"):
            ms = worst[name] * 1000
            line = (f"  {name:9s} {ms:8.3f}  +{ms - base:8.3f} over the "
                    f"baseline, x{ms / base:6.1f}")
            if name == "burst":
                g0 = worst["gather0"] * 1000
                line += f", {ms - g0:+8.3f} over gather0"
            print(line)

if __name__ == "__main__":
    run()
