"""Transactions: the transaction coordinator's answers (InitProducerId v4, AddPartitionsToTxn
v3, AddOffsetsToTxn v3, EndTxn v3, TxnOffsetCommit v3) and what the partitions show of a
transaction (control markers, last stable offset, read_committed fetches, aborted transaction
lists, pending offsets), as an exactly-once client and a read_committed consumer rely on them."""
import errors
import records
from apis import INIT_PRODUCER_ID
from apis_group import OFFSET_FETCH
from apis_txn import (ADD_OFFSETS_TO_TXN, ADD_PARTITIONS_TO_TXN, END_TXN, TXN_OFFSET_COMMIT,
                      now_ms, read_log, ready_topic)
from side_by_side import RETRIABLE, scenario, unique, wait_until

LATEST = -1
READ_UNCOMMITTED, READ_COMMITTED = 0, 1

class _Transaction:
    """A transactional producer driven by hand: its id, producer id and epoch, and one call per
    API on its coordinator. Error codes come back as names."""

    def __init__(self, broker, timeout_ms=60000):
        self.broker = broker
        self.id = unique("conformance-txn")
        init = broker.init_producer_id(self.id, timeout_ms)
        self.producer_id, self.epoch = init["producer_id"], init["producer_epoch"]
        self.sequences = {}

    def call(self, api, version, **fields):
        with self.broker.coordinator(self.id, 1) as c:
            return c.call(api, version, **fields)

    def _retried(self, ask, error_of, retry):
        """`ask()` once, or (retry) again while the coordinator answers a retriable error, as
        the Java producer does (CONCURRENT_TRANSACTIONS while the last markers are written)."""
        answer = {}

        def settled():
            answer.update(ask())
            return not retry or error_of(answer) not in RETRIABLE
        wait_until(settled, f"an answer from the coordinator of {self.id!r}")
        return answer

    def init_producer_id(self, version=4, timeout_ms=60000, producer_id=-1, producer_epoch=-1,
                         retry=True):
        return self._retried(
            lambda: self.call(INIT_PRODUCER_ID, version, transactional_id=self.id,
                              transaction_timeout_ms=timeout_ms, producer_id=producer_id,
                              producer_epoch=producer_epoch),
            lambda a: errors.name(a["error_code"]), retry)

    def add_partitions(self, topic, partitions=(0,), version=3, epoch=None, producer_id=None,
                       retry=True, more_topics=()):
        """Each partition's error, as [(topic, partition, error)]."""
        topics = [{"name": topic, "partitions": list(partitions)}] + list(more_topics)
        answer = self._retried(
            lambda: self.call(ADD_PARTITIONS_TO_TXN, version, transactional_id=self.id,
                              producer_id=self.producer_id if producer_id is None
                              else producer_id,
                              producer_epoch=self.epoch if epoch is None else epoch,
                              topics=topics),
            lambda a: errors.name(a["results"][0]["partitions"][0]["partition_error_code"]),
            retry)
        return sorted((t["name"] == topic, p["partition_index"],
                       errors.name(p["partition_error_code"]))
                      for t in answer["results"] for p in t["partitions"])

    def add_offsets(self, group, epoch=None, retry=True):
        answer = self._retried(
            lambda: self.call(ADD_OFFSETS_TO_TXN, 3, transactional_id=self.id,
                              producer_id=self.producer_id,
                              producer_epoch=self.epoch if epoch is None else epoch,
                              group_id=group),
            lambda a: errors.name(a["error_code"]), retry)
        return errors.name(answer["error_code"])

    def end(self, commit, version=3, epoch=None, producer_id=None, retry=True):
        answer = self._retried(
            lambda: self.call(END_TXN, version, transactional_id=self.id,
                              producer_id=self.producer_id if producer_id is None
                              else producer_id,
                              producer_epoch=self.epoch if epoch is None else epoch,
                              committed=commit),
            lambda a: errors.name(a["error_code"]), retry)
        return errors.name(answer["error_code"])

    def commit_offset(self, group, topic, offset, partition=0, epoch=None):
        """TxnOffsetCommit v3 of one partition's offset, on the group's coordinator: its error."""
        with self.broker.coordinator(group, 0) as c:
            answer = c.call(TXN_OFFSET_COMMIT, 3, transactional_id=self.id, group_id=group,
                            producer_id=self.producer_id,
                            producer_epoch=self.epoch if epoch is None else epoch,
                            generation_id=-1, member_id="", group_instance_id=None,
                            topics=[{"name": topic, "partitions": [{
                                "partition_index": partition, "committed_offset": offset,
                                "committed_leader_epoch": -1, "committed_metadata": ""}]}])
        return errors.name(answer["topics"][0]["partitions"][0]["error_code"])

    def produce(self, topic, values, partition=0, epoch=None, sequence=None,
                transactional_id=True):
        """A transactional batch of `values` at the partition's next sequence: (error, base
        offset). The sequence moves on only when the batch is taken."""
        key = (topic, partition)
        seq = self.sequences.get(key, 0) if sequence is None else sequence
        batch = records.batch(values, producer_id=self.producer_id,
                              producer_epoch=self.epoch if epoch is None else epoch,
                              base_sequence=seq, transactional=True, base_timestamp=now_ms())
        answer = self.broker.produce(topic, partition, batch,
                                     transactional_id=self.id if transactional_id else None)
        if answer["error_code"] == 0 and sequence is None:
            self.sequences[key] = seq + len(values)
        return errors.name(answer["error_code"]), answer["base_offset"]

    def wait_stable(self, topic, partition=0):
        """Until the partition's last stable offset reaches its high watermark (the markers of
        an ended transaction are written after EndTxn is answered)."""
        def stable():
            f = self.broker.fetch(topic, partition, 0)
            return f["last_stable_offset"] == f["high_watermark"]
        wait_until(stable, f"{topic}[{partition}]'s transactions to end")

    def batches(self, topic, partition=0, isolation_level=READ_UNCOMMITTED):
        """The partition's batches as comparable facts: the producer id only as whether it is
        this producer's, the epoch as its distance from this producer's epoch."""
        return [self.describe(b) for b in read_log(self.broker, topic, partition,
                                                   isolation_level)]

    def describe(self, b):
        ours = b.producer_id == self.producer_id
        return {"offsets": [b.base_offset, b.last_offset], "control": b.control,
                "control_type": {None: None, records.ABORT: "ABORT",
                                 records.COMMIT: "COMMIT"}[b.control_type()],
                "transactional": b.transactional, "ours": ours,
                "epoch": b.producer_epoch - self.epoch if ours else b.producer_epoch,
                "base_sequence": b.base_sequence,
                "values": [r.value for r in b.records if not b.control]}

    def aborted(self, fetched):
        """A read_committed Fetch's aborted transactions, producer ids as "ours" or not."""
        listed = fetched["aborted_transactions"]
        if listed is None:
            return None
        return [{"ours": a["producer_id"] == self.producer_id, "first_offset": a["first_offset"]}
                for a in listed]


