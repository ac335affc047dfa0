#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the exactly-once demo.
#
#   scripts/demo.sh [--records N] [--kills K] [--seconds S] [--seed X] [--keep]
#
# The demo starts the bundled broker (dropping 1 produce response in 10), then runs a spooled
# transactional producer that sends records 0..N-1 and is SIGKILLed at random moments and
# restarted each time, and the same with a plain producer (acks=1, no idempotence, no spool).
# A read_committed consumer counts both topics; the table at the end shows what each lost or
# duplicated. It exits non-zero if the exactly-once run missed or duplicated any record.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build-dir build

exec build/examples/exactly_once_demo "$@"
