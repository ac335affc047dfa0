"""An Apache Kafka cluster on this machine, for tests and benchmarks: the judge of the bundled broker
and of the SDK.

Resolves Apache Kafka's broker jars from Maven Central into a cache (tests/kafka/pom.xml names
them), formats KRaft storage and starts 1 or N nodes, each a combined controller + broker, on
127.0.0.1 with free ports and data dirs under one cluster directory. Everything a test needs later
(ports, pids, settings) is kept in that directory, so any process can act on the cluster by
naming it: the shell (scripts/kafka.sh), pytest (import this module) and C++ tests
(tests/support/kafka_harness.h, which runs scripts/kafka.sh).

    scripts/kafka.sh start --brokers 3 --dir /tmp/k     # prints bootstrap.servers=... once it serves
    scripts/kafka.sh leader /tmp/k orders 0              # node id of partition 0's leader
    scripts/kafka.sh coordinator /tmp/k --transactional-id t1
    scripts/kafka.sh kill /tmp/k 2 --signal STOP         # SIGSTOP node 2 (CONT resumes it)
    scripts/kafka.sh restart /tmp/k 2                    # starts a killed node again
    scripts/kafka.sh stop /tmp/k
    scripts/kafka.sh run --brokers 1 -- ctest ...        # a cluster for one command

Only the Python standard library is used, so any python3 runs it. The two requests it sends,
Metadata and FindCoordinator, are encoded by the tests' shared codec (tests/wire).
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "wire"))
import apis  # noqa: E402
import wire  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
POM = ROOT / "tests" / "kafka" / "pom.xml"
TOOLS_POM = ROOT / "tests" / "kafka" / "tools" / "pom.xml"
# 3.9.x is the last line that serves every protocol version librdkafka 2.0.2 (Debian 12)
# negotiates; 4.0 removed old ones and librdkafka before 2.8 turns features off against it.
DEFAULT_VERSION = os.environ.get("EXACTLY_KAFKA_VERSION", "3.9.1")
# Exit code for "Apache Kafka cannot be had here" (no Java, no Maven, no Maven Central): the code
# CTest (SKIP_RETURN_CODE) and scripts/test.sh treat as a skip, never as a pass.
UNAVAILABLE = 77


class Unavailable(Exception):
    """Java, Maven or Maven Central is missing: Kafka cannot be run here."""


class ClusterError(Exception):
    pass


@contextlib.contextmanager
def bundled_broker(*flags: str) -> Iterator[str]:
    """The bundled broker's binary (EXACTLY_BROKER_BIN, else the build tree's) on a free port,
    in memory, with `flags`, for the side-by-side tests: yields its bootstrap.servers."""
    binary = os.environ.get("EXACTLY_BROKER_BIN", str(ROOT / "build/broker-stub/exactly-broker"))
    proc = subprocess.Popen([binary, "--port", "0", *flags], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("bootstrap.servers="), line
        yield line.strip().split("=", 1)[1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def cache_root() -> pathlib.Path:
    env = os.environ.get("EXACTLY_KAFKA_CACHE")
    if env:
        return pathlib.Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "exactly" / "kafka"


def fetch(version: str = DEFAULT_VERSION, quiet: bool = False) -> pathlib.Path:
    """The folder of Kafka `version`'s runtime jars, resolved from Maven Central on first use."""
    return _resolve(POM, "kafka_2.13", "libs", version, quiet)


def fetch_tools(version: str = DEFAULT_VERSION, quiet: bool = False) -> pathlib.Path:
    """The folder of Kafka's command-line tools (kafka-tools: kafka-transactions.sh and the
    others), resolved apart from the broker's jars so that the broker's classpath stays the
    broker's."""
    return _resolve(TOOLS_POM, "kafka-tools", "tools", version, quiet)


