#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then the C++ suites (CTest) and the Python
# suites (pytest with /usr/bin/python3).
#
#   scripts/test.sh          # what a developer runs
#   scripts/test.sh --ci     # also: -Werror, unit + integration tests under ASan + UBSan, the
#                            # tests with real concurrency under TSan (scripts/tsan.sh), a
#                            # brief run of the fuzz targets (scripts/fuzz.sh --seconds 20), and
#                            # the pip installs (scripts/pip_check.sh)
#   scripts/test.sh --no-kafka   # without the kafka label (the suites again on Apache Kafka)
#
# Besides the main CTest run, every time: the cluster3 label (the SDK, Python, example and
# interop suites against the bundled broker as 3 brokers: exactly-broker --brokers 3).
set -euo pipefail
cd "$(dirname "$0")/.."

CI=0
KAFKA=1
for arg in "$@"; do
  case "$arg" in
    --ci) CI=1 ;;
    --no-kafka) KAFKA=0 ;;
  esac
done
JOBS=$(nproc)
# Tests run 3 per core: they mostly wait (on brokers, rebalances, timeouts, killed processes).
# Measured on 2 cores: the main run kept 0.2 of a core busy at -j 2 (627 s); at -j 6, 214 s.
# EXACTLY_TEST_JOBS overrides it.
TEST_JOBS=${EXACTLY_TEST_JOBS:-$((3 * JOBS))}
export EXACTLY_TEST_JOBS=$TEST_JOBS
# Each step's header says how long the run has taken so far (where CI's time goes).
STARTED=$SECONDS
step() { echo "== [$((SECONDS - STARTED)) s] $*"; }

if [ "$CI" = 1 ]; then
  scripts/setup.sh --build-dir build --werror --build-type Release
else
  scripts/setup.sh --build-dir build
fi

# Labels: unit, integration (bundled broker in-process), eos (the exactly-once checker,
# tests/eos), interop (kcat, kafka-python,
# confluent-kafka-python against the binary), python (the bindings' pytest suite), examples,
# install (a separate project built against the installed SDK), pypi (current confluent-kafka,
# kafka-python and aiokafka from PyPI in a venv, scripts/pypi_clients.sh; skipped when PyPI
# cannot be reached). Two more run after this one:
# cluster3 (below) and kafka1/kafka3 (at the end).
step "all tests (CTest)"
ctest --test-dir build --output-on-failure -j "$TEST_JOBS" --timeout 900 -LE 'kafka|cluster3'

# The cluster3 label (tests/cluster3): the SDK's integration suite, the Python suite and the
# examples against one exactly-broker --brokers 3 that a fixture starts and stops
# (scripts/bundled_cluster.sh), and the interop suite with 3 brokers per test. A step of its
# own, so that the cluster's tests do not share the machine with the main run's.
step "cluster3 label: the suites against 3 bundled brokers"
ctest --test-dir build --output-on-failure -j "$TEST_JOBS" --timeout 900 -L '^cluster3$'

if [ "$CI" = 1 ]; then
  step "unit and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  scripts/setup.sh --build-dir build-asan --werror --sanitize address,undefined --tests-only
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$TEST_JOBS" --timeout 900 -L 'unit|integration'
  # The SDK, spool, Processor, broker and Python tests with threads of their own, under
  # ThreadSanitizer: its own build of just those targets (scripts/tsan.sh has the figures).
  step "integration and Python tests under ThreadSanitizer"
  scripts/tsan.sh
  # A brief run of every fuzz target (tests/fuzz/README.md): its own clang build of the sources
  # the targets need (the broker's included, for broker_fuzz), then 20 s per target.
  step "fuzz targets, 20 s each"
  scripts/fuzz.sh --seconds 20
  # The Python package installed as users install it: pip with build isolation in a plain venv,
  # its wheel in another venv, and Debian's offline way, each checked against the bundled
  # broker (scripts/pip_check.sh; about 6-9 minutes on 2 cores).
  step "Python package: pip install (isolated, wheel, offline)"
  scripts/pip_check.sh --work build-pip
fi
# The kafka label: the SDK, Python and example suites again on Apache Kafka (scripts/kafka.sh),
# on 1 broker and then on 3, one cluster at a time; kafka1 also runs the conformance scenarios
# (tests/conformance) and the PyPI clients against Kafka.
if [ "$KAFKA" = 0 ]; then
  step "kafka label SKIPPED: --no-kafka"
elif kafka_why=$(scripts/kafka.sh fetch 2>&1); then
  for size in 1 3; do
    step "kafka label on $size broker(s) of Apache Kafka"
    ctest --test-dir build --output-on-failure -j "$TEST_JOBS" --timeout 900 -L "^kafka${size}\$"
  done
elif [ $? = 77 ]; then
  step "kafka label SKIPPED: Apache Kafka cannot be had here: ${kafka_why##*unavailable: }"
else
  echo "$kafka_why"; exit 1
fi
step "all tests passed"
