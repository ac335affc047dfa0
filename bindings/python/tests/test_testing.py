"""exactly.testing and the pytest plugin: the bundled broker in-process,
used the way a user's own suite uses it, and its faults from Python."""

import importlib.metadata
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

import pytest

import exactly
from exactly.testing import ApiKey, Broker, api_key, error_code
from conftest import read_committed

USER_SUITE = '''
import pytest
import exactly


def test_orders_are_written_once(exactly_broker):
    exactly_broker.create_topic("orders", 3)
    exactly_broker.faults.drop_produce_responses(count=3)
    p = exactly.TransactionalProducer(exactly_broker.bootstrap_servers,
                                      "orders-writer")
    with p.transaction() as txn:
        for i in range(30):
            txn.send("orders", key=str(i), value=f"order {i}",
                     partition=i % 3)
    p.close()
    records = exactly_broker.committed_records("orders")
    assert sorted(r.value for r in records) == sorted(
        f"order {i}".encode() for i in range(30))


@pytest.mark.exactly_broker(topics={"payments": 2})
def test_marker_configures_the_broker(exactly_broker,
                                      exactly_bootstrap_servers):
    assert exactly_broker.partitions("payments") == 2
    assert exactly_bootstrap_servers == exactly_broker.bootstrap_servers


def test_each_test_gets_a_fresh_broker(exactly_broker):
    assert "orders" not in exactly_broker.topics()


def test_factory_with_a_data_dir(exactly_broker_factory, tmp_path):
    broker = exactly_broker_factory(data_dir=str(tmp_path))
    with exactly.Producer(broker.bootstrap_servers) as p:
        p.send("kept", b"across restarts")
    broker.restart("crash")
    assert [r.value for r in broker.records("kept")] == [b"across restarts"]
'''


