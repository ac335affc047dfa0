#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, AddressSanitizer + UBSan) into build-fuzz/
# and runs them, each for a fixed time, from its seed corpus in tests/fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh [--seconds N] [target...]   # default: every target, 60 s each
#   scripts/fuzz.sh --seeds                      # regenerate and minimize the committed corpora
#
# Targets: request_fuzz record_batch_fuzz spool_record_fuzz wal_salvage_fuzz broker_fuzz
# admin_command_fuzz sasl_fuzz.
# Runs one target per core at a time. Prints, per target, libFuzzer's executions
# (stat::number_of_executed_units) and its last coverage line (cov: ...). Exits non-zero if a
# target crashes, leaks, times out or runs out of memory; the input that did it is saved under
# build-fuzz/crashes/ (reproduce with build-fuzz/tests/fuzz/<target> build-fuzz/crashes/<file>).
# The corpus a run grows stays in build-fuzz/corpus/<target>/ and is reused by the next run.
# CI runs 20 s per target (scripts/test.sh --ci). Finding bugs takes much longer: for that, run
# it for hours (--seconds 3600 or more), by hand; it is not part of any test.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(request_fuzz record_batch_fuzz spool_record_fuzz wal_salvage_fuzz broker_fuzz
             admin_command_fuzz sasl_fuzz)
SECONDS_EACH=60
SEEDS=0
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --seeds) SEEDS=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")

# clang and its runtimes, and the libraries the build links (installs only what is missing).
scripts/setup.sh --no-build --demo --fuzz

BUILD=build-fuzz
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
# Only tests/fuzz is built: each target compiles in the few sources it exercises.
cmake -S . -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1" -DCMAKE_C_FLAGS_RELEASE="-O1" \
  -DEXACTLY_BUILD_FUZZ=ON -DEXACTLY_BUILD_TESTS=OFF -DEXACTLY_BUILD_BENCH=OFF \
  -DEXACTLY_BUILD_PYTHON=OFF -DEXACTLY_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target fuzz_all
BIN="$BUILD/tests/fuzz"

if [ "$SEEDS" = 1 ]; then
  # Seeds from the code's own encoders (and the captured client frames when ../shared has
  # them), minimized to the inputs that add coverage. What runs grow in build-fuzz/corpus/ stays
  # out of the repository: it is thousands of files, and the seeds reach it again in seconds.
  raw="$BUILD/seeds"
  rm -rf "$raw"
  "$BIN/fuzz_corpus_gen" "$raw" ../shared/wire-samples
  for t in "${TARGETS[@]}"; do
    rm -rf "tests/fuzz/corpus/$t"
    mkdir -p "tests/fuzz/corpus/$t"
    "$BIN/$t" -merge=1 "tests/fuzz/corpus/$t" "$raw/$t" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
    echo "$t: $(ls "tests/fuzz/corpus/$t" | wc -l) files, $(cat "tests/fuzz/corpus/$t"/* | wc -c) bytes"
  done
  exit 0
fi

mkdir -p "$BUILD/crashes" "$BUILD/logs"
for t in "${TARGETS[@]}"; do
  [ -x "$BIN/$t" ] || { echo "fuzz.sh: no target $t (${ALL_TARGETS[*]})" >&2; exit 2; }
done
# One target per core at a time (each fuzzes on one thread); the results are reported in order.
fuzz_one() {
  mkdir -p "$BUILD/corpus/$1"
  "$BIN/$1" -max_total_time="$SECONDS_EACH" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$BUILD/crashes/$1-" "$BUILD/corpus/$1" "tests/fuzz/corpus/$1" \
    >"$BUILD/logs/$1.log" 2>&1
}
echo "== ${TARGETS[*]}: ${SECONDS_EACH}s each, $(nproc) at a time"
source scripts/parallel.sh
parallel_each "$(nproc)" "$BUILD/logs" fuzz_one "${TARGETS[@]}"
failed=()
for t in "${TARGETS[@]}"; do
  log="$BUILD/logs/$t.log"
  status=$(parallel_status "$BUILD/logs" "$t")
  echo "== $t"
  grep -E "stat::number_of_executed_units" "$log" || true
  grep -E "cov: " "$log" | tail -1 || true
  if [ "$status" != 0 ]; then
    failed+=("$t")
    echo "$t FAILED (exit $status); log: $log"
    grep -E "ERROR: |SUMMARY: |Test unit written to|runtime error" "$log" | head -8
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "== fuzzing FAILED: ${failed[*]} (inputs in $BUILD/crashes/)"
  exit 1
fi
echo "== fuzzing passed: ${TARGETS[*]}"
