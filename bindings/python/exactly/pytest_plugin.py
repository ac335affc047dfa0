"""pytest plugin: the bundled broker as fixtures.

Registered by entry point (``pytest11``) when the package is installed; from
a build tree, load it with ``-p exactly.pytest_plugin``.

Fixtures:

* ``exactly_broker``: a started :class:`exactly.testing.Broker`, new for each
  test, in memory on an ephemeral port. Configure it per test with the
  marker ``@pytest.mark.exactly_broker(topics={"orders": 3}, ...)`` (the
  Broker's options).
* ``exactly_broker_factory``: ``factory(**options)`` starts another broker
  (e.g. with ``data_dir=tmp_path``); all are stopped after the test.
* ``exactly_bootstrap_servers``: the ``exactly_broker``'s address.
* ``exactly_cluster``: a started cluster of 3 bundled brokers in this
  process (``Broker(brokers=3)``), new for each test, with the per-broker
  faults on its ``faults`` (kill, isolate, heal, pause_replication, ...).
  Configure it with ``@pytest.mark.exactly_cluster(brokers=5, ...)``.

asyncio: the fixtures are plain (the broker runs on threads of its own), so
they serve ``async def`` tests under any runner. Without pytest-asyncio,
mark a coroutine test ``@pytest.mark.exactly_aio`` (optionally
``timeout=60``): the plugin runs it with ``asyncio.run``, a fresh loop per
test, under that timeout. Or take the ``exactly_aio_run`` fixture,
``run(coro, timeout=60.0)``, in a plain test. With pytest-asyncio
installed, its own ``@pytest.mark.asyncio`` works too (leave such tests
unmarked by ``exactly_aio``)::

    @pytest.mark.exactly_aio
    async def test_send(exactly_broker):
        async with exactly.aio.Producer(exactly_broker.bootstrap_servers) as p:
            report = await p.send("orders", value=b"v")

When ``EXACTLY_TEST_BOOTSTRAP`` names a real cluster, ``exactly_broker`` is
that cluster instead: ``bootstrap_servers`` points at it, and what only the
bundled broker can do (faults, restarts, reading its log) skips the test
with a message saying so.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from typing import (Any, Awaitable, Callable, Iterator, List, Mapping,
                    Optional, TypeVar)

import pytest

from exactly.testing import Broker


# Errors a query meets while a cluster moves a partition's leader.
_STALE_METADATA = frozenset({
    3,     # UNKNOWN_TOPIC_OR_PARTITION (metadata not yet on that broker)
    5,     # LEADER_NOT_AVAILABLE
    6,     # NOT_LEADER_OR_FOLLOWER
    -195,  # _TRANSPORT (the old leader went away)
})

ENV_BOOTSTRAP = "EXACTLY_TEST_BOOTSTRAP"

#: How long an exactly_aio test (or exactly_aio_run) may run, by default.
AIO_TIMEOUT = 60.0

_T = TypeVar("_T")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "exactly_broker(**options): options for the exactly_broker fixture "
        "(see exactly.testing.Broker)",
    )
    config.addinivalue_line(
        "markers",
        "exactly_cluster(**options): options for the exactly_cluster fixture "
        "(see exactly.testing.Broker; brokers defaults to 3)",
    )
    config.addinivalue_line(
        "markers",
        "exactly_aio(timeout=60.0): run this async def test with "
        "asyncio.run, a new event loop, under `timeout` seconds",
    )


def run_aio(coro: Awaitable[_T], timeout: Optional[float] = AIO_TIMEOUT
            ) -> _T:
    """Runs `coro` in a new event loop (asyncio.run), failing it with
    asyncio.TimeoutError after `timeout` seconds (None: no limit)."""
    async def guarded() -> _T:
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(guarded())


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Optional[bool]:
    """Runs the coroutine tests marked exactly_aio; leaves every other test
    to pytest (and to pytest-asyncio or anyio, if installed)."""
    marker = pyfuncitem.get_closest_marker("exactly_aio")
    if marker is None or not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    timeout = marker.kwargs.get("timeout", AIO_TIMEOUT)
    funcargs = pyfuncitem.funcargs
    names = pyfuncitem._fixtureinfo.argnames
    run_aio(pyfuncitem.obj(**{name: funcargs[name] for name in names}),
            timeout)
    return True


class ExternalBroker:
    """A real cluster named by EXACTLY_TEST_BOOTSTRAP, in the place of the
    bundled broker."""

    def __init__(self, bootstrap_servers: str) -> None:
        self.bootstrap_servers = bootstrap_servers

    def _skip(self, what: str) -> Any:
        pytest.skip(f"{what} needs the bundled broker; {ENV_BOOTSTRAP} names "
                    f"a real cluster ({self.bootstrap_servers})")

    @property
    def faults(self) -> Any:
        return self._skip("fault injection")

    def create_topic(self, name: str, partitions: int = 1,
                     config: Optional[Mapping[str, Any]] = None,
                     replication_factor: int = -1) -> None:
        try:
            from confluent_kafka.admin import AdminClient, NewTopic
        except ImportError:
            self._skip("creating topics without confluent-kafka")
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        # Replication factor -1: the cluster's default.replication.factor, so
        # that acks=all meets a min.insync.replicas above 1.
        futures = admin.create_topics([NewTopic(
            name, partitions, replication_factor,
            config={k: str(v) for k, v in (config or {}).items()})])
        for future in futures.values():
            future.result()
        self._wait_for_topic(name, partitions)

    @staticmethod
    def _wait_for_topic(name: str, partitions: int) -> None:
        """Kafka spreads a new topic's metadata to its brokers asynchronously;
        a broker that has not heard of it yet tells a client it does not
        exist. On a cluster the project's harness runs (EXACTLY_KAFKA_CLUSTER,
        scripts/kafka.sh), wait until every broker serves it."""
        cluster = os.environ.get("EXACTLY_KAFKA_CLUSTER")
        if not cluster:
            return
        import json
        import subprocess
        import sys
        with open(os.path.join(cluster, "cluster.json")) as f:
            harness = json.load(f).get("harness")
        if harness:
            subprocess.run([sys.executable, harness, "wait-topic", cluster,
                            name, str(partitions)], check=True)

    # What a test reads back, read from the real cluster by a consumer: the
    # same answers the bundled broker gives from its log (control records
    # aside, which no consumer sees).

    def partitions(self, topic: str) -> int:
        admin = self._admin()
        meta = admin.list_topics(topic, timeout=30).topics.get(topic)
        return 0 if meta is None or meta.error is not None else len(meta.partitions)

    def records(self, topic: str, partition: int = 0) -> List[Any]:
        """Every data record of the partition, whatever its transaction's
        outcome (read_uncommitted)."""
        return self._read(topic, [partition], "read_uncommitted")

    def committed_records(self, topic: str,
                          partition: Optional[int] = None) -> List[Any]:
        """What a read_committed consumer sees, partition after partition."""
        parts = (list(range(self.partitions(topic))) if partition is None
                 else [partition])
        return self._read(topic, parts, "read_committed")

    def committed_offset(self, group: str, topic: str,
                         partition: int = 0) -> Optional[int]:
        from confluent_kafka import Consumer, TopicPartition
        consumer = Consumer({"bootstrap.servers": self.bootstrap_servers,
                             "group.id": group, "enable.auto.commit": False})
        try:
            [tp] = consumer.committed([TopicPartition(topic, partition)],
                                      timeout=30)
        finally:
            consumer.close()
        return tp.offset if tp.offset >= 0 else None

    def _admin(self) -> Any:
        try:
            from confluent_kafka.admin import AdminClient
        except ImportError:
            self._skip("reading a real cluster without confluent-kafka")
        return AdminClient({"bootstrap.servers": self.bootstrap_servers})

    def _watermarks(self, topic: str, partition: int) -> Any:
        from confluent_kafka import Consumer, KafkaException, TopicPartition
        consumer = Consumer({"bootstrap.servers": self.bootstrap_servers,
                             "group.id": "exactly-pytest-reader",
                             "isolation.level": "read_uncommitted"})
        try:
            # A cluster moves leaders (a broker restarting, a preferred
            # leader election): a query that meets a stale leader is asked
            # again once librdkafka has new metadata, as a client would.
            deadline = time.monotonic() + 30
            while True:
                try:
                    return consumer.get_watermark_offsets(
                        TopicPartition(topic, partition),
                        timeout=max(1.0, deadline - time.monotonic()))
                except KafkaException as e:
                    if (e.args[0].code() not in _STALE_METADATA
                            or time.monotonic() >= deadline):
                        raise
                    time.sleep(0.2)
        finally:
            consumer.close()

    def _read(self, topic: str, partitions: List[int],
              isolation: str) -> List[Any]:
        from confluent_kafka import Consumer, TopicPartition
        from exactly.testing import LoggedRecord
        out: List[Any] = []
        for partition in partitions:
            consumer = Consumer({
                "bootstrap.servers": self.bootstrap_servers,
                "group.id": "exactly-pytest-reader",
                "enable.auto.commit": False, "isolation.level": isolation})
            try:
                # Read to the high watermark, markers included. Kafka
                # answers EndTxn before it writes the markers, so a
                # read_committed consumer asked for the end right after a
                # commit may be told an older last stable offset: the end
                # comes from a read_uncommitted query, and the read waits
                # for the markers to reach it.
                low, high = self._watermarks(topic, partition)
                consumer.assign([TopicPartition(topic, partition, low)])
                position = low
                deadline = time.monotonic() + 30
                while position < high and time.monotonic() < deadline:
                    m = consumer.poll(0.2)
                    if m is None:
                        # Past the last record this isolation shows (an
                        # aborted tail, markers): done once the position
                        # reaches the end.
                        [tp] = consumer.position(
                            [TopicPartition(topic, partition)])
                        position = max(position, tp.offset)
                        continue
                    if m.error():
                        continue
                    position = m.offset() + 1
                    out.append(LoggedRecord(
                        offset=m.offset(), timestamp_ms=m.timestamp()[1],
                        key=m.key(), value=m.value(),
                        headers=list(m.headers() or [])))
            finally:
                consumer.close()
        return out

    def __getattr__(self, name: str) -> Any:
        return self._skip(f"Broker.{name}")


@pytest.fixture
def exactly_broker_factory() -> Iterator[Callable[..., Broker]]:
    """factory(**options) -> a started Broker, stopped after the test."""
    started: List[Broker] = []

    def factory(**options: Any) -> Broker:
        broker = Broker(**options).start()
        started.append(broker)
        return broker

    yield factory
    for broker in reversed(started):
        broker.stop()


@pytest.fixture
def exactly_broker(request: pytest.FixtureRequest,
                   exactly_broker_factory: Callable[..., Broker]) -> Any:
    """A started bundled broker, new for this test (or the real cluster
    named by EXACTLY_TEST_BOOTSTRAP)."""
    external = os.environ.get(ENV_BOOTSTRAP)
    if external:
        return ExternalBroker(external)
    marker = request.node.get_closest_marker("exactly_broker")
    options = dict(marker.kwargs) if marker is not None else {}
    return exactly_broker_factory(**options)


@pytest.fixture
def exactly_cluster(request: pytest.FixtureRequest,
                    exactly_broker_factory: Callable[..., Broker]) -> Any:
    """A started cluster of bundled brokers (3 unless the exactly_cluster
    marker says otherwise), new for this test. With EXACTLY_TEST_BOOTSTRAP
    naming a real cluster the test is skipped, saying so: its point is the
    per-broker faults."""
    external = os.environ.get(ENV_BOOTSTRAP)
    if external:
        # Every use of this fixture is about one broker's faults, which a
        # real cluster cannot take.
        pytest.skip("exactly_cluster's per-broker faults need the bundled "
                    f"brokers; {ENV_BOOTSTRAP} names a real cluster "
                    f"({external})")
    marker = request.node.get_closest_marker("exactly_cluster")
    options = dict(marker.kwargs) if marker is not None else {}
    options.setdefault("brokers", 3)
    return exactly_broker_factory(**options)


@pytest.fixture
def exactly_bootstrap_servers(exactly_broker: Any) -> str:
    """bootstrap.servers of the exactly_broker fixture."""
    return str(exactly_broker.bootstrap_servers)


@pytest.fixture
def exactly_aio_run() -> Callable[..., Any]:
    """``run(coro, timeout=60.0)``: runs a coroutine in a new event loop
    (asyncio.run) under a timeout, for async code in a plain test."""
    return run_aio
