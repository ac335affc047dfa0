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

When ``EXACTLY_TEST_BOOTSTRAP`` names a real cluster, ``exactly_broker`` is
that cluster instead: ``bootstrap_servers`` points at it, and what only the
bundled broker can do (faults, restarts, reading its log) skips the test
with a message saying so.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterator, List, Mapping, Optional

import pytest

from exactly.testing import Broker

ENV_BOOTSTRAP = "EXACTLY_TEST_BOOTSTRAP"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "exactly_broker(**options): options for the exactly_broker fixture "
        "(see exactly.testing.Broker)",
    )


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
                     config: Optional[Mapping[str, Any]] = None) -> None:
        try:
            from confluent_kafka.admin import AdminClient, NewTopic
        except ImportError:
            self._skip("creating topics without confluent-kafka")
        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        # Replication factor -1: the cluster's default.replication.factor, so
        # that acks=all meets a min.insync.replicas above 1.
        futures = admin.create_topics([NewTopic(
            name, partitions, -1,
            config={k: str(v) for k, v in (config or {}).items()})])
        for future in futures.values():
            future.result()

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
def exactly_bootstrap_servers(exactly_broker: Any) -> str:
    """bootstrap.servers of the exactly_broker fixture."""
    return str(exactly_broker.bootstrap_servers)
