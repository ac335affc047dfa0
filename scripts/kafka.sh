#!/usr/bin/env bash
# Apache Kafka on this machine, for tests and benchmarks: resolves the broker's jars from Maven
# Central into a cache (~/.cache/exactly/kafka, or $EXACTLY_KAFKA_CACHE), starts a KRaft cluster
# of 1 or N combined controller+broker nodes on 127.0.0.1, and acts on it.
#
#   scripts/kafka.sh start --brokers 3 [--dir DIR] [--version 3.9.1] [--set key=value]
#                                     # prints bootstrap.servers=... and cluster.dir=...
#   scripts/kafka.sh run --brokers 1 -- COMMAND...   # EXACTLY_TEST_BOOTSTRAP set for COMMAND
#   scripts/kafka.sh exec DIR -- COMMAND...          # the same, against a running cluster
#   scripts/kafka.sh kill DIR NODE [--signal KILL|STOP|CONT|TERM]
#   scripts/kafka.sh restart DIR NODE | stop DIR | destroy DIR | status DIR | bootstrap DIR
#   scripts/kafka.sh leader DIR TOPIC PARTITION      # node id of the partition's leader
#   scripts/kafka.sh coordinator DIR --transactional-id ID | --group ID
#   scripts/kafka.sh fetch [--version V] [--tools]   # only resolve the jars (--tools: kafka-tools)
#   scripts/kafka.sh tool CLASS ARGS...              # one of Kafka's tools, e.g.
#       org.apache.kafka.tools.TransactionsCommand --bootstrap-server H:P find-hanging --broker-id 1
#
# Exits 77 when Kafka cannot be had here (no java, no mvn, Maven Central unreachable), saying why.
# Java 17 and Maven come from Debian (scripts/setup.sh installs them). All of it is in
# tests/kafka/kafka_cluster.py, which pytest can import as well.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/../tests/kafka/kafka_cluster.py" "$@"