def _offsets(broker, topic, partition=0):
    """High watermark and last stable offset as Fetch and ListOffsets (latest, each isolation
    level) give them."""
    f = broker.fetch(topic, partition, 0)
    return {"hw": f["high_watermark"], "lso": f["last_stable_offset"],
            "latest_uncommitted": broker.list_offset(topic, partition, LATEST,
                                                     isolation_level=READ_UNCOMMITTED)["offset"],
            "latest_committed": broker.list_offset(topic, partition, LATEST,
                                                   isolation_level=READ_COMMITTED)["offset"]}


def _plain(broker, topic, values, partition=0):
    """A non-transactional, non-idempotent batch: its base offset."""
    answer = broker.produce(topic, partition, records.batch(values, base_timestamp=now_ms()))
    assert answer["error_code"] == 0, errors.name(answer["error_code"])
    return answer["base_offset"]


def _offset_fetch(broker, group, topic, require_stable, partition=0):
    with broker.coordinator(group, 0) as c:
        answer = c.call(OFFSET_FETCH, 7, group_id=group, require_stable=require_stable,
                        topics=[{"name": topic, "partition_indexes": [partition]}])
    p = answer["topics"][0]["partitions"][0]
    return {"group_error": errors.name(answer["error_code"]),
            "error": errors.name(p["error_code"]), "offset": p["committed_offset"]}


