"""Fixtures for interop tests: the exactly-broker binary, driven by clients written elsewhere.

Run with Debian's Python (/usr/bin/python3), which has confluent-kafka and kafka-python.
EXACTLY_BROKER_BIN names the binary (CTest sets it); the default is the build tree's.
"""
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def broker_binary():
    path = os.environ.get("EXACTLY_BROKER_BIN", str(ROOT / "build/broker-stub/exactly-broker"))
    if not os.path.exists(path):
        pytest.fail(f"exactly-broker binary not found at {path}; build first (scripts/setup.sh)")
    return path


class BrokerProcess:
    """An exactly-broker process on an ephemeral port."""

    def __init__(self, *extra_args, data_dir=None):
        self.args = [broker_binary(), "--port", "0", *extra_args]
        # EXACTLY_INTEROP_BROKERS=3 runs every test against a cluster of three
        # in one process (exactly-broker --brokers 3), replication factor 3.
        brokers = os.environ.get("EXACTLY_INTEROP_BROKERS")
        if brokers and "--brokers" not in extra_args:
            self.args += ["--brokers", brokers]
        if data_dir:
            self.args += ["--data-dir", data_dir]
        self.proc = None
        self.bootstrap_servers = None
        self.log = tempfile.TemporaryFile()

    def start(self, timeout=10.0):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.monotonic() + timeout
        line = self.proc.stdout.readline()
        if not line.startswith("bootstrap.servers=") or time.monotonic() > deadline:
            self.stop()
            raise RuntimeError(f"exactly-broker did not start: {line!r}\n{self.stderr()}")
        self.bootstrap_servers = line.strip().split("=", 1)[1]
        return self

    @property
    def brokers(self):
        """How many brokers the cluster has: one host:port each on its bootstrap line."""
        return len(self.bootstrap_servers.split(","))

    def stderr(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                return self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return self.proc.wait()
        return self.proc.returncode if self.proc else None


@pytest.fixture
def broker():
    b = BrokerProcess().start()
    yield b
    rc = b.stop()
    assert rc == 0, f"exactly-broker exited with {rc}:\n{b.stderr()}"


@pytest.fixture
def broker_factory():
    started = []

    def make(*args, **kwargs):
        b = BrokerProcess(*args, **kwargs).start()
        started.append(b)
        return b

    yield make
    for b in started:
        b.stop()


@pytest.fixture
def kcat():
    path = shutil.which("kcat")
    if path is None:
        pytest.fail("kcat is not installed (apt-get install kcat; scripts/setup.sh does)")
    return path
