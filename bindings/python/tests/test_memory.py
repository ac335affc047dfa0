"""100,000 sends in a loop with bounded memory: nothing is kept per record
once it is reported (no leaked callbacks, reports, futures or copies)."""

import gc
import sys
import tracemalloc

import exactly

N = 100_000


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_100k_sends_with_bounded_memory(exactly_broker, topic):
    delivered = [0]

    def on_delivery(error, report):
        assert error is None
        delivered[0] += 1

    # A small librdkafka queue: send() waits for room (GIL released) and
    # runs the callbacks that are due, so neither side can pile up.
    with exactly.Producer(exactly_broker.bootstrap_servers,
                          queue_buffering_max_messages=5000) as p:
        value = b"v" * 100
        refs = sys.getrefcount(on_delivery)

        def round_of_sends():
            for i in range(N):
                p.send(topic, value, on_delivery=on_delivery)
            p.flush()

        round_of_sends()  # warm-up: librdkafka's and the allocator's pools
        gc.collect()
        rss_before = rss_bytes()
        tracemalloc.start()
        round_of_sends()
        gc.collect()
        python_growth, python_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_growth = rss_bytes() - rss_before

        assert delivered[0] == 2 * N
        assert p.stats().delivered == 2 * N
        # Every reference the reports took on the callback was given back.
        assert sys.getrefcount(on_delivery) == refs
        # Python objects: no growth with N (a leak of one small object per
        # record would be several MB), and never many alive at once.
        assert python_growth < 1 << 20, python_growth
        assert python_peak < 8 << 20, python_peak
        # The process: a second 100,000 records cost no lasting memory.
        assert rss_growth < 32 << 20, rss_growth


def test_100k_futures_with_bounded_memory(exactly_broker, topic):
    with exactly.Producer(exactly_broker.bootstrap_servers,
                          queue_buffering_max_messages=5000) as p:
        def round_of_futures():
            last = None
            for i in range(N):
                last = p.send_future(topic, b"f")
            last.result()
            p.flush()

        round_of_futures()
        gc.collect()
        tracemalloc.start()
        round_of_futures()
        gc.collect()
        growth, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert growth < 1 << 20, growth
        assert p.stats().delivered == 2 * N
