"""Idempotent produce: the producer id, epoch and sequence checks a partition leader makes on
each batch (Kafka's ProducerStateManager), as an idempotent client relies on them to retry
without duplicating records and to learn that it must reset. Produce v8, producer ids from
InitProducerId without a transactional id."""
import errors
import records
from apis import INIT_PRODUCER_ID
from apis_txn import now_ms, read_log, ready_topic
from side_by_side import RETRIABLE, scenario, wait_until

INT32_MAX = 2**31 - 1


def _answer(a):
    """What a client reads from a partition's Produce answer (the broker's times left out)."""
    return {"error_code": a["error_code"], "base_offset": a["base_offset"]}


def init_producer_id(broker, **fields):
    """InitProducerId v4 without a transactional id, asked again while Kafka's producer id
    manager is not ready (COORDINATOR_LOAD_IN_PROGRESS just after it starts)."""
    answer = {}

    def answered():
        answer.update(broker.call(INIT_PRODUCER_ID, 4, transactional_id=None,
                                  transaction_timeout_ms=60000,
                                  **{"producer_id": -1, "producer_epoch": -1, **fields}))
        return errors.name(answer["error_code"]) not in RETRIABLE
    wait_until(answered, "a producer id")
    return answer


def _log(broker, topic):
    """(offset, value) of every record the partition holds."""
    return records.data_records(read_log(broker, topic))


class _Producer:
    """An idempotent producer's id and epoch, and a batch builder at any sequence."""

    def __init__(self, broker, producer_id=None, epoch=None):
        if producer_id is None:
            init = init_producer_id(broker)
            producer_id, epoch = init["producer_id"], init["producer_epoch"]
        self.broker, self.producer_id, self.epoch = broker, producer_id, epoch

    def send(self, topic, sequence, values, epoch=None):
        batch = records.batch(values, producer_id=self.producer_id,
                              producer_epoch=self.epoch if epoch is None else epoch,
                              base_sequence=sequence, base_timestamp=now_ms())
        return _answer(self.broker.produce(topic, 0, batch))


@scenario
def test_new_producer_may_start_at_any_sequence(broker):
    """A partition that knows nothing of a producer takes its first batch at any sequence
    (Kafka 2.5+, KIP-360: state aged out by retention must not wedge the producer); from then on
    the sequence must follow on."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    return {"first_at_5": p.send(topic, 5, [b"a"]),
            "then_6": p.send(topic, 6, [b"b"]),
            "then_0": p.send(topic, 0, [b"c"]),
            "log": _log(broker, topic)}


@scenario
def test_consecutive_batches_are_appended(broker):
    """Batches at 0, 3, 5 (3, 2 and 1 records) follow on: each appended at the next offset."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    return [p.send(topic, 0, [b"a", b"b", b"c"]), p.send(topic, 3, [b"d", b"e"]),
            p.send(topic, 5, [b"f"]), _log(broker, topic)]


@scenario
def test_retried_batch_is_acknowledged_once(broker):
    """The last batch sent again (a retry after a lost answer) is answered as a success with
    its original base offset, and the log holds it once: the heart of idempotence."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    first = p.send(topic, 0, [b"a", b"b"])
    second = p.send(topic, 2, [b"c"])
    retry = p.send(topic, 2, [b"c"])
    after = p.send(topic, 3, [b"d"])
    return {"first": first, "second": second, "retry": retry, "after": after,
            "log": _log(broker, topic)}


@scenario
def test_duplicate_of_an_older_batch_among_the_last_five(broker):
    """A retry of a batch that is not the last one but among the last five (max in-flight 5):
    Kafka acknowledges it with its original offset (DUPLICATE_SEQUENCE_NUMBER is only for
    clients older than Produce v3's semantics) and does not append it."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    sent = [p.send(topic, i, [f"v{i}".encode()]) for i in range(5)]
    return {"sent": sent, "retry_of_second": p.send(topic, 1, [b"v1"]),
            "retry_of_first": p.send(topic, 0, [b"v0"]), "next": p.send(topic, 5, [b"v5"]),
            "log_end": broker.fetch(topic, 0, 0)["high_watermark"]}


@scenario
def test_duplicate_older_than_the_last_five(broker):
    """A batch repeated after six newer ones is past the window a broker remembers: Kafka can
    neither recognise it nor accept it (OUT_OF_ORDER_SEQUENCE_NUMBER), and appends nothing."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    for i in range(6):
        p.send(topic, i, [f"v{i}".encode()])
    return {"retry_of_first": p.send(topic, 0, [b"v0"]),
            "log_end": broker.fetch(topic, 0, 0)["high_watermark"]}


@scenario
def test_same_base_sequence_with_other_record_count(broker):
    """A batch at the last batch's base sequence but with a different record count is not a
    duplicate of it (Kafka matches first and last sequence): out of order."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    return [p.send(topic, 0, [b"a", b"b", b"c"]), p.send(topic, 0, [b"a"]),
            p.send(topic, 0, [b"a", b"b", b"c", b"d"]), _log(broker, topic)]