# --- markers and the last stable offset ---------------------------------------------------------

@scenario
def test_commit_appends_a_commit_marker(broker):
    """EndTxn(commit): one COMMIT control batch after the transaction's records, one offset of
    its own, with the producer's id and epoch and no sequence; the LSO then reaches the high
    watermark and read_committed sees the records."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    added = t.add_partitions(topic)
    produced = [t.produce(topic, [b"a", b"b"]), t.produce(topic, [b"c"])]
    ended = t.end(commit=True)
    t.wait_stable(topic)
    committed = broker.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)
    return {"added": added, "produced": produced, "end": ended,
            "log": t.batches(topic), "offsets": _offsets(broker, topic),
            "read_committed": records.data_records(committed["batches"]),
            "aborted": t.aborted(committed)}


@scenario
def test_abort_appends_an_abort_marker_and_lists_the_transaction(broker):
    """EndTxn(abort): an ABORT control batch; a read_committed Fetch still returns the aborted
    records (Kafka leaves the filtering to the client) and lists the aborted transaction with
    its first offset, so that the client can drop them."""
    topic = ready_topic(broker)
    before = _plain(broker, topic, [b"x"])
    t = _Transaction(broker)
    t.add_partitions(topic)
    produced = [t.produce(topic, [b"a", b"b"]), t.produce(topic, [b"c"])]
    ended = t.end(commit=False)
    t.wait_stable(topic)
    after = _plain(broker, topic, [b"y"])
    committed = broker.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)
    uncommitted = broker.fetch(topic, 0, 0)
    return {"before": before, "produced": produced, "end": ended, "after": after,
            "log": t.batches(topic), "offsets": _offsets(broker, topic),
            "read_committed_records": records.data_records(committed["batches"]),
            "aborted_read_committed": t.aborted(committed),
            "aborted_read_uncommitted": t.aborted(uncommitted),
            "aborted_from_after_it": t.aborted(
                broker.fetch(topic, 0, after, isolation_level=READ_COMMITTED))}


@scenario
def test_aborted_and_committed_transactions_on_one_partition(broker):
    """An aborted transaction, then a committed one, of the same producer: read_committed lists
    only the aborted one; a fetch from past it lists none."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    t.add_partitions(topic)
    t.produce(topic, [b"aborted"])
    t.end(commit=False)
    t.wait_stable(topic)
    t.add_partitions(topic)
    t.produce(topic, [b"committed"])
    t.end(commit=True)
    t.wait_stable(topic)
    return {"log": t.batches(topic),
            "from_0": t.aborted(broker.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)),
            "from_2": t.aborted(broker.fetch(topic, 0, 2, isolation_level=READ_COMMITTED))}


@scenario
def test_last_stable_offset_while_a_transaction_is_open(broker):
    """An open transaction holds the LSO at its first offset: Fetch says so, ListOffsets latest
    answers the LSO at read_committed and the high watermark at read_uncommitted, and a
    read_committed Fetch returns nothing at or past the LSO (later non-transactional records
    included) until the transaction ends."""
    topic = ready_topic(broker)
    _plain(broker, topic, [b"x"])
    t = _Transaction(broker)
    t.add_partitions(topic)
    t.produce(topic, [b"a", b"b"])
    _plain(broker, topic, [b"y"])
    open_offsets = _offsets(broker, topic)
    from_0 = broker.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)
    from_lso = broker.fetch(topic, 0, 1, isolation_level=READ_COMMITTED)
    ended = t.end(commit=True)
    t.wait_stable(topic)
    return {"open": open_offsets,
            "read_committed_from_0": records.data_records(from_0["batches"]),
            "read_committed_from_lso": records.data_records(from_lso["batches"]),
            "read_committed_from_lso_error": errors.name(from_lso["error_code"]),
            "end": ended, "ended": _offsets(broker, topic),
            "read_committed_after": records.data_records(
                broker.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)["batches"])}