def run_user_suite(tmp_path, extra_args=(), env=None):
    (tmp_path / "test_user_suite.py").write_text(USER_SUITE)
    # The user's suite is about the bundled broker's fixture, whatever
    # cluster this suite runs against.
    env = dict(os.environ if env is None else env)
    env.pop("EXACTLY_TEST_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *extra_args, str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env=env)


PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def plugin_installed():
    return any(ep.value == "exactly.pytest_plugin" for ep in
               importlib.metadata.entry_points(group="pytest11"))


def declared_pytest11_entry_points():
    """[project.entry-points.pytest11] of pyproject.toml: what pip
    install registers."""
    with open(PYPROJECT, "rb") as f:
        project = tomllib.load(f)["project"]
    return dict(project["entry-points"]["pytest11"])


def test_a_users_suite_uses_the_fixture(tmp_path):
    # As in a build tree: the plugin loaded with -p.
    result = run_user_suite(tmp_path, ["-p", "exactly.pytest_plugin"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_the_entry_point_loads_the_plugin(tmp_path):
    # No -p: pytest finds the plugin through the pytest11 entry point. When
    # exactly is installed that is the installed one; from a build tree,
    # the entry points pyproject.toml declares are registered the way pip
    # registers them (a dist-info directory on the path).
    declared = declared_pytest11_entry_points()
    assert declared == {"exactly.pytest_plugin": "exactly.pytest_plugin"}
    env = dict(os.environ)
    if not plugin_installed():
        site = tmp_path / "site"
        info = site / "exactly-0.0.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: exactly\nVersion: 0.0.0\n")
        (info / "entry_points.txt").write_text("[pytest11]\n" + "".join(
            f"{name} = {value}\n" for name, value in declared.items()))
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(site), env.get("PYTHONPATH")) if p)
    suite = tmp_path / "suite"
    suite.mkdir()
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    result = run_user_suite(suite, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_a_real_cluster_skips_fault_tests(tmp_path, exactly_broker):
    # EXACTLY_TEST_BOOTSTRAP names a cluster: fault injection skips.
    (tmp_path / "test_external.py").write_text(textwrap.dedent('''
        def test_faults(exactly_broker):
            exactly_broker.faults.broker_down(1)

        def test_servers(exactly_bootstrap_servers):
            assert exactly_bootstrap_servers == "%s"
    ''' % exactly_broker.bootstrap_servers))
    env = dict(os.environ,
               EXACTLY_TEST_BOOTSTRAP=exactly_broker.bootstrap_servers)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p",
         "no:cacheprovider", "-p", "exactly.pytest_plugin", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped" in result.stdout
    assert "needs the bundled broker" in result.stdout


def test_start_stop_and_context_manager(topic):
    broker = Broker()
    assert not broker.running
    with pytest.raises(exactly.Error, match="not running"):
        broker.bootstrap_servers
    broker.start()
    host, port = broker.bootstrap_servers.split(":")
    assert host == "127.0.0.1" and int(port) == broker.port > 0
    broker.stop()
    broker.stop()  # idempotent
    with Broker(topics=[topic], default_partitions=2) as b:
        assert b.partitions(topic) == 2
        assert topic in b.topics()
    assert not b.running
    with pytest.raises(TypeError, match="unknown broker option"):
        Broker(no_such_option=1)


def test_limits_are_options(topic):
    # One connection at a time: a second client's connections are refused,
    # and a limit that is not positive is refused at start.
    with Broker(topics=[topic], max_connections=1,
                max_in_flight_request_bytes=1 << 20,
                max_decompressed_batch_bytes=1 << 20,
                max_frame_waste_bytes=1 << 20) as b:
        first = socket.create_connection(("127.0.0.1", b.port))
        second = socket.create_connection(("127.0.0.1", b.port))
        second.settimeout(10)
        assert second.recv(1) == b"", "a connection past the limit was kept"
        first.close()
        second.close()
    with pytest.raises(exactly.Error, match="must be positive"):
        Broker(max_connections=0).start()


def test_other_clients_talk_to_it(exactly_broker, topic):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    p = confluent_kafka.Producer(
        {"bootstrap.servers": exactly_broker.bootstrap_servers})
    p.produce(topic, b"from confluent")
    assert p.flush(30) == 0
    assert [m.value for m in read_committed(
        exactly_broker.bootstrap_servers, topic, 1)] == [b"from confluent"]


def test_names_for_apis_and_errors():
    assert api_key("produce") == api_key("Produce") == ApiKey.PRODUCE == 0
    assert api_key("EndTxn") == api_key("END_TXN") == 26
    assert api_key(None) is None
    assert error_code("NOT_LEADER_OR_FOLLOWER") == \
        error_code("NOT_LEADER_FOR_PARTITION") == 6
    assert error_code("COORDINATOR_NOT_AVAILABLE") == 15
    with pytest.raises(ValueError):
        error_code("NO_SUCH_ERROR")
    with pytest.raises(ValueError):
        api_key("no_such_api")


# ---- Every fault of the fault model, from Python ----

def test_fault_fail_requests(exactly_broker, topic):
    exactly_broker.faults.fail_requests("produce", "NOT_ENOUGH_REPLICAS",
                                        count=3, topic=topic, partition=0)
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        report = p.send_future(topic, b"retried").result(timeout=60)
    assert report.offset == 0  # retriable: librdkafka retried it through
    assert [r.value for r in exactly_broker.records(topic)] == [b"retried"]
    history = exactly_broker.faults.history()
    assert sum("injected NOT_ENOUGH_REPLICAS" in h for h in history) == 3


def test_fault_drop_produce_responses_no_duplicates(exactly_broker, topic):
    exactly_broker.faults.drop_produce_responses(count=4, one_in=1,
                                                 topic=topic)
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        for i in range(500):
            p.send(topic, str(i))
            if i % 100 == 99:
                p.flush()
    assert [r.value for r in exactly_broker.records(topic)] == \
        [str(i).encode() for i in range(500)]


def test_fault_drop_produce_responses_keep_open_no_duplicates(
        exactly_broker, topic):
    # The connection stays open: the producer notices after its request
    # timeout (librdkafka's socket.timeout.ms, 1 s here), then retries.
    exactly_broker.faults.drop_produce_responses_keep_open(count=2, one_in=2,
                                                           topic=topic)
    with exactly.Producer(exactly_broker.bootstrap_servers,
                          config={"socket.timeout.ms": 1000}) as p:
        for i in range(300):
            p.send(topic, str(i))
            if i % 50 == 49:
                p.flush()
    assert [r.value for r in exactly_broker.records(topic)] == \
        [str(i).encode() for i in range(300)]
    history = exactly_broker.faults.history()
    assert sum("connection kept open" in h for h in history) == 2


def test_fault_latency_close_connections_broker_down(exactly_broker, topic):
    faults = exactly_broker.faults
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        faults.add_latency(0.2, "produce")
        p.send(topic, b"slow")
        p.flush()
        faults.add_latency(0, "produce")
        faults.close_all_connections()
        p.send(topic, b"reconnected")
        p.flush()
        faults.broker_down(0.5)
        p.send(topic, b"after the outage")
        p.flush()
    assert [r.value for r in exactly_broker.records(topic)] == \
        [b"slow", b"reconnected", b"after the outage"]
    history = "\n".join(faults.history()).lower()
    for word in ("latency", "close", "down"):
        assert word in history, history


def test_fault_restarts(exactly_broker_factory, topic, tmp_path):
    broker = exactly_broker_factory(data_dir=str(tmp_path / "d"),
                                    flush_every_messages=1)
    with exactly.Producer(broker.bootstrap_servers) as p:
        p.send(topic, b"one")
        p.flush()
        broker.restart("clean")
        p.send(topic, b"two")
        p.flush()
        broker.faults.restart("crash")
        p.send(topic, b"three")
        p.flush()
        broker.restart("power_loss")  # synced after every message: kept
    assert [r.value for r in broker.records(topic)] == \
        [b"one", b"two", b"three"]
    assert broker.offsets(topic).high_watermark == 3
    with pytest.raises(ValueError, match="restart mode"):
        broker.restart("explode")


def test_fault_clear(exactly_broker, topic):
    exactly_broker.faults.fail_requests("produce", "MESSAGE_TOO_LARGE", -1,
                                        topic=topic)
    exactly_broker.faults.clear()
    with exactly.Producer(exactly_broker.bootstrap_servers) as p:
        assert p.send_future(topic, b"ok").result(timeout=60).offset == 0
