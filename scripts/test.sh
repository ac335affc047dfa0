#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then the C++ suites (CTest) and the Python
# suites (pytest with /usr/bin/python3).
#
#   scripts/test.sh          # what a developer runs
#   scripts/test.sh --ci     # also: -Werror, and unit + integration tests under ASan + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."

CI=0
[ "${1:-}" = "--ci" ] && CI=1
JOBS=$(nproc)

if [ "$CI" = 1 ]; then
  scripts/setup.sh --build-dir build --werror --build-type Release
else
  scripts/setup.sh --build-dir build
fi

# Labels: unit, integration (bundled broker in-process), interop (kcat, kafka-python,
# confluent-kafka-python against the binary), python (the bindings' pytest suite), examples,
# install (a separate project built against the installed SDK).
echo "== all tests (CTest)"
ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 900

if [ "$CI" = 1 ]; then
  echo "== unit and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  scripts/setup.sh --build-dir build-asan --werror --sanitize address,undefined --tests-only
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$JOBS" --timeout 900 -L 'unit|integration'
fi
echo "== all tests passed"
