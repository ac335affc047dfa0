#!/usr/bin/env bash
# scripts/pypi_clients.sh: the current Kafka clients from PyPI (confluent-kafka with its own
# bundled librdkafka, kafka-python, aiokafka; versions pinned in tests/pypi/requirements.txt)
# against the bundled broker's binary: the tests/pypi suite, run by pytest in a venv of its own.
#
# The venv is made with the `python3` on PATH (the pyenv build here, as scripts/pip_check.sh
# does: Debian's /usr/bin/python3 has no ensurepip without python3-venv), and the clients
# and pytest are installed from PyPI as wheels only. A later run reuses it while the
# requirements file and that python3 are unchanged (a stamp in the venv records both).
#
# Usage: scripts/pypi_clients.sh [--venv DIR] [--prepare-only | --existing-venv]
#                                 [-- PYTEST_ARGS...]
#   --venv DIR       the venv (default: build/pypi-clients-venv; relative to the checkout)
#   --prepare-only   make (or check) the venv, run no test
#   --existing-venv  make nothing: without an up-to-date venv, exit 77 (CTest's tests, after
#                    the fixture that makes it: no second try at an unreachable PyPI)
#   PYTEST_ARGS     given to pytest after the suite, e.g. -- -k admin -x
#
# Environment: EXACTLY_BROKER_BIN names the broker binary (default: the build tree's);
# EXACTLY_KAFKA_CLUSTER, a running Apache Kafka cluster (scripts/kafka.sh), runs every test on
# it too (without it those halves skip and say so).
#
# Exits 77 (a skip for CTest, as scripts/kafka.sh) when PyPI cannot be reached to make the venv.
# Time on 2 cores (busy with other work): making the venv 17-24 s (9 MB of wheels downloaded),
# finding it up to date about 1 s; the suite 17-20 s (about 40 s with the Kafka halves).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

VENV=build/pypi-clients-venv
PREPARE_ONLY=0
EXISTING_ONLY=0
PYTEST_ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --venv) VENV=$2; shift ;;
    --prepare-only) PREPARE_ONLY=1 ;;
    --existing-venv) EXISTING_ONLY=1 ;;
    --) shift; PYTEST_ARGS=("$@"); break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "pypi_clients.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
REQUIREMENTS=$ROOT/tests/pypi/requirements.txt
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

# The interpreter itself, not pyenv's shim in front of it.
PYTHON=$(python3 -c 'import sys; print(sys.executable)') ||
  { echo "pypi_clients.sh: no python3 on PATH" >&2; exit 1; }
# What the venv is made of: the requirements and the interpreter (its path and version).
STAMP=$( { cat "$REQUIREMENTS"; echo "$PYTHON"; "$PYTHON" -c 'import sys; print(sys.version)'; } |
         sha256sum | cut -d' ' -f1)

prepare() {
  if [[ -x $VENV/bin/python && $(cat "$VENV/.exactly-stamp" 2>/dev/null) == "$STAMP" ]]; then
    return 0
  fi
  if [[ $EXISTING_ONLY == 1 ]]; then
    echo "pypi_clients: skipped: no up-to-date venv in $VENV (see the output of the step that" \
         "makes it, CTest's pypi_clients_venv)"
    exit 77
  fi
  echo "pypi_clients: making $VENV with $PYTHON ($("$PYTHON" --version 2>&1))"
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV"; then
    echo "pypi_clients.sh: $PYTHON -m venv failed (Debian's python3 needs python3-venv)" >&2
    exit 1
  fi
  local log=$VENV/pip-install.log
  if ! "$VENV/bin/python" -m pip install --only-binary :all: --retries 2 --timeout 15 \
       -r "$REQUIREMENTS" > "$log" 2>&1; then
    # Unreachable index (a skip) or a broken pin (a failure)? Ask the index one question.
    if ! "$VENV/bin/python" -m pip index versions pytest --retries 0 --timeout 10 \
         > /dev/null 2>&1; then
      local why
      why=$(grep -oE "Failed to establish a new connection: [^')]*|Temporary failure in name \
resolution|Name or service not known|Cannot connect to proxy|SSLError[^']*|timed out" "$log" | head -n 1)
      [[ -n $why ]] || why=$(tail -n 1 "$log")
      echo "pypi_clients: skipped: PyPI cannot be reached ($(grep -m1 '^Looking in indexes' \
"$log" || echo 'pip'): $why)"
      rm -rf "$VENV"
      exit 77
    fi
    tail -n 30 "$log" >&2
    echo "pypi_clients.sh: pip install -r $REQUIREMENTS failed (log: $log)" >&2
    exit 1
  fi
  echo "$STAMP" > "$VENV/.exactly-stamp"  # last: a venv half made is made again
}

SECONDS=0
mkdir -p "$(dirname "$VENV")"
# One maker at a time (CTest runs the venv's setup as a fixture; this covers hand-run copies).
exec 9> "$VENV.lock"
flock 9
prepare
exec 9>&-
echo "pypi_clients: venv $VENV ready in ${SECONDS}s:" "$("$VENV/bin/python" -c '
import confluent_kafka, importlib.metadata as m
versions = [f"{n} {m.version(n)}" for n in ("confluent-kafka", "kafka-python", "aiokafka", "pytest")]
versions[0] += f" (librdkafka {confluent_kafka.libversion()[0]})"
print(", ".join(versions))')"
if [[ $PREPARE_ONLY == 1 ]]; then
  exit 0
fi
exec "$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider "$ROOT/tests/pypi" \
  ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"}
