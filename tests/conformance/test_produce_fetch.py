"""Produce and Fetch: offsets, timestamps, high watermark and log start as clients see them."""
import records
from side_by_side import scenario


@scenario
def test_produce_gives_consecutive_base_offsets(broker):
    topic = broker.topic()
    answers = [broker.produce(topic, 0, records.batch([b"a", b"b", b"c"])) for _ in range(3)]
    return [(a["error_code"], a["base_offset"], a["log_append_time_ms"], a["log_start_offset"])
            for a in answers]


@scenario
def test_fetch_returns_batches_as_written(broker):
    topic = broker.topic()
    broker.produce(topic, 0, records.batch([b"v0", b"v1"], keys=[b"k0", None],
                                           timestamps=[1000, 3000]))
    broker.produce(topic, 0, records.batch([b"v2"], timestamps=[2000]))
    fetched = broker.fetch(topic, 0, 0)
    return {"error": fetched["error_code"], "hw": fetched["high_watermark"],
            "lso": fetched["last_stable_offset"], "log_start": fetched["log_start_offset"],
            "aborted": fetched["aborted_transactions"],
            "batches": [(b.base_offset, b.last_offset, b.base_timestamp, b.max_timestamp,
                         b.producer_id, b.base_sequence,
                         [(r.offset, r.timestamp, r.key, r.value) for r in b.records])
                        for b in fetched["batches"]]}
