#!/usr/bin/env bash
# Runs every benchmark. Each one measures exactly and its baseline in the same run (these
# machines are shared and noisy) and prints the ratio with MET or MISSED per target; the
# README's table is copied from this output.
#
#   scripts/bench.sh            # all of them (about 14 minutes on 2 cores)
#   scripts/bench.sh broker     # one: broker | cluster | group | txn | abort | sdk | spool | crc |
#                               #      faults | python | kafka
#   (kafka: the bundled broker against Apache Kafka from scripts/kafka.sh, about 2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-dir build --build-type RelWithDebInfo

ONLY=${1:-all}
run() {
  local name=$1
  shift
  if [ "$ONLY" = all ] || [ "$ONLY" = "$name" ]; then
    echo "== $name: $*"
    "$@"
    echo
  fi
}

run broker build/bench/broker_bench --broker-bin build/broker-stub/exactly-broker
run cluster build/bench/cluster_bench
run group build/bench/group_bench
run txn build/bench/txn_bench
run abort build/bench/abort_bench
run sdk build/bench/sdk_bench
run spool build/bench/spool_bench
run crc build/bench/crc_bench
run faults build/bench/fault_recovery_bench
run kafka build/bench/kafka_bench --broker-bin build/broker-stub/exactly-broker \
  --kafka-script scripts/kafka.sh
run python env PYTHONPATH="$(pwd)/build/bindings/python" /usr/bin/python3 bench/python_producer_bench.py