@scenario
def test_transactional_retry_is_a_duplicate(broker):
    """A transactional batch sent again within its transaction is acknowledged with its first
    offset and not appended twice (idempotence holds inside transactions)."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    t.add_partitions(topic)
    first = t.produce(topic, [b"a"])
    retry = t.produce(topic, [b"a"], sequence=0)
    t.end(commit=True)
    t.wait_stable(topic)
    return {"first": first, "retry": retry, "log": t.batches(topic)}


# --- EndTxn -------------------------------------------------------------------------------

@scenario
def test_end_txn_with_no_partitions_added(broker):
    """EndTxn right after InitProducerId (nothing added, no transaction): Kafka answers
    INVALID_TXN_STATE for both commit and abort (the Java producer does not send it)."""
    t = _Transaction(broker)
    return {"commit": t.end(commit=True), "abort": t.end(commit=False)}


@scenario
def test_end_txn_after_the_transaction_ended(broker):
    """EndTxn again after a commit: the same outcome is a retry and succeeds, the other one is
    INVALID_TXN_STATE. (While the commit's markers are written Kafka answers both with
    CONCURRENT_TRANSACTIONS, which a client retries; only what follows is compared, as when
    they are written is up to the broker.)"""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    committed = t.end(commit=True)
    abort_after = t.end(commit=False)
    commit_again = t.end(commit=True)
    t.wait_stable(topic)
    return {"commit": committed, "abort_after_commit": abort_after,
            "commit_again": commit_again, "abort_again": t.end(commit=False, retry=False),
            "log": t.batches(topic)}


@scenario
def test_end_txn_with_a_fenced_epoch(broker):
    """EndTxn from a fenced instance (another InitProducerId bumped the epoch):
    PRODUCER_FENCED from v2 on, INVALID_PRODUCER_EPOCH before; an epoch above the current one
    is fenced the same way; a producer id the transactional id does not have is
    INVALID_PRODUCER_ID_MAPPING."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    old_epoch = t.epoch
    again = t.init_producer_id()
    t.epoch = again["producer_epoch"]
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    out = {"bumped_by": t.epoch - old_epoch,
           "same_producer_id": again["producer_id"] == t.producer_id,
           "v3_old_epoch": t.end(commit=True, epoch=old_epoch, retry=False),
           "v1_old_epoch": t.end(commit=True, version=1, epoch=old_epoch, retry=False),
           "v3_future_epoch": t.end(commit=True, epoch=t.epoch + 1, retry=False),
           "v3_other_producer_id": t.end(commit=True, producer_id=t.producer_id + 1,
                                         retry=False),
           "v3_current": t.end(commit=True)}
    t.wait_stable(topic)
    out["log"] = t.batches(topic)
    return out


@scenario
def test_end_txn_for_an_unknown_transactional_id(broker):
    """EndTxn and AddPartitionsToTxn naming a transactional id the coordinator never saw:
    INVALID_PRODUCER_ID_MAPPING."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    stranger = unique("conformance-txn-unknown")
    with broker.coordinator(stranger, 1) as c:
        ended = c.call(END_TXN, 3, transactional_id=stranger, producer_id=t.producer_id,
                       producer_epoch=t.epoch, committed=True)
    with broker.coordinator(stranger, 1) as c:
        added = c.call(ADD_PARTITIONS_TO_TXN, 3, transactional_id=stranger,
                       producer_id=t.producer_id, producer_epoch=t.epoch,
                       topics=[{"name": topic, "partitions": [0]}])
    return {"end": errors.name(ended["error_code"]),
            "add": [errors.name(p["partition_error_code"])
                    for r in added["results"] for p in r["partitions"]]}


# --- AddPartitionsToTxn and fencing ---------------------------------------------------------

@scenario
def test_add_partitions_with_a_fenced_epoch(broker):
    """AddPartitionsToTxn from the instance a second InitProducerId fenced: PRODUCER_FENCED
    (v3; INVALID_PRODUCER_EPOCH at v1), and its transactional batches are refused too."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    old_epoch = t.epoch
    again = t.init_producer_id()
    return {"v3": t.add_partitions(topic, epoch=old_epoch, retry=False),
            "v1": t.add_partitions(topic, version=1, epoch=old_epoch, retry=False),
            "other_producer_id": t.add_partitions(topic, producer_id=t.producer_id + 1,
                                                  retry=False),
            "produce_old_epoch": t.produce(topic, [b"zombie"], epoch=old_epoch),
            "new_epoch": t.add_partitions(topic, epoch=again["producer_epoch"]),
            "log": t.batches(topic)}


