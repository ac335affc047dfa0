#!/usr/bin/env bash
# The tests with real concurrency, under ThreadSanitizer (issue 18). Builds into build-tsan/
# (-fsanitize=thread, -Werror, only the targets below) and runs:
#
#   SDK integration tests (sdk_integration_test; bundled broker in-process), all but three:
#     ProducerTest                 the delivery thread: reports, Flush and Close from the caller
#     TransactionalProducerTest,   the transactional producer with the broker's loop beside it,
#     AbortAfterLostResponseTest   its retries and aborts on lost responses
#     ConsumerTest                 the read_committed consumer over librdkafka's threads
#     SpooledProducerTest, SpoolSendAsyncTest, SpoolCorruptionTest, SpoolOptionsTest
#                                  the spool: group committers (many senders, SendAsync), the
#                                  syncer and the drainer
#     ProcessorTest                the Processor's poll/transform/commit loop and its Stop
#     Left out: SpoolCrashTest and ProcessorKillTest (5.5 of the SDK suite's 7.5 minutes under
#     TSan; they SIGKILL a child process, and the concurrency inside the child is the same as
#     in the spool and processor tests above), KafkaFaultsTest (Apache Kafka only).
#   Broker integration tests (broker_integration_test), all of them: each drives the broker's
#     public API (topics, faults, restarts, logs, AbortTransaction) from the test's thread while
#     the loop thread serves librdkafka and raw clients.
#   The Python bindings' pytest suite but test_memory.py (an RSS bound; TSan's shadow memory
#     breaks it): the extension built with TSan, run by /usr/bin/python3 with libtsan preloaded.
#     Calls that release the GIL, callbacks from SDK threads that take it back, the spool's
#     on_durable, testing.Broker; its child processes (spool_child.py) run under TSan too.
#
# Not instrumented, so TSan sees neither their races nor the order their atomics give: Debian's
# librdkafka, RocksDB, abseil, libstdc++, CPython. What that takes (tests/tsan.supp says why for
# each entry): tests/support/tsan_c11_threads.c (librdkafka's C11 threads and locks, which GCC
# 12's TSan cannot see, through pthreads), suppressions for librdkafka and abseil's Status
# reference count, and RocksDB writes whose memory accesses are not recorded
# (sdk/src/spool/store.cc, Write). No race in our own code was found (2026-12-04).
#
# Time on 2 cores (2026-12-06, a quiet machine): the build about 6 minutes from an empty
# build-tsan/ (245 steps, no ccache); the tests 152 s: the 262 C++ tests 92 s (ctest -j 6: 3 per
# core, as they mostly wait), then the Python suite's 18 files 6 at a time, 60 s.
#
#   scripts/tsan.sh              # build and run all of the above
#   scripts/tsan.sh --no-python  # without the Python suite (nor the extension's build)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=1
for arg in "$@"; do
  case "$arg" in
    --no-python) PYTHON=0 ;;
    *) echo "tsan.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
BUILD_DIR=build-tsan
JOBS=$(nproc)
# Tests run 3 per core, as scripts/test.sh runs them: they mostly wait on brokers and timeouts.
TEST_JOBS=${EXACTLY_TEST_JOBS:-$((3 * JOBS))}

TARGETS=(--target sdk_integration_test --target broker_integration_test)
SETUP_ARGS=()
if [ "$PYTHON" = 1 ]; then
  TARGETS+=(--target _exactly)
  SETUP_ARGS+=(--python)
fi
start=$SECONDS
scripts/setup.sh --build-dir "$BUILD_DIR" --werror --sanitize thread --tests-only \
  "${SETUP_ARGS[@]}" "${TARGETS[@]}"
echo "== tsan: build took $((SECONDS - start)) s"

# A report makes the process exit with 66, which fails its test (every report of a test is
# shown, not only the first); second_deadlock_stack: both stacks of a lock-order inversion.
export TSAN_OPTIONS="second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp"
start=$SECONDS
echo "== tsan: SDK and broker integration tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$TEST_JOBS" --timeout 900 -L '^integration$' \
  -E '^(SpoolCrashTest|ProcessorKillTest|KafkaFaultsTest)\.'
if [ "$PYTHON" = 1 ]; then
  echo "== tsan: Python bindings (libtsan preloaded into /usr/bin/python3)"
  # The C11-threads shim is preloaded too: librdkafka comes with the extension, after libc, so
  # only a preloaded definition is found before libc's. test_memory.py is left out: it bounds
  # the RSS, which TSan's shadow memory multiplies.
  # Reports go to files (pytest captures stderr, and some tests' child processes drop theirs).
  # One pytest per file, TEST_JOBS at a time, each with its own log; a failed file's log is
  # shown.
  reports="$PWD/$BUILD_DIR/tsan-python"
  rm -rf "$reports" && mkdir -p "$reports/logs"
  run_file() {
    LD_PRELOAD="$(gcc -print-file-name=libtsan.so.2) $PWD/$BUILD_DIR/libexactly_tsan_c11_threads.so" \
      TSAN_OPTIONS="$TSAN_OPTIONS log_path=$reports/report" \
      PYTHONPATH="$PWD/$BUILD_DIR/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
      /usr/bin/python3 -m pytest -q -p no:cacheprovider -p exactly.pytest_plugin "$1" \
      >"$reports/logs/$(basename "$1" .py).log" 2>&1
  }
  files=()
  for f in bindings/python/tests/test_*.py; do
    [ "$(basename "$f")" = test_memory.py ] || files+=("$f")
  done
  source scripts/parallel.sh
  parallel_each "$TEST_JOBS" "$reports/logs" run_file "${files[@]}"
  status=0
  for f in "${files[@]}"; do
    name=$(basename "$f" .py)
    file_status=$(parallel_status "$reports/logs" "$f")
    echo "$name: $(tail -1 "$reports/logs/$name.log")"
    if [ "$file_status" != 0 ]; then
      cat "$reports/logs/$name.log"
      echo "== tsan: $name FAILED (exit $file_status)"
      status=1
    fi
  done
  if compgen -G "$reports/report.*" >/dev/null; then
    cat "$reports"/report.*
    echo "== tsan: the Python suite's processes reported the races above"
    exit 1
  fi
  [ "$status" = 0 ] || exit "$status"
fi
echo "== tsan: tests took $((SECONDS - start)) s, no report"
