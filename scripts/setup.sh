#!/usr/bin/env bash
# Installs every Debian package exactly needs (only those missing) and builds it with CMake.
#
#   scripts/setup.sh [--build-dir DIR] [--sanitize address,undefined] [--werror] [--no-build]
#                    [--tests-only]   (no benchmarks, no Python module: the sanitizer build)
#                    [--python]       with --tests-only: the Python module all the same (TSan)
#                    [--target T]     build only target T (repeatable; default: all)
#                    [--build-type T] (default RelWithDebInfo; CI uses Release: no debug info to write)
#                    [--demo]         only what the exactly-once demo needs: the library and broker
#                                     packages, and the one target exactly_once_demo (no tests,
#                                     benchmarks, Python module; a first run takes minutes, not 12)
#                    [--java]         with --demo: also Java and Maven (the demo on Apache Kafka)
#                    [--fuzz]         also clang and its runtimes (scripts/fuzz.sh's libFuzzer build)
#
# Debian 12 (bookworm). Uses sudo when not root. Python packages come from Debian too
# (python3-pytest, python3-pybind11, ...); tests use /usr/bin/python3, which sees them.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=build
SANITIZE=""
WERROR=OFF
BUILD=1
EXTRAS=ON
BUILD_TYPE=RelWithDebInfo
DEMO=0
JAVA=0
FUZZ=0
PYTHON=""
TARGET=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR="$2"; shift 2 ;;
    --sanitize) SANITIZE="$2"; shift 2 ;;
    --werror) WERROR=ON; shift ;;
    --no-build) BUILD=0; shift ;;
    --tests-only) EXTRAS=OFF; shift ;;
    --python) PYTHON=ON; shift ;;
    --target) TARGET+=(--target "$2"); shift 2 ;;
    --build-type) BUILD_TYPE="$2"; shift 2 ;;
    --demo) DEMO=1; shift ;;
    --java) JAVA=1; shift ;;
    --fuzz) FUZZ=1; shift ;;
    *) echo "setup.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

# Why each package is here. The library, the broker and the examples:
CORE_PACKAGES=(
  build-essential cmake ninja-build pkg-config   # the C++20 toolchain and build
  librdkafka-dev                                  # the Kafka client the SDK wraps; the mock-cluster baseline
  libabsl-dev                                     # Status/StatusOr, strings, flags
  librocksdb-dev                                  # the broker's store and the SDK's spool
  libasio-dev                                     # the broker's event loop and sockets
  libssl-dev                                      # the broker's TLS listeners and SASL/SCRAM
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev # record batch compression codecs
)
# Tests, benchmarks, the Python bindings and Apache Kafka:
EXTRA_PACKAGES=(
  libgtest-dev libgmock-dev                       # C++ tests
  libbenchmark-dev                                # benchmarks
  pybind11-dev python3-dev python3-pybind11       # the Python bindings
  python3-venv python3-pip python3-setuptools python3-wheel  # pip install ./bindings/python, offline
  python3-pytest                                  # Python tests
  python3-prometheus-client                       # tests of the Python Prometheus collector
  python3-confluent-kafka python3-kafka kcat      # interop tests with clients written elsewhere
  clang-format                                    # style checks
  prometheus-cpp-dev nlohmann-json3-dev           # the optional Prometheus exporter (exactly_prometheus)
)
JAVA_PACKAGES=(openjdk-17-jre-headless maven)     # Apache Kafka (scripts/kafka.sh): the kafka label
# clang, and compiler-rt for libFuzzer and the sanitizers (only a recommendation of clang):
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
PACKAGES=("${CORE_PACKAGES[@]}")
[ "$DEMO" = 0 ] && PACKAGES+=("${EXTRA_PACKAGES[@]}")
{ [ "$DEMO" = 0 ] || [ "$JAVA" = 1 ]; } && PACKAGES+=("${JAVA_PACKAGES[@]}")
[ "$FUZZ" = 1 ] && PACKAGES+=("${FUZZ_PACKAGES[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$BUILD" = 1 ] || exit 0
GENERATOR=()
command -v ninja >/dev/null && GENERATOR=(-G Ninja)
# Release at -O2, the level every other build uses (GCC 12 at -O3 reports false -Wrestrict
# warnings inside libstdc++, which -Werror would turn into failures).
TESTS=ON
EXAMPLES=$EXTRAS
if [ "$DEMO" = 1 ]; then
  TESTS=OFF
  EXTRAS=OFF
  EXAMPLES=ON
  # The exactly-once demo, unless the caller names another example.
  [ "${#TARGET[@]}" -eq 0 ] && TARGET=(--target exactly_once_demo)
  PYTHON=OFF
fi
PYTHON=${PYTHON:-$EXTRAS}
cmake -S . -B "$BUILD_DIR" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DEXACTLY_WERROR="$WERROR" -DEXACTLY_SANITIZE="$SANITIZE" -DEXACTLY_BUILD_TESTS="$TESTS" \
  -DEXACTLY_BUILD_EXAMPLES="$EXAMPLES" -DEXACTLY_BUILD_BENCH="$EXTRAS" -DEXACTLY_BUILD_PYTHON="$PYTHON" \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" "${TARGET[@]}"
