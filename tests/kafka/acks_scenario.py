"""What acks=1 loses on a real cluster, and what acks=all with min.insync.replicas=2 does not.

On a 3-broker Apache Kafka cluster (scripts/kafka.sh), for each setting: a topic with one
partition on all three brokers; both followers frozen (SIGSTOP, so they fetch nothing, and the
controller quorum, which they are part of, cannot shrink the ISR); N records produced; the
leader SIGKILLed once the producer has its answers (or has waited a while); the followers
resumed, one of them elected leader; the old leader started again (it truncates to the new
leader's log). Then the partition is read from the beginning and every acknowledged record
looked for.

  acks=1:   the leader acknowledges what only it holds; the new leader never had it: every
            acknowledged record is lost.
  acks=all: nothing is acknowledged while the followers are frozen; the idempotent producer
            keeps its batches and, once a follower leads, delivers them there: all acknowledged,
            none lost.

    /usr/bin/python3 tests/kafka/acks_scenario.py [--cluster DIR] [--records N] [--check]

Without --cluster it starts (and afterwards removes) a 3-broker cluster of its own. With
--check it exits 1 unless acks=all lost nothing and acks=1 lost something (the point of the
scenario); it always prints the table.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kafka_cluster  # noqa: E402


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, 1, 3, config={
        "min.insync.replicas": "2", "unclean.leader.election.enable": "false"})])
    for f in futures.values():
        f.result(60)


def read_all(bootstrap: str, topic: str) -> set:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"count-{topic}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": "read_committed"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                break
            continue
        seen.add(int(m.value()))
    consumer.close()
    return seen


def scenario(cluster: kafka_cluster.KafkaCluster, acks: str, records: int) -> dict:
    topic = f"acks-{acks}-{os.getpid()}-{int(time.time())}"
    create_topic(cluster.bootstrap_servers, topic)
    leader = cluster.leader(topic, 0)
    md = cluster.metadata([topic])["topics"][topic]["partitions"][0]
    followers = [n for n in md["replicas"] if n != leader]
    # Wait until the followers are in sync (all three in the ISR) before freezing them.
    deadline = time.monotonic() + 60
    while len(md["isr"]) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
        md = cluster.metadata([topic])["topics"][topic]["partitions"][0]
    conf = {"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5,
            "message.timeout.ms": 120000, "request.timeout.ms": 5000}
    if acks == "1":
        conf.update({"acks": 1, "enable.idempotence": False})
    else:
        conf.update({"acks": "all", "enable.idempotence": True})
    acked = set()
    failed = [0]

    def on_delivery(err, msg):
        if err is None:
            acked.add(int(msg.value()))
        else:
            failed[0] += 1

    producer = Producer(conf)
    producer.produce(topic, b"-1", on_delivery=on_delivery)  # connect before the freeze
    producer.flush(30)
    acked.discard(-1)
    for f in followers:
        cluster.signal(f, signal.SIGSTOP)
    for i in range(records):
        producer.produce(topic, str(i).encode(), on_delivery=on_delivery)
        producer.poll(0)
    # acks=1: the leader answers at once; acks=all: no answer can come. Either way, wait a bit.
    producer.flush(5)
    acked_before_kill = len(acked)
    cluster.signal(leader, signal.SIGKILL)
    for f in followers:
        cluster.signal(f, signal.SIGCONT)
    new_leader = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            part = cluster._ask(lambda h, p: kafka_cluster.metadata(h, p, [topic]),
                                nodes=followers)["topics"][topic]["partitions"][0]
            if part["leader"] in followers:
                new_leader = part["leader"]
                break
        except kafka_cluster.ClusterError:
            pass
        time.sleep(0.2)
    producer.flush(120)
    cluster.restart(leader)
    read = read_all(cluster.bootstrap_servers, topic)
    read.discard(-1)
    lost = acked - read
    return {"acks": acks, "records": records, "leader": leader, "followers": followers,
            "new_leader": new_leader, "acked_before_kill": acked_before_kill,
            "acked": len(acked), "failed": failed[0], "read": len(read), "lost": len(lost)}


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cluster", help="directory of a running 3-broker cluster (scripts/kafka.sh)")
    ap.add_argument("--records", type=int, default=10000)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    own = args.cluster is None
    try:
        cluster = (kafka_cluster.KafkaCluster.start(3) if own
                   else kafka_cluster.KafkaCluster.attach(args.cluster))
    except kafka_cluster.Unavailable as e:
        print(f"kafka: unavailable: {e}")
        return kafka_cluster.UNAVAILABLE
    try:
        if len(cluster.node_ids) != 3:
            print("the scenario needs a 3-broker cluster")
            return 2
        results = [scenario(cluster, "1", args.records), scenario(cluster, "all", args.records)]
    finally:
        if own:
            cluster.destroy()
    print("\n  broker-side loss on Apache Kafka "
          f"{cluster.state['version']}, 3 brokers, followers SIGSTOPped, leader SIGKILLed")
    row = "  {:<34} {:<22} {}"
    print(row.format("", "acks=1", "acks=all, min.insync.replicas=2"))
    print(row.format("", "(no idempotence)", "(idempotent)"))
    a, b = results
    for label, key in (("records produced", "records"),
                       ("acknowledged before the kill", "acked_before_kill"),
                       ("acknowledged in all", "acked"),
                       ("delivery failures reported", "failed"),
                       ("read back after the failover", "read"),
                       ("acknowledged and lost", "lost")):
        print(row.format(label, a[key], b[key]))
    print(row.format("leader killed -> elected", f"{a['leader']} -> {a['new_leader']}",
                     f"{b['leader']} -> {b['new_leader']}"))
    ok = a["lost"] > 0 and b["lost"] == 0 and b["acked"] == b["records"]
    if args.check and not ok:
        print("FAILED: expected acks=1 to lose acknowledged records and acks=all to lose none "
              "and deliver all")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
