"""KIP-664's abort from Python: Broker.abort_transaction ends a transaction
that holds back read_committed readers, as Kafka's admin abortTransaction
does for a hanging one."""

import pytest

import exactly
from conftest import read_committed


def test_abort_transaction_releases_read_committed(exactly_broker, topic):
    servers = exactly_broker.bootstrap_servers
    with exactly.TransactionalProducer(servers, "left-open") as txn:
        txn.begin()
        txn.send(topic, value=b"never-committed", partition=0)
        txn.flush()
        with exactly.Producer(servers) as plain:
            plain.send(topic, value=b"after", partition=0)
            plain.flush()
        # The open transaction holds read_committed readers at its start.
        held = exactly_broker.offsets(topic, 0)
        assert (held.high_watermark, held.last_stable_offset) == (2, 0)
        producer_id = exactly_broker.read_log(topic, 0)[0].producer_id

        assert exactly_broker.abort_transaction(topic, 0, producer_id) == 2
        log = exactly_broker.read_log(topic, 0)
        assert log[-1].control and not log[-1].commit_marker
        assert exactly_broker.offsets(topic, 0).last_stable_offset == 3
        got = read_committed(servers, topic, 1)
        assert [m.value for m in got] == [b"after"]

        # Nothing is open there any more.
        with pytest.raises(exactly.Error) as e:
            exactly_broker.abort_transaction(topic, 0, producer_id)
        assert e.value.status == "NOT_FOUND"
        txn.abort()
