"""kcat (librdkafka's command-line client) against the exactly-broker binary."""
import json
import subprocess


def run(cmd, stdin=None, timeout=30):
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{cmd} failed ({result.returncode}):\n{result.stderr}"
    return result.stdout


def test_produce_then_consume_exact_records(broker, kcat):
    lines = [f"key{i}:value-{i}" for i in range(1000)]
    run([kcat, "-P", "-b", broker.bootstrap_servers, "-t", "kcat-roundtrip", "-K:",
         "-X", "enable.idempotence=true"], stdin="\n".join(lines) + "\n")
    out = run([kcat, "-C", "-b", broker.bootstrap_servers, "-t", "kcat-roundtrip", "-o",
               "beginning", "-e", "-f", "%k:%s\n"])
    assert out.splitlines() == lines


def test_metadata_lists_topics_and_partitions(broker_factory, kcat):
    b = broker_factory("--default-partitions", "4")
    for topic in ("alpha", "beta"):
        run([kcat, "-P", "-b", b.bootstrap_servers, "-t", topic], stdin="x\n")
    meta = json.loads(run([kcat, "-L", "-J", "-b", b.bootstrap_servers]))
    nodes = list(range(1, b.brokers + 1))
    assert sorted(br["id"] for br in meta["brokers"]) == nodes
    topics = {t["topic"]: t for t in meta["topics"]}
    assert set(topics) == {"alpha", "beta"}
    for t in topics.values():
        assert [p["partition"] for p in t["partitions"]] == [0, 1, 2, 3]
        # Auto-created: the default replication factor, min(3, brokers), every replica in
        # sync, and leaders placed round-robin as Kafka places them (4 partitions: every
        # broker leads one).
        for p in t["partitions"]:
            replicas = sorted(r["id"] for r in p["replicas"])
            assert len(replicas) == min(3, b.brokers) and set(replicas) <= set(nodes)
            assert sorted(r["id"] for r in p["isrs"]) == replicas
            assert p["leader"] in replicas
        assert {p["leader"] for p in t["partitions"]} == set(nodes)


def test_consume_from_offset_and_per_partition(broker_factory, kcat):
    b = broker_factory("--default-partitions", "2")
    for p in (0, 1):
        run([kcat, "-P", "-b", b.bootstrap_servers, "-t", "split", "-p", str(p)],
            stdin="".join(f"p{p}-{i}\n" for i in range(10)))
    out = run([kcat, "-C", "-b", b.bootstrap_servers, "-t", "split", "-p", "1", "-o", "4", "-e"])
    assert out.splitlines() == [f"p1-{i}" for i in range(4, 10)]


def test_data_dir_survives_binary_restart(broker_factory, kcat, tmp_path):
    b = broker_factory(data_dir=str(tmp_path / "data"))
    run([kcat, "-P", "-b", b.bootstrap_servers, "-t", "kept"], stdin="one\ntwo\n")
    assert b.stop() == 0
    b2 = broker_factory(data_dir=str(tmp_path / "data"))
    run([kcat, "-P", "-b", b2.bootstrap_servers, "-t", "kept"], stdin="three\n")
    out = run([kcat, "-C", "-b", b2.bootstrap_servers, "-t", "kept", "-o", "beginning", "-e",
               "-f", "%o:%s\n"])
    assert out.splitlines() == ["0:one", "1:two", "2:three"]
