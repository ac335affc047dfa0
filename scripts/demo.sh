#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the exactly-once demo.
#
#   scripts/demo.sh [--records N] [--kills K] [--seconds S] [--seed X] [--keep]
#   scripts/demo.sh --kafka [same options]   # on a 3-broker Apache Kafka cluster
#   scripts/demo.sh --replication [--records N] [--leader-kills K]
#                                            # issue 19's replication scenarios, counted
#
# The demo starts the bundled broker (dropping 1 produce response in 10), then runs a spooled
# transactional producer that sends records 0..N-1 and is SIGKILLed at random moments and
# restarted each time, and the same with a plain producer (acks=1, no idempotence, no spool).
# A read_committed consumer counts both topics; the table at the end shows what each lost or
# duplicated. It exits non-zero if the exactly-once run missed or duplicated any record.
#
# With --kafka the same runs go to a 3-broker Apache Kafka cluster (scripts/kafka.sh), whose
# faults are real: in the middle of each run the JVM of node 2 is SIGKILLed and started
# again. Then tests/kafka/acks_scenario.py counts what acks=1 loses when a leader dies
# with its followers behind, and what acks=all with min.insync.replicas=2 does not.
#
# With --replication it runs examples/replication_scenarios instead: the five scenarios of
# acks, ISR, min.insync.replicas, unclean election and power loss on fresh 3-broker bundled
# clusters, with librdkafka clients, and a table of what each acknowledged, lost and duplicated.
set -euo pipefail
cd "$(dirname "$0")/.."
KAFKA=0
REPLICATION=0
ARGS=()
for arg in "$@"; do
  case "$arg" in
    --kafka) KAFKA=1 ;;
    --replication) REPLICATION=1 ;;
    *) ARGS+=("$arg") ;;
  esac
done
if [ "$REPLICATION" = 1 ]; then
  scripts/setup.sh --build-dir build --demo --target replication_scenarios
  exec build/examples/replication_scenarios "${ARGS[@]}"
fi
# Only what the demo needs (the library, the broker, the demo program); Java too with --kafka.
if [ "$KAFKA" = 0 ]; then
  scripts/setup.sh --build-dir build --demo
else
  scripts/setup.sh --build-dir build --demo --java
fi

if [ "$KAFKA" = 0 ]; then
  exec build/examples/exactly_once_demo "${ARGS[@]}"
fi
DIR=$(mktemp -d /tmp/exactly-demo-kafka-XXXXXX)
trap 'scripts/kafka.sh destroy "$DIR" >/dev/null 2>&1 || true' EXIT
echo "starting 3 brokers of Apache Kafka (scripts/kafka.sh) in $DIR ..."
BOOTSTRAP=$(scripts/kafka.sh start --brokers 3 --dir "$DIR" | sed -n 's/^bootstrap.servers=//p')
# Node 2 (it leads about a third of the partitions): SIGKILL, 4 s down, started again.
FAULT="scripts/kafka.sh kill '$DIR' 2 && echo '  SIGKILLed Kafka node 2' >&2 && sleep 4 && \
scripts/kafka.sh restart '$DIR' 2"
status=0
build/examples/exactly_once_demo --bootstrap-servers "$BOOTSTRAP" --mid-run-command "$FAULT" \
  "${ARGS[@]}" || status=$?
/usr/bin/python3 tests/kafka/acks_scenario.py --cluster "$DIR" || status=$?
exit $status
