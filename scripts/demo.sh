#!/usr/bin/env bash
# The main job: installs what is missing, builds, starts the bundled broker (the exactly-broker
# binary) and round-trips records through it with an idempotent librdkafka producer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-dir build

BROKER_LOG=$(mktemp)
coproc BROKER { exec build/broker-stub/exactly-broker --port 0 2>"$BROKER_LOG"; }
trap 'kill "$BROKER_PID" 2>/dev/null || true; rm -f "$BROKER_LOG"' EXIT
read -r -t 10 line <&"${BROKER[0]}" || { echo "the broker did not start:"; cat "$BROKER_LOG"; exit 1; }
BOOTSTRAP=${line#bootstrap.servers=}
echo "== exactly-broker is serving at $BOOTSTRAP"
build/examples/broker_roundtrip --bootstrap-servers "$BOOTSTRAP" --records 100000
