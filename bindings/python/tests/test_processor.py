"""The exactly-once processor with a Python transform."""

import pytest

import exactly


def fill(broker, topic, n):
    with exactly.Producer(broker.bootstrap_servers) as p:
        p.send_batch(topic, [(f"k{i}", f"v{i}") for i in range(n)])


def run_until(processor, records_in):
    while processor.stats().records_in < records_in:
        processor.run_once()


def test_processor_transforms_exactly_once(exactly_broker, topic):
    fill(exactly_broker, topic, 100)
    out = topic + "-out"

    def transform(message, emitter):
        emitter.send(out, key=message.key, value=message.value.upper())
        if message.offset % 10 == 0:
            emitter.send(out, key=b"tick", value=str(message.offset))

    with exactly.Processor(exactly_broker.bootstrap_servers,
                           group_id="proc", input_topics=topic,
                           transactional_id="proc-1",
                           transform=transform) as p:
        run_until(p, 100)
        stats = p.stats()
    assert stats.records_in == 100 and stats.records_out == 110
    assert stats.committed_offsets == [
        exactly.TopicPartitionOffset(topic, 0, 100)]
    values = [r.value for r in exactly_broker.committed_records(out)]
    assert [v for v in values if v.startswith(b"V")] == \
        [f"V{i}".encode() for i in range(100)]
    assert len(values) == 110
    assert exactly_broker.committed_offset("proc", topic) == 100


def test_transform_exception_aborts_the_batch(exactly_broker, topic):
    fill(exactly_broker, topic, 10)
    out = topic + "-out"
    calls = []

    def transform(message, emitter):
        calls.append(message.offset)
        emitter.send(out, value=message.value)
        if message.offset == 5 and calls.count(5) == 1:
            raise ValueError("bad record")

    with exactly.Processor(exactly_broker.bootstrap_servers,
                           group_id="proc-err", input_topics=[topic],
                           transactional_id="proc-err-1",
                           transform=transform, max_batch_time=0.5) as p:
        with pytest.raises(ValueError, match="bad record"):
            run_until(p, 10)
        # Nothing of the failed batch was committed.
        assert exactly_broker.committed_offset("proc-err", topic) is None
        # The next run transforms it again, and commits it once.
        run_until(p, 10)
    assert calls.count(5) == 2
    assert [r.value for r in exactly_broker.committed_records(out)] == \
        [f"v{i}".encode() for i in range(10)]


def test_emitter_outlives_its_call(exactly_broker, topic):
    fill(exactly_broker, topic, 1)
    kept = []

    def transform(message, emitter):
        kept.append(emitter)

    with exactly.Processor(exactly_broker.bootstrap_servers,
                           group_id="proc-em", input_topics=[topic],
                           transactional_id="proc-em-1",
                           transform=transform) as p:
        run_until(p, 1)
    with pytest.raises(ValueError, match="has returned"):
        kept[0].send("x", b"y")


def test_stop_ends_run(exactly_broker, topic):
    fill(exactly_broker, topic, 3)
    seen = []
    processor = None

    def transform(message, emitter):
        seen.append(message.offset)
        if len(seen) == 3:
            processor.stop()

    processor = exactly.Processor(exactly_broker.bootstrap_servers,
                                  group_id="proc-stop", input_topics=[topic],
                                  transactional_id="proc-stop-1",
                                  transform=transform)
    processor.run()  # returns after stop(), the last batch committed
    assert seen == [0, 1, 2]
    assert exactly_broker.committed_offset("proc-stop", topic) == 3
    processor.close()
