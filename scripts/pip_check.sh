#!/usr/bin/env bash
# scripts/pip_check.sh: the Python package installs the ways bindings/python/README.md says.
#
#   1. isolated: a plain venv of the `python3` on PATH, `pip install ./bindings/python` with
#      build isolation (setuptools, wheel, pybind11 from PyPI; cmake and ninja too if the
#      machine has none), then a transactional produce and a read_committed consume through
#      the bundled broker in that venv;
#   2. wheel: `pip wheel ./bindings/python` (isolated), the wheel installed (no index, no
#      build) into another fresh venv, of /usr/bin/python3 when it is the same Python version
#      as `python3` (another interpreter, same platform), and the same check there;
#   3. offline, Debian's way: `/usr/bin/python3 -m venv --system-site-packages` and
#      `pip install --no-build-isolation --no-index ./bindings/python` (Debian's setuptools,
#      wheel and pybind11; nothing from PyPI), and the same check.
#
# The C++ libraries always come from Debian (scripts/setup.sh); the module links their shared
# libraries, so the wheel is for machines with the same Debian packages.
#
# Usage: scripts/pip_check.sh [--offline-only] [--work DIR] [--keep]
#   --offline-only  step 3 only (no PyPI needed)
#   --work DIR      work directory (venvs, wheel, logs, the CMake build directory); kept, and
#                   a second run reuses its build directory (default: a new one under /tmp,
#                   removed at the end unless --keep)
#
# Time: the steps share one CMake build directory (EXACTLY_CMAKE_BUILD_DIR; setup.py
# reconfigures it for each step's Python and pybind11, which only the bindings depend on):
# the first step compiles the SDK, the broker and the bindings, about 6 minutes on a 2-core
# VM, and each later step recompiles only the bindings, 1-1.5 minutes: about 9 minutes in
# all, 6 with --offline-only (less with --work on a second run). CMAKE_BUILD_PARALLEL_LEVEL
# sets the build jobs (default: the CPU count).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

OFFLINE_ONLY=0
KEEP=0
WORK=
while [[ $# -gt 0 ]]; do
  case $1 in
    --offline-only) OFFLINE_ONLY=1 ;;
    --keep) KEEP=1 ;;
    --work) WORK=$2; KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "pip_check.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $WORK ]]; then
  WORK=$(mktemp -d /tmp/exactly-pip-check.XXXXXX)
fi
mkdir -p "$WORK/logs"
WORK=$(cd "$WORK" && pwd)
if [[ $KEEP == 0 ]]; then
  trap 'rm -rf "$WORK"' EXIT
fi
export EXACTLY_CMAKE_BUILD_DIR=$WORK/cmake-build
export PIP_DISABLE_PIP_VERSION_CHECK=1
SECONDS=0

# The check, run by each venv's Python from the work directory (not the checkout).
cat > "$WORK/check.py" <<'EOF'
import importlib.metadata
import os
import sys

import exactly
import exactly.testing

assert os.path.realpath(exactly.__file__).startswith(os.path.realpath(sys.prefix)), \
    f"exactly imported from {exactly.__file__}, not from the venv {sys.prefix}"
plugins = [e.name for e in importlib.metadata.entry_points(group="pytest11")]
assert "exactly.pytest_plugin" in plugins, plugins
with exactly.testing.Broker(topics={"orders": 1}) as broker:
    producer = exactly.TransactionalProducer(broker.bootstrap_servers, "pip-check")
    with producer.transaction() as txn:
        txn.send("orders", key="id-1", value=b"installed by pip")
    producer.close()
    with exactly.Consumer(broker.bootstrap_servers, "pip-check", topics=["orders"]) as c:
        message = c.poll(timeout=30)
    assert message is not None, "no record consumed"
    assert (message.key, message.value) == (b"id-1", b"installed by pip"), message
    assert [r.value for r in broker.committed_records("orders")] == [b"installed by pip"]
print(f"pip_check: ok: {sys.executable} (Python {sys.version.split()[0]}), "
      f"librdkafka {exactly.librdkafka_version}")
EOF

step() {  # step NAME COMMAND...: runs COMMAND with its output in logs/NAME.log
  local name=$1
  shift
  echo "pip_check: [$name] $* (log: $WORK/logs/$name.log; ${SECONDS}s so far)"
  if ! "$@" > "$WORK/logs/$name.log" 2>&1; then
    tail -n 60 "$WORK/logs/$name.log" >&2
    echo "pip_check: FAILED: [$name] $*" >&2
    exit 1
  fi
}

check() {  # check VENV
  (cd "$WORK" && "$1/bin/python" check.py 2> "$WORK/logs/check-$(basename "$1").log") || {
    tail -n 30 "$WORK/logs/check-$(basename "$1").log" >&2
    echo "pip_check: FAILED: the check in $1" >&2
    exit 1
  }
}

fresh_venv() {  # fresh_venv PYTHON VENV [venv options]
  rm -rf "$2"
  "$1" -m venv "${@:3}" "$2"
}

if [[ $OFFLINE_ONLY == 0 ]]; then
  PYTHON=$(command -v python3)
  TAG=$("$PYTHON" -c 'import sys; print(sys.implementation.cache_tag)')
  OTHER=$PYTHON
  if [[ -x /usr/bin/python3 ]] &&
     [[ $(/usr/bin/python3 -c 'import sys; print(sys.implementation.cache_tag)') == "$TAG" ]]; then
    OTHER=/usr/bin/python3
  fi

  echo "pip_check: 1. isolated install into a plain venv of $PYTHON"
  fresh_venv "$PYTHON" "$WORK/isolated"
  step isolated-install "$WORK/isolated/bin/pip" install -v "$ROOT/bindings/python"
  check "$WORK/isolated"

  echo "pip_check: 2. pip wheel with $PYTHON, installed into a venv of $OTHER"
  rm -rf "$WORK/wheels"
  step wheel "$WORK/isolated/bin/pip" wheel -v --no-deps -w "$WORK/wheels" "$ROOT/bindings/python"
  fresh_venv "$OTHER" "$WORK/from-wheel"
  step wheel-install "$WORK/from-wheel/bin/pip" install --no-index --no-deps "$WORK"/wheels/exactly-*.whl
  check "$WORK/from-wheel"
fi

echo "pip_check: 3. offline: Debian's /usr/bin/python3, --no-build-isolation, no index"
if ! /usr/bin/python3 -c 'import setuptools, wheel, pybind11, venv, ensurepip' 2>/dev/null; then
  echo "pip_check: Debian's packaging tools are missing: apt-get install python3-venv" \
       "python3-pip python3-setuptools python3-wheel python3-pybind11" >&2
  exit 1
fi
fresh_venv /usr/bin/python3 "$WORK/offline" --system-site-packages
step offline-install "$WORK/offline/bin/pip" install -v --no-build-isolation --no-index \
  "$ROOT/bindings/python"
check "$WORK/offline"

echo "pip_check: all ok in ${SECONDS}s"
