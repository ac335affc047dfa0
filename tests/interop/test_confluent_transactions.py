"""confluent-kafka-python (librdkafka underneath, but Python's API and defaults) against the
exactly-broker binary: transactions, read_committed, and a consume-transform-produce loop
killed with SIGKILL at random moments whose committed input offsets and committed outputs
must agree exactly."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def create_topics(bootstrap, *specs):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1) for name, partitions in specs])
    for f in futures.values():
        f.result(timeout=30)


def read_all(bootstrap, topic, isolation, expected, partitions=1, idle=5.0):
    """Every record of `topic` from the beginning, until `expected` arrived or `idle` s pass."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{random.random()}",
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out, last = [], time.monotonic()
    while len(out) < expected and time.monotonic() - last < idle:
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        out.append((m.partition(), m.key(), m.value()))
        last = time.monotonic()
    c.close()
    return out


def test_committed_visible_aborted_only_to_read_uncommitted(broker):
    create_topics(broker.bootstrap_servers, ("cktx", 1))
    p = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "ck-1"})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(100):
        p.produce("cktx", key=b"k", value=f"c{i}".encode())
    p.commit_transaction(30)
    p.begin_transaction()
    for i in range(40):
        p.produce("cktx", key=b"k", value=f"a{i}".encode())
    p.flush(30)  # the aborted records really reach the log
    p.abort_transaction(30)

    committed = [v for _, _, v in read_all(broker.bootstrap_servers, "cktx", "read_committed", 100)]
    assert committed == [f"c{i}".encode() for i in range(100)]
    everything = [v for _, _, v in read_all(broker.bootstrap_servers, "cktx",
                                            "read_uncommitted", 140)]
    assert everything == ([f"c{i}".encode() for i in range(100)] +
                          [f"a{i}".encode() for i in range(40)])


def test_zombie_is_fenced(broker):
    create_topics(broker.bootstrap_servers, ("ckfence", 1))
    old = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "ck-z"})
    old.init_transactions(30)
    old.begin_transaction()
    old.produce("ckfence", value=b"zombie")
    old.flush(30)
    new = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "ck-z"})
    new.init_transactions(30)
    new.begin_transaction()
    new.produce("ckfence", value=b"successor")
    new.commit_transaction(30)
    try:
        old.commit_transaction(30)
        raise AssertionError("the fenced producer committed")
    except KafkaException as e:
        assert e.args[0].fatal(), e
    values = [v for _, _, v in read_all(broker.bootstrap_servers, "ckfence", "read_committed", 1)]
    assert values == [b"successor"]


PROCESSOR = textwrap.dedent("""
    import sys
    from confluent_kafka import Consumer, Producer, TopicPartition
    bootstrap = sys.argv[1]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ctp",
                         "isolation.level": "read_committed", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 2000,
                         "heartbeat.interval.ms": 500})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "ctp-processor",
                         "transaction.timeout.ms": 10000})
    producer.init_transactions(30)
    consumer.subscribe(["ctp-in"])
    while True:
        batch = consumer.consume(num_messages=20, timeout=0.5)
        batch = [m for m in batch if m.error() is None]
        if not batch:
            continue
        producer.begin_transaction()
        for m in batch:
            producer.produce("ctp-out", key=m.key(), value=m.value().upper(),
                             partition=m.partition())
        offsets = {}
        for m in batch:
            offsets[(m.topic(), m.partition())] = m.offset() + 1
        producer.send_offsets_to_transaction(
            [TopicPartition(t, p, o) for (t, p), o in offsets.items()],
            consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        print("committed", sum(1 for _ in batch), flush=True)
""")


def test_consume_transform_produce_survives_sigkill(broker, tmp_path):
    """The input offsets committed in each transaction and the outputs of that transaction are
    one atomic unit: after any number of kills, the outputs are exactly f(input) for the input
    below the committed offsets, nothing more, nothing twice."""
    bootstrap = broker.bootstrap_servers
    create_topics(bootstrap, ("ctp-in", 2), ("ctp-out", 2))
    n = 3000
    seed = int(os.environ.get("EXACTLY_TEST_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(n):
        p.produce("ctp-in", key=str(i).encode(), value=f"record-{i}".encode(), partition=i % 2)
    p.flush(30)

    script = tmp_path / "processor.py"
    script.write_text(PROCESSOR)
    kills = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        proc = subprocess.Popen([sys.executable, str(script), bootstrap],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if kills < 8:
            # A killed member leaves no LeaveGroup: the next one waits out its 2 s session.
            time.sleep(rng.uniform(1.0, 4.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            continue
        # Last run: let it finish the input, then stop it.
        out = read_all(bootstrap, "ctp-out", "read_committed", n, partitions=2, idle=30)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        break
    assert kills == 8, f"seed {seed}"

    committed = {}
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ctp"})
    for tp in c.committed([TopicPartition("ctp-in", 0), TopicPartition("ctp-in", 1)], timeout=30):
        committed[tp.partition] = tp.offset
    c.close()
    outputs = read_all(bootstrap, "ctp-out", "read_committed", n, partitions=2)
    # Every input below the committed offset appears exactly once as output, in order per
    # partition; nothing above it does.
    expected = []
    for partition in (0, 1):
        inputs = [i for i in range(n) if i % 2 == partition]
        done = inputs[:committed[partition]]
        expected += [(partition, str(i).encode(), f"RECORD-{i}".encode()) for i in done]
    assert sorted(outputs) == sorted(expected), f"seed {seed}"
    for partition in (0, 1):
        got = [k for p_, k, _ in outputs if p_ == partition]
        assert got == [k for p_, k, _ in expected if p_ == partition], f"order, seed {seed}"
    assert committed[0] + committed[1] == n, f"the last run finished the input (seed {seed})"
