#!/usr/bin/env python3
"""exactly's Producer vs confluent-kafka-python's Producer, from Python, in
the same run, against the same in-process bundled broker.

Both producers get the same librdkafka properties (exactly's exactly-once
defaults: acks=all, idempotence on, at most 5 requests in flight) and send N
records with 100-byte values to one topic, then flush. Three ways of sending:

  confluent  confluent_kafka.Producer.produce(topic, value) per record; poll
             only when produce raises BufferError (its best case)
  exactly    exactly.Producer.send(topic, value) per record
  batch      exactly.Producer.send_batch(topic, values), 1,000 per call

Two rates for each, from the same runs:

  send rate    N / time the calling thread spends in the send loop: what
               the Python application pays per record on its own thread
               (librdkafka and the broker work concurrently meanwhile)
  end to end   N / (send loop + flush): until every record is acknowledged
               by the broker with acks=all. With the broker inside this
               process on a 2-core machine, this is bounded by librdkafka
               and the broker, which both clients share.

The topic keeps at most RETENTION_BYTES (default 64 MiB; 0: everything).
The in-memory broker holds what it retains in fresh memory, and on this
VM a page touched for the first time costs the host a fault: a broker that
keeps every run's records (hundreds of MB) spends more CPU on new pages than
on the requests, and that shared cost, not either client, would set the end
to end rate. With retention the broker reuses memory, as a long-running
test broker would. Both clients always get the same broker and topic.

Runs are interleaved and the best of ROUNDS counts (these machines are
shared and noisy). Targets (issue 7): exactly >= 1.0x confluent per record,
batch send >= 2.0x.

  PYTHONPATH=build/bindings/python /usr/bin/python3 \\
      bench/python_producer_bench.py [N=200000] [ROUNDS=5] \\
      [RETENTION_BYTES=67108864]
"""

import os
import sys
import time

import confluent_kafka

import exactly
from exactly.testing import Broker

VALUE = b"x" * 100
TOPIC = "bench"
BATCH = 1000


def run_confluent(servers, properties, n):
    p = confluent_kafka.Producer(
        dict(properties, **{"bootstrap.servers": servers}))
    produce = p.produce
    start = time.perf_counter()
    for _ in range(n):
        try:
            produce(TOPIC, VALUE)
        except BufferError:
            while True:
                p.poll(0.001)
                try:
                    produce(TOPIC, VALUE)
                    break
                except BufferError:
                    pass
    sent = time.perf_counter()
    left = p.flush(60)
    done = time.perf_counter()
    assert left == 0, f"confluent: {left} records not delivered"
    return sent - start, done - start


def run_exactly(servers, properties, n):
    p = exactly.Producer(servers, config=properties)
    send = p.send
    start = time.perf_counter()
    for _ in range(n):
        send(TOPIC, VALUE)
    sent = time.perf_counter()
    p.flush(60)
    done = time.perf_counter()
    stats = p.stats()
    p.close()
    assert stats.failed == 0 and stats.delivered == n, stats
    return sent - start, done - start


def run_batch(servers, properties, n):
    p = exactly.Producer(servers, config=properties)
    values = [VALUE] * BATCH
    send_batch = p.send_batch
    start = time.perf_counter()
    left = n
    while left >= BATCH:
        send_batch(TOPIC, values)
        left -= BATCH
    if left:
        send_batch(TOPIC, values[:left])
    sent = time.perf_counter()
    p.flush(60)
    done = time.perf_counter()
    stats = p.stats()
    p.close()
    assert stats.failed == 0 and stats.delivered == n, stats
    return sent - start, done - start


def verdict(ratio, target):
    return "MET" if ratio >= target else "MISSED"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    retention = int(sys.argv[3]) if len(sys.argv) > 3 else 64 << 20
    properties = exactly._exactly.producer_properties(
        {"bootstrap.servers": "-"})
    del properties["bootstrap.servers"]
    print(f"librdkafka {exactly.librdkafka_version}, confluent-kafka "
          f"{confluent_kafka.version()[0]}, {n:,} records of {len(VALUE)} "
          f"bytes per run, best of {rounds} interleaved rounds; topic "
          f"retention.bytes "
          f"{retention if retention > 0 else 'unlimited (-1)'}")
    print(f"librdkafka properties (both clients): {properties}")
    runs = {"confluent": run_confluent, "exactly": run_exactly,
            "batch": run_batch}
    send = {name: float("inf") for name in runs}
    total = {name: float("inf") for name in runs}
    with Broker() as broker:
        broker.create_topic(
            TOPIC, 1, config={"retention.bytes": retention or -1})
        servers = broker.bootstrap_servers
        for fn in runs.values():  # warm-up
            fn(servers, properties, min(n, 20_000))
        for r in range(rounds):
            for name, fn in runs.items():
                s, t = fn(servers, properties, n)
                send[name] = min(send[name], s)
                total[name] = min(total[name], t)
            print(f"round {r + 1}/{rounds} done", flush=True)

    def rate(seconds):
        return n / seconds

    print()
    print(f"{'':34}{'send rate':>14}{'end to end':>14}   (records/s)")
    labels = {"confluent": "confluent-kafka Producer.produce",
              "exactly": "exactly Producer.send",
              "batch": "exactly Producer.send_batch"}
    for name, label in labels.items():
        print(f"{label:34}{rate(send[name]):>14,.0f}"
              f"{rate(total[name]):>14,.0f}")
    print()
    for metric, table in (("send rate", send), ("end to end", total)):
        per_record = table["confluent"] / table["exactly"]
        batch = table["confluent"] / table["batch"]
        print(f"{metric:10}: per record {per_record:.2f}x confluent "
              f"(target >= 1.0x) {verdict(per_record, 1.0)}; "
              f"batch send {batch:.2f}x confluent (target >= 2.0x) "
              f"{verdict(batch, 2.0)}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