def _resolve(pom: pathlib.Path, artifact: str, folder: str, version: str,
             quiet: bool) -> pathlib.Path:
    libs = cache_root() / version / folder
    if (libs / ".complete").exists():
        return libs
    java, mvn = shutil.which("java"), shutil.which("mvn")
    if java is None or mvn is None:
        raise Unavailable("no " + " and no ".join(n for n, p in (("java", java), ("mvn", mvn))
                                                  if p is None)
                          + " on PATH (scripts/setup.sh installs openjdk-17-jre-headless and maven)")
    partial = libs.with_name(folder + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    cmd = [mvn, "-B", "-q", "-f", str(pom), f"-Dmaven.repo.local={cache_root() / 'm2'}",
           f"-Dkafka.version={version}", "dependency:copy-dependencies",
           f"-DoutputDirectory={partial}"]
    if int(version.split(".")[0]) >= 4:
        cmd.append("-Dkafka4")
    if not quiet:
        print(f"kafka: resolving Apache Kafka's {artifact} {version} from Maven Central into "
              f"{libs}", file=sys.stderr)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0 or not any(partial.glob(f"{artifact}-{version}.jar")):
        tail = " | ".join(done.stdout.strip().splitlines()[-3:])
        raise Unavailable(f"could not resolve org.apache.kafka:{artifact}:{version} with Maven: "
                          f"{tail[:400]}")
    shutil.rmtree(libs, ignore_errors=True)
    partial.rename(libs)
    (libs / ".complete").write_text(version + "\n")
    return libs


def tool_command(main_class: str, args: Sequence[str],
                 version: str = DEFAULT_VERSION) -> List[str]:
    """The java command that runs one of Kafka's tools, e.g.
    org.apache.kafka.tools.TransactionsCommand (kafka-transactions.sh), with log4j quiet."""
    tools = fetch_tools(version, quiet=True)
    return [shutil.which("java") or "java", "-Dlog4j.configuration=file:/dev/null",
            "-cp", str(tools / "*"), main_class, *args]


# Settings for a test cluster, each different from Kafka's default for a reason.
def test_settings(brokers: int) -> Dict[str, str]:
    rf = str(brokers)
    return {
        # Tests start groups one after another; Kafka waits 3 s for more members by default.
        "group.initial.rebalance.delay.ms": "0",
        # Internal topics on every broker (the defaults, 3, cannot be met by 1 broker), with
        # fewer partitions than the default 50 so that they are created in a moment.
        "offsets.topic.replication.factor": rf,
        "offsets.topic.num.partitions": "5",
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": str(min(brokers, 2)),
        "transaction.state.log.num.partitions": "5",
        # Topics created without a replication factor (-1) go to every broker, and acks=all
        # then needs 2 of 3 replicas: the production setting the SDK is proven against.
        "default.replication.factor": rf,
        "min.insync.replicas": str(min(brokers, 2)),
        # Small segments (default 1 GiB) and small preallocated indexes (default 10 MiB per
        # segment): many short-lived topics, little disk.
        "log.segment.bytes": str(16 * 1024 * 1024),
        "log.index.size.max.bytes": str(1024 * 1024),
        # Abort timed-out transactions within a second (default: checked every 10 s).
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
        # A killed broker is noticed (and its partitions' leadership moved) in 3 s, not 9 s.
        "broker.session.timeout.ms": "3000",
        "broker.heartbeat.interval.ms": "500",
        # A stopped follower leaves the ISR after 10 s instead of 30 s.
        "replica.lag.time.max.ms": "10000",
        # Leadership goes back to the preferred replica only when asked (tests move leaders).
        "auto.leader.rebalance.enable": "false",
        # The log cleaner looks for compacted partitions every second (default 15 s), as the
        # bundled broker's test_compaction.py runs it.
        "log.cleaner.backoff.ms": "1000",
    }


def _new_cluster_id() -> str:
    """A random id as Kafka makes them (Uuid.randomUuid, base64 without padding), never starting
    with '-': kafka-storage's argument parser would take such an id for an option (one start in
    64 failed with "--cluster-id: expected one argument"), which is why Kafka draws again too."""
    while True:
        cluster_id = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _free_ports(n: int) -> List[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# --- the two requests the harness sends: Metadata v4 and FindCoordinator v1 -----------------

# How the harness's calls connect: its own client id, and a short timeout (it polls for
# readiness and retries).
_CLIENT = {"client_id": "exactly-kafka-harness", "timeout": 5.0}


def metadata(host: str, port: int, topics: Optional[Sequence[str]] = None) -> dict:
    """Metadata v4: {'brokers': {id: (host, port)}, 'controller': id,
    'topics': {name: {'error': code, 'partitions': {p: {'leader','replicas','isr','error'}}}}}."""
    answer = wire.call_once(host, port, apis.METADATA, 4, **_CLIENT,
                            topics=None if topics is None else [{"name": t} for t in topics],
                            allow_auto_topic_creation=False)
    return {
        "brokers": {b["node_id"]: (b["host"], b["port"]) for b in answer["brokers"]},
        "controller": answer["controller_id"],
        "topics": {t["name"]: {"error": t["error_code"],
                               "partitions": {p["partition_index"]: {
                                   "error": p["error_code"], "leader": p["leader_id"],
                                   "replicas": p["replica_nodes"], "isr": p["isr_nodes"]}
                                   for p in t["partitions"]}}
                   for t in answer["topics"]},
    }


def find_coordinator(host: str, port: int, key: str, key_type: int) -> Tuple[int, int]:
    """FindCoordinator v1 (key_type 0: group, 1: transaction): (error code, node id)."""
    answer = wire.call_once(host, port, apis.FIND_COORDINATOR, 1, **_CLIENT, key=key,
                            key_type=key_type)
    return answer["error_code"], answer["node_id"]


def wait_served(bootstrap: str, topic: str, partitions: int = 1, timeout: float = 60.0) -> None:
    """Until every broker of the cluster at `bootstrap` names a leader for each of `topic`'s
    partitions. A new topic reaches Kafka's brokers asynchronously; a consumer that subscribes
    through a broker that has not heard of it yet finds no such topic and, on librdkafka, looks
    again only at the next metadata refresh (topic.metadata.refresh.interval.ms, 5 minutes)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while True:
        missing = []
        try:
            brokers = metadata(host, int(port))["brokers"]
        except OSError:
            brokers = {}
        for node, (bhost, bport) in brokers.items():
            try:
                parts = metadata(bhost, bport, [topic])["topics"].get(topic, {}) \
                    .get("partitions", {})
            except OSError:
                parts = {}
            if len([p for p in parts.values() if p["leader"] >= 0]) < partitions:
                missing.append(node)
        if brokers and not missing:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic} not served by broker(s) {missing or 'any'} after "
                               f"{timeout:.0f} s")
        time.sleep(0.1)


# --- the cluster ---------------------------------------------------------------------------

class KafkaCluster:
    """A cluster kept in `dir` (cluster.json, and node-<id>/ with its settings, data, log, pid)."""

    def __init__(self, dir: pathlib.Path, state: dict) -> None:
        self.dir = pathlib.Path(dir)
        self.state = state

    # ---- creating, attaching

    @classmethod
    def start(cls, brokers: int = 1, dir: Optional[str] = None, version: str = DEFAULT_VERSION,
              heap: str = "512m", settings: Optional[Dict[str, str]] = None,
              timeout: float = 120.0) -> "KafkaCluster":
        cluster = cls.prepare(brokers, dir, version, heap, settings)
        for node in cluster.state["nodes"]:
            cluster._launch(node)
        cluster.wait_ready(timeout)
        return cluster

    @classmethod
    def prepare(cls, brokers: int = 1, dir: Optional[str] = None,
                version: str = DEFAULT_VERSION, heap: str = "512m",
                settings: Optional[Dict[str, str]] = None) -> "KafkaCluster":
        """A cluster's settings and formatted storage, its nodes not started (see java_command:
        a benchmark times the JVM's start itself)."""
        if dir is None:
            dir = tempfile.mkdtemp(prefix="exactly-kafka-")
        path = pathlib.Path(dir).resolve()
        if (path / "cluster.json").exists():
            old = cls.attach(path)
            old.stop()
        shutil.rmtree(path, ignore_errors=True)  # no stale cluster if Kafka cannot be had
        libs = fetch(version)
        path.mkdir(parents=True)
        ports = _free_ports(2 * brokers)
        nodes = {str(i): {"port": ports[2 * (i - 1)], "controller_port": ports[2 * i - 1]}
                 for i in range(1, brokers + 1)}
        conf = test_settings(brokers)
        conf.update(settings or {})
        state = {"version": version, "libs": str(libs), "heap": heap, "brokers": brokers,
                 "harness": str(pathlib.Path(__file__).resolve()),
                 "cluster_id": _new_cluster_id(),
                 "nodes": nodes, "settings": conf,
                 "bootstrap": ",".join(f"127.0.0.1:{n['port']}" for n in nodes.values())}
        cluster = cls(path, state)
        cluster._save()
        cluster._write_log_config()
        for node in nodes:
            cluster._format(node)
        return cluster

    @classmethod
    def attach(cls, dir) -> "KafkaCluster":
        path = pathlib.Path(dir)
        try:
            state = json.loads((path / "cluster.json").read_text())
        except FileNotFoundError:
            raise ClusterError(f"no Kafka cluster in {path} (no cluster.json)") from None
        return cls(path, state)

    @property
    def bootstrap_servers(self) -> str:
        return self.state["bootstrap"]

    @property
    def node_ids(self) -> List[int]:
        return sorted(int(n) for n in self.state["nodes"])

    # ---- nodes

    def _node_dir(self, node) -> pathlib.Path:
        return self.dir / f"node-{node}"

    def _save(self) -> None:
        tmp = self.dir / "cluster.json.tmp"
        tmp.write_text(json.dumps(self.state, indent=1))
        tmp.rename(self.dir / "cluster.json")
        # Plain-text copies for C++ tests (tests/support/test_cluster.h reads them).
        (self.dir / "bootstrap").write_text(self.state["bootstrap"] + "\n")
        (self.dir / "brokers").write_text(f"{self.state['brokers']}\n")

    def _properties(self, node: str) -> pathlib.Path:
        n = self.state["nodes"][node]
        voters = ",".join(f"{i}@127.0.0.1:{v['controller_port']}"
                          for i, v in self.state["nodes"].items())
        props = {
            "process.roles": "broker,controller",
            "node.id": node,
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://127.0.0.1:{n['port']},"
                         f"CONTROLLER://127.0.0.1:{n['controller_port']}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{n['port']}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self._node_dir(node) / "data"),
        }
        props.update(self.state["settings"])
        path = self._node_dir(node) / "server.properties"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return path

    def _write_log_config(self) -> None:
        # INFO to the node's server.log (the JVM's stdout); the per-request logs stay quiet.
        (self.dir / "log4j.properties").write_text(
            "log4j.rootLogger=INFO, stdout\n"
            "log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
            "log4j.logger.kafka.request.logger=WARN\n"
            "log4j.logger.state.change.logger=WARN\n")
        (self.dir / "log4j2.properties").write_text(
            "rootLogger.level=INFO\nrootLogger.appenderRef.stdout.ref=STDOUT\n"
            "appender.stdout.type=Console\nappender.stdout.name=STDOUT\n"
            "appender.stdout.layout.type=PatternLayout\n"
            "appender.stdout.layout.pattern=[%d] %p %m (%c)%n\n"
            "logger.request.name=kafka.request.logger\nlogger.request.level=WARN\n")

    def java_command(self, node, main: str = "kafka.Kafka") -> List[str]:
        """The JVM command of `node` (its properties file last, for kafka.Kafka): Kafka's own
        kafka-server-start.sh flags (G1, heap)."""
        heap = self.state["heap"]
        tail = [str(self._node_dir(node) / "server.properties")] if main == "kafka.Kafka" else []
        return [shutil.which("java") or "java", f"-Xms{heap}", f"-Xmx{heap}", "-server", "-XX:+UseG1GC",
                "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
                "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
                f"-Dlog4j.configuration=file:{self.dir / 'log4j.properties'}",
                f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                "-cp", str(pathlib.Path(self.state["libs"]) / "*"), main] + tail

    def _format(self, node: str) -> None:
        props = self._properties(node)
        cmd = self.java_command(node, "kafka.tools.StorageTool")
        cmd[1:3] = ["-Xms64m", "-Xmx256m"]
        cmd += ["format", "-t", self.state["cluster_id"], "-c", str(props), "--ignore-formatted"]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            raise ClusterError(f"formatting node {node} failed:\n{done.stdout}")

    def _launch(self, node: str) -> None:
        props = self._properties(node)
        log = open(self._node_dir(node) / "server.log", "ab")
        proc = subprocess.Popen(self.java_command(node), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=self._node_dir(node))
        log.close()
        self.state["nodes"][node]["pid"] = proc.pid
        (self._node_dir(node) / "pid").write_text(f"{proc.pid}\n")
        self._save()

    def pid(self, node) -> Optional[int]:
        pid = self.state["nodes"][str(node)].get("pid")
        return pid if pid and _alive(pid) else None

    def alive_nodes(self) -> List[int]:
        return [n for n in self.node_ids if self.pid(n) is not None]

    def signal(self, node, sig: int) -> None:
        """Sends `sig` to node's JVM (SIGKILL, SIGSTOP, SIGCONT, SIGTERM)."""
        pid = self.pid(node)
        if pid is None:
            raise ClusterError(f"node {node} is not running")
        os.kill(pid, sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            _wait_exit(pid, 60 if sig == signal.SIGTERM else 10)

    def restart(self, node, timeout: float = 120.0) -> None:
        """Stops node (if running) with SIGTERM and starts it again on its ports and data."""
        node = str(node)
        if self.pid(node) is not None:
            self._stop_pid(self.pid(node))
        self._launch(node)
        self.wait_ready(timeout, nodes=[int(node)])

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM to every node (controlled shutdown), SIGKILL for those still up at the deadline."""
        pids = [p for p in (self.pid(n) for n in self.node_ids) if p is not None]
        for pid in pids:
            _signal_quietly(pid, signal.SIGCONT)
            _signal_quietly(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for pid in pids:
            if not _wait_exit(pid, max(0.0, deadline - time.monotonic())):
                print(f"kafka: pid {pid} ignored SIGTERM for {timeout:.0f} s; SIGKILL",
                      file=sys.stderr)
                _signal_quietly(pid, signal.SIGKILL)
                _wait_exit(pid, 10)

    def destroy(self) -> None:
        """stop(), then remove the cluster directory."""
        self.stop(timeout=20)
        shutil.rmtree(self.dir, ignore_errors=True)

    def _stop_pid(self, pid: int) -> None:
        _signal_quietly(pid, signal.SIGCONT)
        _signal_quietly(pid, signal.SIGTERM)
        if not _wait_exit(pid, 60):
            _signal_quietly(pid, signal.SIGKILL)
            _wait_exit(pid, 10)

    # ---- questions

    def _ask(self, fn, nodes: Optional[Sequence[int]] = None):
        """fn(host, port) on the first live node that answers."""
        last = None
        for n in nodes or self.alive_nodes():
            try:
                return fn("127.0.0.1", self.state["nodes"][str(n)]["port"])
            except OSError as e:
                last = e
        raise ClusterError(f"no node answered: {last}")

    def metadata(self, topics: Optional[Sequence[str]] = None) -> dict:
        return self._ask(lambda h, p: metadata(h, p, topics))

    def leader(self, topic: str, partition: int, timeout: float = 60.0) -> int:
        """Node id leading topic/partition (waits while it has none)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                md = self.metadata([topic])
                part = md["topics"][topic]["partitions"].get(partition)
                if part and part["error"] == 0 and part["leader"] >= 0:
                    return part["leader"]
            except ClusterError:
                pass
            if time.monotonic() > deadline:
                raise ClusterError(f"{topic}/{partition} has no leader after {timeout:.0f} s")
            time.sleep(0.2)

    def wait_topic(self, topic: str, partitions: int, timeout: float = 60.0) -> None:
        """Until every live node serves `topic` with a leader for each partition. Kafka
        spreads a new topic's metadata to the brokers asynchronously: a client asking a broker
        that has not heard of it yet is told it does not exist (librdkafka then fails records
        queued for it with _UNKNOWN_TOPIC)."""
        deadline = time.monotonic() + timeout
        while True:
            missing = []
            for n in self.alive_nodes():
                try:
                    md = self._ask(lambda h, p: metadata(h, p, [topic]), nodes=[n])
                    parts = md["topics"].get(topic, {}).get("partitions", {})
                    if len([p for p in parts.values() if p["leader"] >= 0]) < partitions:
                        missing.append(n)
                except ClusterError:
                    missing.append(n)
            if not missing:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"{topic} not served by node(s) {missing} after "
                                   f"{timeout:.0f} s")
            time.sleep(0.1)

    def coordinator(self, key: str, key_type: int = 1, timeout: float = 60.0) -> int:
        """Node id of the transaction coordinator of transactional id `key` (key_type 1) or of
        the group coordinator of group `key` (key_type 0); waits while it is not available."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                err, node = self._ask(lambda h, p: find_coordinator(h, p, key, key_type))
                if err == 0:
                    return node
            except ClusterError:
                pass
            if time.monotonic() > deadline:
                raise ClusterError(f"no coordinator for {key!r} after {timeout:.0f} s")
            time.sleep(0.2)

    def wait_ready(self, timeout: float, nodes: Optional[Sequence[int]] = None) -> None:
        """Until every node (or `nodes`) is registered and answers, and both coordinators (the
        internal topics they live in) are served."""
        want = set(nodes or self.node_ids)
        deadline = time.monotonic() + timeout
        why = "not started"
        while time.monotonic() < deadline:
            dead = [n for n in want if self.pid(n) is None]
            if dead:
                raise ClusterError(f"node(s) {dead} exited while starting; see "
                                   + ", ".join(str(self._node_dir(n) / "server.log")
                                               for n in dead) + "\n" + self._log_tail(dead[0]))
            try:
                registered = set(self._ask(lambda h, p: metadata(h, p, [])["brokers"],
                                           nodes=list(want)))
                if want <= registered:
                    for n in want:  # every wanted node answers on its own port
                        self._ask(lambda h, p: metadata(h, p, []), nodes=[n])
                    self.coordinator("exactly-harness-probe", 1, timeout=5)
                    self.coordinator("exactly-harness-probe", 0, timeout=5)
                    return
                why = f"registered: {sorted(registered)}, waiting for {sorted(want)}"
            except (ClusterError, OSError, ValueError, struct.error) as e:
                why = str(e)
            time.sleep(0.3)
        raise ClusterError(f"Kafka did not serve within {timeout:.0f} s ({why})")

    def _log_tail(self, node, lines: int = 30) -> str:
        try:
            text = (self._node_dir(node) / "server.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _signal_quietly(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        try:  # our own child (restart): reap it
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --- command line --------------------------------------------------------------------------

SIGNALS = {"KILL": signal.SIGKILL, "STOP": signal.SIGSTOP, "CONT": signal.SIGCONT,
           "TERM": signal.SIGTERM}


def _env_for(cluster: KafkaCluster) -> Dict[str, str]:
    env = dict(os.environ)
    env["EXACTLY_TEST_BOOTSTRAP"] = cluster.bootstrap_servers
    env["EXACTLY_KAFKA_CLUSTER"] = str(cluster.dir)
    env["EXACTLY_KAFKA_BROKERS"] = str(cluster.state["brokers"])
    return env


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="scripts/kafka.sh", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def start_args(p):
        p.add_argument("--brokers", type=int, default=1)
        p.add_argument("--version", default=DEFAULT_VERSION)
        p.add_argument("--heap", default="512m", help="JVM heap of each node (Kafka's own: 1g)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="a broker setting (repeatable), over the test settings")

    p = sub.add_parser("fetch", help="resolve the jars; print their folder")
    p.add_argument("--version", default=DEFAULT_VERSION)
    p.add_argument("--tools", action="store_true",
                   help="the command-line tools' jars (kafka-tools) instead of the broker's")
    p = sub.add_parser("tool", help="run one of Kafka's tools: tool CLASS ARGS..., e.g. "
                                    "org.apache.kafka.tools.TransactionsCommand "
                                    "--bootstrap-server H:P list")
    p.add_argument("--version", default=DEFAULT_VERSION)
    p.add_argument("main_class")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p = sub.add_parser("start", help="start a cluster; print bootstrap.servers= once it serves")
    start_args(p)
    p.add_argument("--dir", help="cluster directory (default: a new temporary one)")
    p = sub.add_parser("prepare", help="format a cluster without starting it; print "
                                       "bootstrap.servers= and node 1's JVM command, one "
                                       "argument a line")
    start_args(p)
    p.add_argument("--dir", required=True)
    p = sub.add_parser("run", help="start a cluster, run a command with EXACTLY_TEST_BOOTSTRAP, "
                                   "stop it")
    start_args(p)
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("exec", help="run a command against the running cluster in DIR "
                                    f"(exit {UNAVAILABLE}, a skip, when there is none)")
    p.add_argument("dir")
    p.add_argument("command", nargs=argparse.REMAINDER)
    for name, help in (("stop", "stop every node (SIGTERM, then SIGKILL)"),
                       ("destroy", "stop, then remove the directory"),
                       ("status", "nodes, pids, leaders of the controller"),
                       ("bootstrap", "print bootstrap.servers")):
        p = sub.add_parser(name, help=help)
        p.add_argument("dir")
    p = sub.add_parser("kill", help="send a signal to one node's JVM (default KILL)")
    p.add_argument("dir")
    p.add_argument("node", type=int)
    p.add_argument("--signal", default="KILL", choices=sorted(SIGNALS))
    p = sub.add_parser("restart", help="start a node again (after stopping it if it runs)")
    p.add_argument("dir")
    p.add_argument("node", type=int)
    p = sub.add_parser("pid", help="print a node's JVM pid")
    p.add_argument("dir")
    p.add_argument("node", type=int)
    p = sub.add_parser("leader", help="print the node id leading a partition")
    p.add_argument("dir")
    p.add_argument("topic")
    p.add_argument("partition", type=int)
    p = sub.add_parser("wait-topic", help="until every live node serves the topic's partitions")
    p.add_argument("dir")
    p.add_argument("topic")
    p.add_argument("partitions", type=int)
    p = sub.add_parser("coordinator", help="print the coordinator's node id")
    p.add_argument("dir")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--transactional-id")
    g.add_argument("--group")

    args = ap.parse_args(argv)
    try:
        if args.cmd == "fetch":
            print(fetch_tools(args.version) if args.tools else fetch(args.version))
            return 0
        if args.cmd == "tool":
            return subprocess.call(tool_command(args.main_class, args.args, args.version))
        if args.cmd == "prepare":
            settings = dict(kv.split("=", 1) for kv in args.set)
            cluster = KafkaCluster.prepare(args.brokers, args.dir, args.version, args.heap,
                                           settings)
            print(f"bootstrap.servers={cluster.bootstrap_servers}")
            print("\n".join(cluster.java_command("1")))
            return 0
        if args.cmd in ("start", "run"):
            settings = dict(kv.split("=", 1) for kv in args.set)
            cluster = KafkaCluster.start(args.brokers, getattr(args, "dir", None), args.version,
                                         args.heap, settings)
            if args.cmd == "start":
                print(f"bootstrap.servers={cluster.bootstrap_servers}")
                print(f"cluster.dir={cluster.dir}", flush=True)
                return 0
            command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] \
                else args.command
            try:
                print(f"kafka: {args.brokers} broker(s) of Apache Kafka {args.version} at "
                      f"{cluster.bootstrap_servers}", file=sys.stderr, flush=True)
                return subprocess.call(command, env=_env_for(cluster))
            finally:
                cluster.destroy()
        if args.cmd == "exec":
            command = args.command[1:] if args.command[:1] == ["--"] else args.command
            try:
                cluster = KafkaCluster.attach(args.dir)
            except ClusterError as e:
                print(f"kafka: skipped: {e} (Apache Kafka could not be started: see the "
                      f"kafka_start test's output)", flush=True)
                return UNAVAILABLE
            down = [n for n in cluster.node_ids if cluster.pid(n) is None]
            if len(down) == len(cluster.node_ids):
                print(f"kafka: skipped: the cluster in {args.dir} is not running", flush=True)
                return UNAVAILABLE
            if down:  # a test left a node down: start it again for the next one
                for n in down:
                    cluster.restart(n)
            os.execvpe(command[0], command, _env_for(cluster))
        cluster = KafkaCluster.attach(args.dir)
        if args.cmd == "stop":
            cluster.stop()
        elif args.cmd == "destroy":
            cluster.destroy()
        elif args.cmd == "bootstrap":
            print(cluster.bootstrap_servers)
        elif args.cmd == "status":
            for n in cluster.node_ids:
                info = cluster.state["nodes"][str(n)]
                print(f"node {n}: port {info['port']} pid {cluster.pid(n) or '-'}")
        elif args.cmd == "kill":
            cluster.signal(args.node, SIGNALS[args.signal])
        elif args.cmd == "restart":
            cluster.restart(args.node)
        elif args.cmd == "pid":
            pid = cluster.pid(args.node)
            if pid is None:
                raise ClusterError(f"node {args.node} is not running")
            print(pid)
        elif args.cmd == "wait-topic":
            cluster.wait_topic(args.topic, args.partitions)
        elif args.cmd == "leader":
            print(cluster.leader(args.topic, args.partition))
        elif args.cmd == "coordinator":
            if args.transactional_id is not None:
                print(cluster.coordinator(args.transactional_id, 1))
            else:
                print(cluster.coordinator(args.group, 0))
        return 0
    except Unavailable as e:
        print(f"kafka: unavailable: {e}", file=sys.stderr)
        return UNAVAILABLE
    except ClusterError as e:
        print(f"kafka: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