@scenario
def test_add_partitions_with_an_unknown_topic(broker):
    """AddPartitionsToTxn naming a partition that does not exist fails the whole request: it
    gets UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED (none is added)."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    missing = unique("conformance-missing")
    answer = t.add_partitions(topic, partitions=(0, 7), retry=False,
                              more_topics=[{"name": missing, "partitions": [0]}])
    return {"answer": answer, "commit": t.end(commit=True, retry=False)}


@scenario
def test_transactional_produce_to_a_partition_not_added(broker):
    """KIP-890 part 1 (Kafka 3.6+, on by default): a transactional batch for a partition the
    transaction has not added is refused and not appended, whether the transaction has other
    partitions or none at all."""
    topic = ready_topic(broker, 2)
    t = _Transaction(broker)
    no_transaction = t.produce(topic, [b"before-any-add"], partition=1)
    t.add_partitions(topic, partitions=(0,))
    other_partition = t.produce(topic, [b"not-added"], partition=1)
    added_partition = t.produce(topic, [b"added"], partition=0)
    t.end(commit=True)
    t.wait_stable(topic, 0)
    return {"no_transaction": no_transaction, "other_partition": other_partition,
            "added_partition": added_partition, "log_1": t.batches(topic, 1),
            "offsets_1": _offsets(broker, topic, 1), "log_0": t.batches(topic, 0)}


@scenario
def test_transactional_batch_without_a_transactional_id(broker):
    """A transactional batch in a Produce that names no transactional id:
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED, nothing appended."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    t.add_partitions(topic)
    return {"produce": t.produce(topic, [b"a"], transactional_id=False),
            "log": t.batches(topic)}


# --- InitProducerId -----------------------------------------------------------------------

@scenario
def test_init_producer_id_transaction_timeout_bounds(broker):
    """A transaction timeout above transaction.max.timeout.ms (900000 by default) or not
    positive is INVALID_TRANSACTION_TIMEOUT; the maximum itself is taken."""
    t_id = unique("conformance-txn")
    out = {}
    for timeout in (900_001, 0, -1, 900_000):
        def answered():
            with broker.coordinator(t_id, 1) as c:
                a = c.call(INIT_PRODUCER_ID, 4, transactional_id=t_id,
                           transaction_timeout_ms=timeout, producer_id=-1, producer_epoch=-1)
            out[timeout] = errors.name(a["error_code"])
            return out[timeout] not in RETRIABLE
        wait_until(answered, "InitProducerId")
    return {str(k): v for k, v in out.items()}


@scenario
def test_init_producer_id_aborts_the_open_transaction(broker):
    """InitProducerId for a transactional id whose transaction is open (a producer restarted):
    the coordinator fences the old epoch and aborts the transaction (an ABORT marker at the new
    epoch; Kafka answers CONCURRENT_TRANSACTIONS until it is done, which the client retries),
    then hands out the same producer id at the next epoch."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    again = t.init_producer_id()
    t.wait_stable(topic)
    return {"error": errors.name(again["error_code"]),
            "epoch_bump": again["producer_epoch"] - t.epoch,
            "same_producer_id": again["producer_id"] == t.producer_id,
            "log": t.batches(topic),
            "aborted": t.aborted(broker.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)),
            "old_epoch_produce": t.produce(topic, [b"b"]),
            "old_epoch_end": t.end(commit=True, retry=False)}


def _init_answer(t, answer, old_epoch):
    """An InitProducerId answer as comparable facts: its error, the epoch's distance from
    `old_epoch`, and whether the producer id is the transaction's."""
    return {"error": errors.name(answer["error_code"]),
            "epoch": answer["producer_epoch"] - old_epoch if answer["error_code"] == 0 else None,
            "same_producer_id": answer["producer_id"] == t.producer_id}


