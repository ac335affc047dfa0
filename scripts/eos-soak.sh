#!/usr/bin/env bash
# The exactly-once checker for as long as you like (the suite runs it for about
# ten seconds per workload): fresh bundled broker per round, a fault schedule
# drawn from the round's seed, an independent read_committed reader, the checks.
#
#   scripts/eos-soak.sh                       # 10 minutes, every workload in turn
#   scripts/eos-soak.sh --seconds 3600 --workload processor --seed 100
#
# Exits non-zero at the first violation; its output names the seed.
set -euo pipefail
cd "$(dirname "$0")/.."
# Installs what is missing and configures build/ the first time (a full build).
[ -f build/CMakeCache.txt ] || scripts/setup.sh --build-dir build
cmake --build build -j "$(nproc)" --target exactly-eos-soak
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--seconds 600)
exec build/tests/eos/exactly-eos-soak "${args[@]}"
