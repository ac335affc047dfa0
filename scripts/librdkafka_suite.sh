#!/usr/bin/env bash
# Runs librdkafka 2.0.2's own integration tests (its tests/ directory) against the bundled
# broker started as a 3-broker cluster, one test per process and one fresh cluster per test.
#
#   scripts/librdkafka_suite.sh [options] [TEST...]
#
# TEST is a librdkafka test number (0103) or a comma-separated list of them. Without any, the
# tests that need three brokers run: 0008 0081 0101 0103 0107 (docs/librdkafka-suite.md says
# why these and which were left out).
#
# Options:
#   --timeout SEC        kill a test after SEC seconds (default 600); counts as FAIL
#   --broker PATH        the exactly-broker binary (default build/broker-stub/exactly-broker)
#   --cache DIR          where librdkafka's source is fetched and built
#                        (default ~/.cache/exactly/librdkafka-src)
#   --out DIR            per-test logs: test.log and the cluster's stdout/stderr
#                        (default build/librdkafka-suite)
#   --kafka-version V    the broker version the tests assume (TEST_KAFKA_VERSION; default
#                        2.4.0, the runner's own default)
#   --quick              librdkafka's quick mode (-Q: fewer messages, shorter tests)
#   --help               this text
#
# Getting the source: `apt-get source librdkafka=2.0.2-1` (Debian 12's source package) into the
# cache. That needs a deb-src entry in APT's sources; when there is none and the script runs as
# root it adds /etc/apt/sources.list.d/exactly-deb-src.sources (deb-src for bookworm, main) and
# runs apt-get update, saying so; otherwise it says what to add and stops. The source tree is
# configured and built once (`./configure`, `make libs`, `make -C tests test-runner`, output in
# CACHE/build.log); later runs reuse it.
#
# For each test: `scripts/bundled_cluster.sh start` runs
#   exactly-broker --port 0 --brokers 3 --default-replication-factor 3 --min-insync-replicas 2 --admin-port 0
# (plus --no-auto-create-topics for tests of librdkafka's "noautocreate" scenario), a test.conf
# with its bootstrap.servers is written to OUT/TEST/test.conf and passed to the runner through
# RDKAFKA_TEST_CONF (librdkafka's documented way to point it at another file than tests/test.conf),
# then `TESTS=TEST ./test-runner -L -p1 [-s SCENARIO]` runs in the source tree's tests/
# (-L: leave out its local tests, which need no broker), and the cluster is stopped. One line per
# test: PASS, FAIL or SKIP, and the time. Exits 1 if any test failed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
version=2.0.2
debian_version=2.0.2-1
default_tests="0008 0081 0101 0103 0107"

timeout_s=600
broker="$repo/build/broker-stub/exactly-broker"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/exactly/librdkafka-src"
out="$repo/build/librdkafka-suite"
kafka_version=2.4.0
quick=()
tests=()

usage() { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --help | -h) usage; exit 0 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --broker) broker=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --kafka-version) kafka_version=$2; shift 2 ;;
    --quick) quick=(-Q); shift ;;
    -*) echo "librdkafka_suite: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) IFS=', ' read -r -a more <<<"$1"; tests+=("${more[@]}"); shift ;;
  esac
done
[ ${#tests[@]} -gt 0 ] || read -r -a tests <<<"$default_tests"
for t in "${tests[@]}"; do
  [[ "$t" =~ ^[0-9]{4}$ ]] || { echo "librdkafka_suite: not a test number: $t" >&2; exit 2; }
done

say() { echo "librdkafka_suite: $*" >&2; }

if [ ! -x "$broker" ]; then
  say "no broker at $broker; build it first:"
  say "  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release &&" \
      "cmake --build build --target exactly-broker"
  exit 1
fi
broker=$(cd "$(dirname "$broker")" && pwd)/$(basename "$broker")

# --- librdkafka's source, from Debian's source package ------------------------------------------
src="$cache/librdkafka-$version"

has_deb_src() {
  grep -Eqs '^[[:space:]]*deb-src[[:space:]]|^Types:.*deb-src' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
}

fetch_source() {
  if ! has_deb_src; then
    if [ "$(id -u)" != 0 ]; then
      say "APT has no deb-src entry, so 'apt-get source' cannot fetch librdkafka."
      say "As root, add /etc/apt/sources.list.d/exactly-deb-src.sources with:"
      say "  Types: deb-src / URIs: http://deb.debian.org/debian / Suites: bookworm"
      say "  Components: main / Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
      say "then run 'apt-get update' (or run this script as root, which does it)."
      exit 1
    fi
    say "adding /etc/apt/sources.list.d/exactly-deb-src.sources (deb-src for bookworm main)" \
        "and running apt-get update"
    cat >/etc/apt/sources.list.d/exactly-deb-src.sources <<'EOF'
# Added by exactly's scripts/librdkafka_suite.sh, for `apt-get source librdkafka`.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq
  fi
  if ! command -v dpkg-source >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      say "installing dpkg-dev (apt-get source unpacks with dpkg-source)"
      apt-get install -y -qq dpkg-dev >/dev/null
    else
      say "apt-get source needs dpkg-source: sudo apt-get install dpkg-dev"; exit 1
    fi
  fi
  mkdir -p "$cache"
  say "fetching librdkafka $debian_version's source into $cache"
  if ! (cd "$cache" && apt-get source -qq "librdkafka=$debian_version" \
          >"$cache/fetch.log" 2>&1); then
    say "apt-get source failed:"; tail -n 20 "$cache/fetch.log" >&2; exit 1
  fi
  [ -f "$src/tests/test.c" ] || { say "no $src/tests/test.c after apt-get source"; exit 1; }
}

build_runner() {
  # Test 0101 reads the consumer's statistics with RapidJSON and skips itself without it.
  if ! dpkg -s rapidjson-dev >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      say "installing rapidjson-dev (headers only; librdkafka's test 0101 needs it)"
      apt-get install -y -qq rapidjson-dev >/dev/null
    else
      say "rapidjson-dev is not installed: test 0101 will skip itself" \
          "(sudo apt-get install rapidjson-dev, then delete $src/.exactly-built)"
    fi
  fi
  say "building librdkafka $version and its test runner in $src (once; log: $cache/build.log)"
  local jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  [ "$jobs" -le 2 ] || jobs=2
  if ! (cd "$src" && {
          ./configure
          nice -n 10 make -j"$jobs" libs
          nice -n 10 make -j"$jobs" -C tests test-runner
        } >"$cache/build.log" 2>&1); then
    say "the build failed; last lines of $cache/build.log:"; tail -n 30 "$cache/build.log" >&2
    exit 1
  fi
  touch "$src/.exactly-built"
}

[ -f "$src/tests/test.c" ] || fetch_source
[ -f "$src/.exactly-built" ] && [ -x "$src/tests/test-runner" ] || build_runner

# The scenario a test runs under, from its entry in tests/test.c (first one listed).
scenario_of() {
  awk -v t="$1" '
    index($0, "_TEST(" t "_") && $0 !~ "_TEST\\(" t "_[a-z_]*local" { on = 1; blk = "" }
    on { blk = blk $0; if ($0 ~ /\),[[:space:]]*$/) { print blk; exit } }' \
    "$src/tests/test.c" | sed -n 's/.*\.scenario *= *"\([^",]*\).*/\1/p'
}

