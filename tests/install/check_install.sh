#!/usr/bin/env bash
# Installs the SDK from BUILD_DIR into SCRATCH/prefix, then builds PROJECT against it twice:
# with CMake's find_package(exactly) and with pkg-config. Each program must run and pass. Then,
# when the build has the Prometheus exporter, prometheus_project the same two ways.
#
#   check_install.sh BUILD_DIR PROJECT_DIR SCRATCH_DIR
set -euo pipefail
BUILD_DIR=$1 PROJECT=$2 SCRATCH=$3
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"
PREFIX="$SCRATCH/prefix"

cmake --install "$BUILD_DIR" --prefix "$PREFIX" >/dev/null
test -f "$PREFIX/include/exactly/exactly.h"
test -f "$PREFIX/lib/cmake/exactly/exactlyConfig.cmake" ||
  test -f "$PREFIX"/lib/*/cmake/exactly/exactlyConfig.cmake

echo "== find_package(exactly)"
cmake -S "$PROJECT" -B "$SCRATCH/cmake-build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$SCRATCH/cmake-build" >/dev/null
"$SCRATCH/cmake-build/uses_exactly"

echo "== pkg-config exactly"
PC_DIR=$(dirname "$(find "$PREFIX" -name exactly.pc | head -n1)")
# shellcheck disable=SC2046
c++ -std=c++20 "$PROJECT/uses_exactly.cc" -o "$SCRATCH/uses_exactly_pc" \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs exactly)
"$SCRATCH/uses_exactly_pc"
echo "== the installed SDK builds and runs both ways"

# The Prometheus component, when the build has it (EXACTLY_PROMETHEUS).
PROMETHEUS_PC=$(find "$PREFIX" -name exactly-prometheus.pc | head -n1)
if [ -z "$PROMETHEUS_PC" ]; then
  echo "== no exactly-prometheus.pc: the build has no Prometheus exporter, not checked"
  exit 0
fi
PROMETHEUS_PROJECT=$(dirname "$PROJECT")/prometheus_project
test -f "$PREFIX/include/exactly/prometheus.h"
echo "== find_package(exactly COMPONENTS prometheus)"
cmake -S "$PROMETHEUS_PROJECT" -B "$SCRATCH/prometheus-build" -DCMAKE_PREFIX_PATH="$PREFIX" \
  >/dev/null
cmake --build "$SCRATCH/prometheus-build" >/dev/null
"$SCRATCH/prometheus-build/uses_exactly_prometheus"
echo "== pkg-config exactly-prometheus"
# shellcheck disable=SC2046
c++ -std=c++20 "$PROMETHEUS_PROJECT/uses_exactly_prometheus.cc" \
  -o "$SCRATCH/uses_exactly_prometheus_pc" \
  $(PKG_CONFIG_PATH="$(dirname "$PROMETHEUS_PC")" pkg-config --cflags --libs exactly-prometheus)
"$SCRATCH/uses_exactly_prometheus_pc"
echo "== the installed Prometheus component builds and runs both ways"
