"""The durable spool from Python: a producer process SIGKILLed several
times while it spools and drains; every record reaches Kafka exactly
once."""

import os
import random
import signal
import subprocess
import sys

import pytest

import exactly

CHILD = os.path.join(os.path.dirname(__file__), "spool_child.py")

pytestmark = pytest.mark.skipif(
    not hasattr(exactly, "SpooledProducer"),
    reason="this build of exactly has no SpooledProducer (the SDK's spool)")


def start_child(directory, servers, topic, n):
    return subprocess.Popen(
        [sys.executable, CHILD, str(directory), servers, topic, str(n)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"))


def test_spool_survives_sigkill_exactly_once(exactly_broker, topic, tmp_path):
    n = 1000
    servers = exactly_broker.bootstrap_servers
    directory = tmp_path / "spool"
    rng = random.Random(7)
    kills = 0
    starts = []
    while kills < 4:
        child = start_child(directory, servers, topic, n)
        wanted = rng.randint(1, 4)  # progress lines before the kill
        seen = 0
        for line in child.stdout:
            if line.startswith("start"):
                starts.append(int(line.split()[1]))
            elif line.startswith("spooled"):
                seen += 1
                if seen >= wanted:
                    break
            elif line.startswith("done"):
                break
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        child.stdout.close()
        kills += 1
    # The last run goes to the end and waits until Kafka has everything.
    child = start_child(directory, servers, topic, n)
    out, _ = child.communicate(timeout=600)
    assert child.returncode == 0, out
    assert "done" in out
    starts.append(int(out.split("start ")[1].split()[0]))
    assert starts[-1] > 0  # it resumed after the recovered cursor
    assert len(starts) == 5

    records = exactly_broker.committed_records(topic)
    values = [int(r.value) for r in records]
    assert len(values) == n, (len(values), len(set(values)))
    assert values == list(range(n))  # each once, in order
    assert [int(r.key) for r in records] == list(range(n))


def test_spooled_producer_api(exactly_broker, topic, tmp_path):
    servers = exactly_broker.bootstrap_servers
    errors = []
    with exactly.SpooledProducer(tmp_path / "s", servers, f"spool-api-{os.getpid()}",
                                 on_error=errors.append) as p:
        assert p.exactly_once and p.spool_id and p.recovered_cursor == ""
        p.send(topic, value=b"one", key="k", cursor="c1")
        p.send_batch(topic, [b"two", ("k3", "three")], cursor="c3")
        p.flush(timeout=120)
        m = p.metrics()
        assert m.appended == 3 and m.depth == 0 and m.committed == 3
        assert m.drainer_error is None
        assert p.quarantined() == []
    assert p.closed
    with exactly.SpooledProducer(tmp_path / "s", servers, f"spool-api-{os.getpid()}") as p:
        assert p.recovered_cursor == "c3"
    assert [r.value for r in exactly_broker.committed_records(topic)] == \
        [b"one", b"two", b"three"]
    with pytest.raises(exactly.StateError):
        p.send(topic, b"closed")


def test_send_batch_async_completes_each_call_once(exactly_broker, topic,
                                                   tmp_path):
    servers = exactly_broker.bootstrap_servers
    errors = []
    outcomes = []
    with exactly.SpooledProducer(tmp_path / "s", servers, f"spool-async-{os.getpid()}",
                                 on_error=errors.append) as p:
        for call in range(50):
            values = [b"v%04d" % (10 * call + i) for i in range(10)]
            p.send_batch_async(
                topic, values, cursor="c%d" % call,
                on_durable=lambda e, call=call: outcomes.append((call, e)))
        # Without on_durable: a success is silent.
        p.send_batch_async(topic, [b"v0500"])
        p.flush(timeout=120)
        # Completions run on this thread, in the order the calls were made.
        assert outcomes == [(call, None) for call in range(50)]
        assert p.metrics().committed == 501
        with pytest.raises(exactly.Error):
            p.send_batch_async(topic, [b"x" * 2_000_000],
                               on_durable=outcomes.append)
        assert len(outcomes) == 50  # refused: never completes
    assert errors == []
    with exactly.SpooledProducer(tmp_path / "s", servers, f"spool-async-{os.getpid()}") as p:
        assert p.recovered_cursor == "c49"  # the last cursor stored
    values = [r.value for r in exactly_broker.committed_records(topic)]
    assert values == [b"v%04d" % i for i in range(501)]