# --- the tests -----------------------------------------------------------------------------------
mkdir -p "$out"
failed=0
printf '%-6s %-5s %8s  %s\n' test result time "detail (log: $out/TEST/test.log)"
for t in "${tests[@]}"; do
  dir="$out/$t"
  rm -rf "$dir"
  mkdir -p "$dir"
  scenario=$(scenario_of "$t")
  scenario=${scenario:-default}
  broker_args=(--port 0 --brokers 3 --default-replication-factor 3 --min-insync-replicas 2 --admin-port 0)
  [ "$scenario" != noautocreate ] || broker_args+=(--no-auto-create-topics)

  if ! "$repo/scripts/bundled_cluster.sh" start "$dir/cluster" -- "$broker" "${broker_args[@]}" \
         >"$dir/cluster-start.log" 2>&1; then
    printf '%-6s %-5s %8s  %s\n' "$t" FAIL - "the cluster did not start ($dir/cluster-start.log)"
    failed=1
    continue
  fi
  cat >"$dir/test.conf" <<EOF
# Written by scripts/librdkafka_suite.sh for test $t: a 3-broker bundled cluster.
bootstrap.servers=$(cat "$dir/cluster/bootstrap")
EOF

  start=$(date +%s.%N)
  rc=0
  # In a subshell whose stderr is closed, so that bash's "Aborted"/"Killed" notes stay out of the
  # table (the runner aborts itself on a failed assertion).
  { (cd "$src/tests" &&
       RDKAFKA_TEST_CONF="$dir/test.conf" TESTS="$t" TEST_KAFKA_VERSION="$kafka_version" \
       RDKAFKA_GITVER="$debian_version" LD_LIBRARY_PATH="../src:../src-cpp" \
       exec timeout -k 10 "$timeout_s" ./test-runner -L -p1 "${quick[@]}" -s "$scenario") \
      >"$dir/test.log" 2>&1 || rc=$?; } 2>/dev/null
  elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1fs", e - s }')

  stop_note=""
  if ! "$repo/scripts/bundled_cluster.sh" stop "$dir/cluster" >"$dir/cluster-stop.log" 2>&1; then
    stop_note="; the broker did not stop cleanly ($dir/cluster-stop.log)"
  fi

  # The runner's summary has one row per test it knows; ours are those named NNNN_... that are
  # not its local variants.
  rows=$(sed 's/\x1b\[[0-9;]*m//g' "$dir/test.log" | grep -E "^\| +${t}_" | grep -v '_local ' || true)
  # The first failure the runner reported: the line after its "### Test ... failed at" header.
  first_failure=$(sed 's/\x1b\[[0-9;]*m//g' "$dir/test.log" |
                    awk '/^### Test .* failed at /{ getline; print; exit }')
  if [ $rc -eq 124 ]; then
    result=FAIL detail="killed after ${timeout_s} s"
  elif [ -n "$first_failure" ] || echo "$rows" | grep -q ' FAILED '; then
    result=FAIL detail=${first_failure:-$(echo "$rows" | grep ' FAILED ' | head -n 1)}
  elif [ $rc -ne 0 ]; then
    result=FAIL detail="test-runner exited with $rc"
  elif echo "$rows" | grep -q ' PASSED '; then
    result=PASS detail=""
  elif echo "$rows" | grep -q ' SKIPPED '; then
    result=SKIP detail=$(echo "$rows" | grep ' SKIPPED ' | head -n 1 | sed 's/.*s *| *//')
  else
    result=SKIP detail="not run by the runner (scenario or broker version; see test.log)"
  fi
  [ -z "$stop_note" ] || { detail="$detail$stop_note"; result=FAIL; }
  [ "$result" != FAIL ] || failed=1
  [ "$scenario" = default ] || detail="[scenario $scenario] $detail"
  printf '%-6s %-5s %8s  %s\n' "$t" "$result" "$elapsed" "${detail:0:150}"
done
exit $failed
