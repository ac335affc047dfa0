"""Fixtures for the PyPI clients' suite (scripts/pypi_clients.sh runs it in a venv holding the
clients pinned in requirements.txt).

Every test takes `broker`, parametrized over the bundled broker's binary (EXACTLY_BROKER_BIN, one
process per test module, in memory) and the Apache Kafka cluster the kafka labels run
(EXACTLY_KAFKA_CLUSTER): the same assertions passing on Kafka prove the tests right. Without a
Kafka cluster that half skips and says why.
"""
import asyncio
import inspect
import os
import pathlib
import sys
import time
import uuid

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "kafka"))
import kafka_cluster  # noqa: E402  (puts tests/wire on the path)
import wire  # noqa: E402
from apis import API_VERSIONS  # noqa: E402

# How long a test waits for something that should happen in a moment (a rebalance, records)
# before failing: generous, so that a loaded CI machine is not a failure.
TIMEOUT = 60.0


def pytest_configure(config):
    # kafka-python 3.0.12 loads its protocol schemas with importlib.resources' deprecated
    # read_text/open_text: a hundred warnings a run that are about the client, not the broker.
    for message in ("read_text is deprecated", "open_text is deprecated"):
        config.addinivalue_line("filterwarnings", f"ignore:{message}:DeprecationWarning")


class Broker:
    def __init__(self, kind, bootstrap):
        self.kind = kind  # "bundled" or "kafka"
        self.bootstrap = bootstrap

    def __repr__(self):
        return f"{self.kind} at {self.bootstrap}"


@pytest.fixture(scope="module", params=["bundled", "kafka"])
def broker(request):
    if request.param == "bundled":
        with kafka_cluster.bundled_broker() as bootstrap:
            yield Broker("bundled", bootstrap)
        return
    directory = os.environ.get("EXACTLY_KAFKA_CLUSTER")
    if not directory:
        pytest.skip("the Apache Kafka half needs a running cluster (EXACTLY_KAFKA_CLUSTER, as "
                    "the kafka1 label's kafka1_pypi_clients test sets it)")
    yield Broker("kafka", kafka_cluster.KafkaCluster.attach(directory).bootstrap_servers)


def unique(prefix):
    """A topic, group or transactional id no other test uses (brokers are shared per module)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def wait_until(predicate, what, pump=None, timeout=TIMEOUT):
    """Calls pump() (a client's poll) until predicate() holds. `what` (a string, or a callable
    giving one, for the state at the time) names the failure if it never does."""
    deadline = time.monotonic() + timeout
    while True:
        if pump is not None:
            pump()
        if predicate():
            return
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f} s: {what() if callable(what) else what}")
        if pump is None:
            time.sleep(0.05)


async def async_wait_until(predicate, what, pump=None, timeout=TIMEOUT):
    """wait_until for asyncio clients: pump is a coroutine function, and predicate may be one."""
    deadline = time.monotonic() + timeout
    while True:
        if pump is not None:
            await pump()
        held = predicate()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f} s: {what() if callable(what) else what}")
        if pump is None:
            await asyncio.sleep(0.05)


def wait_for_value(read, want, what):
    """Until read() == want. Kafka's brokers apply an admin change (configs, partitions) when
    the controller's record reaches them, a moment after the answer (the bundled broker at
    once); a transaction's coordinator writes its markers after EndTxn answers. Fails showing
    the last value read."""
    seen = []

    def matches():
        seen[:] = [read()]
        return seen[0] == want

    wait_until(matches, lambda: f"{what}: {seen[0]!r}, not {want!r}")


async def async_wait_for_value(read, want, what):
    """wait_for_value with a coroutine function for read."""
    seen = []

    async def matches():
        seen[:] = [await read()]
        return seen[0] == want

    await async_wait_until(matches, lambda: f"{what}: {seen[0]!r}, not {want!r}")


def api_versions(bootstrap):
    """ApiVersions v0 asked of the first bootstrap server: {api key: (min, max)}."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    answer = wire.call_once(host, port, API_VERSIONS, 0, client_id="exactly-side-by-side-test",
                            timeout=10)
    assert answer["error_code"] == 0, "ApiVersions answered an error"
    return {a["api_key"]: (a["min_version"], a["max_version"]) for a in answer["api_keys"]}


def now_ms():
    return int(time.time() * 1000)