@scenario
def test_init_producer_id_epoch_bump_kip_360(broker):
    """InitProducerId v4 with the producer's current id and epoch (KIP-360: a producer
    recovers from an abortable error without a new id): the same producer id at the next epoch;
    the same request again (a retry whose answer was lost) gets that epoch back without another
    bump; an epoch that is neither is fenced, so is another producer id; an id without an epoch
    is INVALID_REQUEST. Batches of the old epoch are then refused."""
    topic = ready_topic(broker)
    t = _Transaction(broker)
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    t.end(commit=True)
    t.wait_stable(topic)
    old_epoch = t.epoch
    bumped = t.init_producer_id(producer_id=t.producer_id, producer_epoch=old_epoch)
    retried = t.init_producer_id(producer_id=t.producer_id, producer_epoch=old_epoch,
                                 retry=False)
    t.epoch = bumped["producer_epoch"]
    out = {"bump": _init_answer(t, bumped, old_epoch),
           "retry_of_the_bump": _init_answer(t, retried, old_epoch),
           "other_epoch": errors.name(t.init_producer_id(
               producer_id=t.producer_id, producer_epoch=t.epoch + 5,
               retry=False)["error_code"]),
           "other_producer_id": errors.name(t.init_producer_id(
               producer_id=t.producer_id + 1, producer_epoch=t.epoch,
               retry=False)["error_code"]),
           "id_without_epoch": errors.name(t.init_producer_id(
               producer_id=t.producer_id, producer_epoch=-1, retry=False)["error_code"]),
           "epoch_without_id": errors.name(t.init_producer_id(
               producer_id=-1, producer_epoch=t.epoch, retry=False)["error_code"])}
    t.add_partitions(topic)
    out["old_epoch_batch"] = t.produce(topic, [b"old"], epoch=old_epoch, sequence=1)
    out["new_epoch_batch"] = t.produce(topic, [b"new"], sequence=0)
    t.end(commit=True)
    t.wait_stable(topic)
    out["log"] = t.batches(topic)
    return out


@scenario
def test_init_producer_id_kip_360_from_a_fenced_instance(broker):
    """A second instance's InitProducerId (no id, no epoch) fences the first; the first one's
    KIP-360 bump with its old epoch must then be PRODUCER_FENCED, not taken for a retry of a
    bump (Kafka forgets the previous epoch when a new instance initialises), or two instances
    would share an epoch."""
    t = _Transaction(broker)
    first_epoch = t.epoch
    second = t.init_producer_id()
    zombie = t.init_producer_id(producer_id=t.producer_id, producer_epoch=first_epoch,
                                retry=False)
    return {"second_instance": _init_answer(t, second, first_epoch),
            "first_instance_bump": _init_answer(t, zombie, first_epoch)}


@scenario
def test_init_producer_id_kip_360_after_a_timeout(broker):
    """The coordinator aborted a transaction that outlived its timeout, fencing its epoch; the
    producer's KIP-360 bump with that epoch is then PRODUCER_FENCED (Kafka's fence forgets the
    previous epoch), and its plain InitProducerId gets the next epoch."""
    topic = ready_topic(broker)
    t = _Transaction(broker, timeout_ms=1000)
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    t.wait_stable(topic)
    bump = t.init_producer_id(producer_id=t.producer_id, producer_epoch=t.epoch, retry=False)
    plain = t.init_producer_id(timeout_ms=60000)
    return {"bump": _init_answer(t, bump, t.epoch), "plain": _init_answer(t, plain, t.epoch),
            "log": t.batches(topic)}