@scenario
def test_sequence_gap_is_out_of_order(broker):
    """A batch that skips sequences (a lost earlier batch) is refused with
    OUT_OF_ORDER_SEQUENCE_NUMBER and nothing is appended; the expected one is still taken."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    return [p.send(topic, 0, [b"a"]), p.send(topic, 5, [b"b"]), p.send(topic, 1, [b"c"]),
            _log(broker, topic)]


@scenario
def test_old_epoch_is_refused_after_an_epoch_bump(broker):
    """An idempotent producer bumps its own epoch after an error (Java client, KIP-360):
    the new epoch must start at sequence 0, and a batch of the old epoch is refused with
    INVALID_PRODUCER_EPOCH."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    return {"epoch0": p.send(topic, 0, [b"a", b"b"]),
            "epoch1_at_2": p.send(topic, 2, [b"c"], epoch=p.epoch + 1),
            "epoch1_at_0": p.send(topic, 0, [b"d"], epoch=p.epoch + 1),
            "epoch0_again": p.send(topic, 2, [b"e"]),
            "epoch0_retry": p.send(topic, 0, [b"a", b"b"]),
            "epoch1_next": p.send(topic, 1, [b"f"], epoch=p.epoch + 1),
            "log": _log(broker, topic)}


@scenario
def test_init_producer_id_with_an_existing_id(broker):
    """InitProducerId v4 without a transactional id but with the producer's current id and
    epoch: Kafka hands out a new producer id at epoch 0 (the KIP-360 bump is the
    transaction coordinator's; an idempotent producer bumps locally). A producer id without an
    epoch, or an epoch without an id, is INVALID_REQUEST."""
    first = init_producer_id(broker)
    again = init_producer_id(broker, producer_id=first["producer_id"],
                             producer_epoch=first["producer_epoch"])
    id_without_epoch = init_producer_id(broker, producer_id=first["producer_id"],
                                        producer_epoch=-1)
    epoch_without_id = init_producer_id(broker, producer_id=-1,
                                        producer_epoch=first["producer_epoch"])
    return {"again_error_code": again["error_code"], "epoch": again["producer_epoch"],
            "same_producer_id": again["producer_id"] == first["producer_id"],
            "first_epoch": first["producer_epoch"],
            "id_without_epoch_error_code": id_without_epoch["error_code"],
            "epoch_without_id_error_code": epoch_without_id["error_code"]}


@scenario
def test_producer_id_the_broker_never_issued(broker):
    """Produce v8 with a producer id no InitProducerId returned: the partition leader keeps no
    list of issued ids, so Kafka takes it like any new producer (no UNKNOWN_PRODUCER_ID since
    KIP-360)."""
    topic = ready_topic(broker)
    p = _Producer(broker, producer_id=987_654_321_012, epoch=3)
    return [p.send(topic, 0, [b"a"]), p.send(topic, 1, [b"b"]), p.send(topic, 1, [b"b"]),
            p.send(topic, 3, [b"c"]), _log(broker, topic)]


@scenario
def test_sequence_wraps_after_int32_max(broker):
    """Sequences wrap from INT32_MAX to 0: a batch ending at INT32_MAX is followed by one at
    0, and a batch across the wrap is followed by the next one after 0."""
    topic = ready_topic(broker)
    p = _Producer(broker)
    a = p.send(topic, INT32_MAX - 1, [b"a", b"b"])
    b = p.send(topic, 0, [b"c"])
    q = _Producer(broker)
    c = q.send(topic, INT32_MAX - 1, [b"d", b"e", b"f"])
    d = q.send(topic, 2, [b"g"])
    e = q.send(topic, 1, [b"h"])
    return {"to_max": a, "wrapped": b, "across": c, "after_across_at_2": d,
            "after_across_at_1": e, "log": _log(broker, topic)}


@scenario
def test_producer_id_with_epoch_minus_one(broker):
    """A batch with a producer id but no epoch (-1) and a sequence: what a leader does with the
    half-idempotent batch of a broken client."""
    topic = ready_topic(broker)
    init = init_producer_id(broker)
    p = _Producer(broker, producer_id=init["producer_id"], epoch=-1)
    return [p.send(topic, 0, [b"a"]), p.send(topic, 1, [b"b"]), p.send(topic, 1, [b"b"]),
            _log(broker, topic)]


@scenario
def test_sequence_without_producer_id(broker):
    """A batch with no producer id but a base sequence is not idempotent: appended every time
    it is sent."""
    topic = ready_topic(broker)
    batch = records.batch([b"a"], base_sequence=0, base_timestamp=now_ms())
    return [_answer(broker.produce(topic, 0, batch)) for _ in range(2)] + [_log(broker, topic)]
