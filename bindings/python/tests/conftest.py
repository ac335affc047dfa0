"""Helpers for the bindings' tests. The broker fixtures come from the
package's own pytest plugin (exactly.pytest_plugin), as in a user's suite."""

import itertools
import os
import time
from typing import List

import pytest

import exactly

_counter = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "partitions(n): the `topic` fixture creates its topic with "
        "n partitions (default 1)")


@pytest.fixture
def topic(request: pytest.FixtureRequest) -> str:
    """A topic name no other test uses (nor an earlier run against the same
    real cluster: the process id). In a test that has a broker
    (exactly_broker), the topic is created on it first, with one partition
    or as many as the test's `partitions` marker says. Left to
    auto-creation, it would cost every test a second: Kafka (and so the
    bundled broker) answers the first Metadata request for a new topic with
    UNKNOWN_TOPIC_OR_PARTITION while it creates it, and librdkafka asks
    again at its next one-second scan."""
    name = f"t{next(_counter)}-{os.getpid()}-{request.node.name[:40]}" \
        .replace("[", "-").replace("]", "")
    if "exactly_broker" in request.fixturenames:
        marker = request.node.get_closest_marker("partitions")
        request.getfixturevalue("exactly_broker").create_topic(
            name, marker.args[0] if marker else 1)
    return name


def eventually(done, seconds: float = 30.0) -> bool:
    """Whether `done()` holds within `seconds` (asked every 10 ms): a bound
    against hanging, not a timing assertion."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.01)
    return done()


def read_committed(bootstrap: str, topic: str, count: int,
                   group: str = None, max_wait: float = 60.0,
                   settle: float = 0.5) -> List[exactly.Message]:
    """Reads `topic` with a read_committed consumer until `count` records
    came (then waits `settle` seconds for any extra one), or `max_wait`
    passed (a guard against hanging, not a timing assertion)."""
    group = group or f"reader-{next(_counter)}"
    out = []
    with exactly.Consumer(bootstrap, group, topics=[topic]) as consumer:
        deadline = time.monotonic() + max_wait
        while len(out) < count and time.monotonic() < deadline:
            out.extend(consumer.poll_batch(1000, timeout=0.5))
        out.extend(consumer.poll_batch(1000, timeout=settle))
    return out