@scenario
def test_init_producer_id_kip_360_for_an_unknown_transactional_id(broker):
    """KIP-360 InitProducerId for a transactional id the coordinator does not know (it expired,
    the producer saw UNKNOWN_PRODUCER_ID): Kafka takes it as a new id and answers a new producer
    id at epoch 0, whatever id and epoch the request carried."""
    t_id = unique("conformance-txn")
    answer = {}

    def answered():
        with broker.coordinator(t_id, 1) as c:
            answer.update(c.call(INIT_PRODUCER_ID, 4, transactional_id=t_id,
                                 transaction_timeout_ms=60000, producer_id=123_456_789,
                                 producer_epoch=7))
        return errors.name(answer["error_code"]) not in RETRIABLE
    wait_until(answered, "InitProducerId")
    return {"error": errors.name(answer["error_code"]), "epoch": answer["producer_epoch"],
            "producer_id_as_sent": answer["producer_id"] == 123_456_789}


@scenario
def test_transaction_timeout_aborts_and_fences(broker):
    """A transaction open past its timeout is aborted by the coordinator, which bumps the
    epoch: an ABORT marker appears, and the producer's EndTxn(commit) is then fenced."""
    topic = ready_topic(broker)
    t = _Transaction(broker, timeout_ms=1000)
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    t.wait_stable(topic)
    return {"log": t.batches(topic), "commit": t.end(commit=True, retry=False)}


# --- offsets in transactions -------------------------------------------------------------------

@scenario
def test_txn_offset_commit_before_add_offsets(broker):
    """TxnOffsetCommit for a group the transaction has not added with AddOffsetsToTxn."""
    topic = ready_topic(broker)
    group = unique("conformance-group")
    t = _Transaction(broker)
    t.add_partitions(topic)
    t.produce(topic, [b"a"])
    early = t.commit_offset(group, topic, 5)
    end = t.end(commit=True)
    t.wait_stable(topic)
    return {"txn_offset_commit": early, "end": end,
            "fetched": _offset_fetch(broker, group, topic, require_stable=True)}


@scenario
def test_pending_transactional_offsets_are_unstable(broker):
    """Offsets a transaction commits are pending until it ends: OffsetFetch v7 with
    require_stable answers UNSTABLE_OFFSET_COMMIT for the partition, without it the last stable
    offset (none: -1); after the commit both see the offset."""
    topic = ready_topic(broker)
    group = unique("conformance-group")
    t = _Transaction(broker)
    add = t.add_offsets(group)
    committed = t.commit_offset(group, topic, 5)
    pending = {"stable": _offset_fetch(broker, group, topic, require_stable=True),
               "any": _offset_fetch(broker, group, topic, require_stable=False)}
    end = t.end(commit=True)
    after = {}

    def applied():
        after.update(_offset_fetch(broker, group, topic, require_stable=True))
        return after["error"] != "UNSTABLE_OFFSET_COMMIT"
    wait_until(applied, "the transaction's offsets to be applied")
    return {"add_offsets": add, "txn_offset_commit": committed, "pending": pending, "end": end,
            "after_commit": after,
            "after_commit_any": _offset_fetch(broker, group, topic, require_stable=False)}


@scenario
def test_offsets_of_an_aborted_transaction_are_dropped(broker):
    """An aborted transaction's offsets are never applied: after the abort, OffsetFetch (stable
    or not) finds no offset."""
    topic = ready_topic(broker)
    group = unique("conformance-group")
    t = _Transaction(broker)
    add = t.add_offsets(group)
    committed = t.commit_offset(group, topic, 7)
    end = t.end(commit=False)
    after = {}

    def settled():
        after.update(_offset_fetch(broker, group, topic, require_stable=True))
        return after["error"] != "UNSTABLE_OFFSET_COMMIT"
    wait_until(settled, "the transaction's offsets to be dropped")
    return {"add_offsets": add, "txn_offset_commit": committed, "end": end,
            "after_abort": after}


@scenario
def test_txn_offset_commit_with_a_fenced_epoch(broker):
    """TxnOffsetCommit from a fenced instance: the group coordinator refuses it
    (PRODUCER_FENCED at v3) and keeps no pending offset."""
    topic = ready_topic(broker)
    group = unique("conformance-group")
    t = _Transaction(broker)
    t.add_offsets(group)
    old_epoch = t.epoch
    t.init_producer_id()
    return {"txn_offset_commit": t.commit_offset(group, topic, 3, epoch=old_epoch),
            "fetched": _offset_fetch(broker, group, topic, require_stable=True)}
