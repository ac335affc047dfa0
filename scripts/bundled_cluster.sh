#!/usr/bin/env bash
# The bundled broker run in the background and shared by several commands: CTest's cluster3
# label (tests/cluster3/CMakeLists.txt) starts a 3-broker cluster with it before the label's
# tests and stops it after them.
#
#   scripts/bundled_cluster.sh start DIR -- BROKER ARGS...  # BROKER ARGS in the background;
#                                     # waits until it prints bootstrap.servers=...
#   scripts/bundled_cluster.sh exec DIR -- COMMAND...  # COMMAND with EXACTLY_TEST_BOOTSTRAP set
#   scripts/bundled_cluster.sh stop DIR                # SIGTERM; fails unless the broker then
#                                     # exits 0 (it crashed, hung, or failed to stop cleanly)
#
# DIR holds bootstrap (host:port,...), admin (the --admin-port address, when given: fault
# commands for a person looking into a failure), pid, the broker's stdout and stderr, and rc
# (its exit status, written once it exits).
set -euo pipefail

usage() { sed -n '6,10p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
command=$1
dir=$2
shift 2

running() { [ -s "$dir/pid" ] && [ ! -e "$dir/rc" ]; }

stderr_tail() {
  echo "--- last lines of the broker's stderr ($dir/stderr):" >&2
  tail -n 40 "$dir/stderr" >&2 || true
}

# Waits up to $1 seconds for the broker to exit; true once its status is in $dir/rc.
wait_exit() {
  local deadline=$((SECONDS + $1))
  while [ ! -e "$dir/rc" ]; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

case "$command" in
  start)
    [ "${1:-}" = "--" ] || usage
    shift
    [ $# -ge 1 ] || usage
    if running; then  # left by an earlier run that was interrupted
      kill -TERM "$(cat "$dir/pid")" 2>/dev/null || true
      wait_exit 30 || kill -KILL "$(cat "$dir/pid")" 2>/dev/null || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    # A wrapper in its own session outlives this script (CTest's start test) and records the
    # broker's exit status, which stop checks.
    setsid bash -c '
      dir=$1; shift
      "$@" >"$dir/stdout" 2>"$dir/stderr" </dev/null &
      echo $! >"$dir/pid"
      wait $!
      echo $? >"$dir/rc.tmp"
      mv "$dir/rc.tmp" "$dir/rc"' bundled-cluster "$dir" "$@" </dev/null >/dev/null 2>&1 &
    deadline=$((SECONDS + 60))
    until grep -q '^bootstrap\.servers=' "$dir/stdout" 2>/dev/null; do
      if [ -e "$dir/rc" ]; then
        echo "bundled_cluster: the broker exited with $(cat "$dir/rc") before serving" >&2
        stderr_tail
        exit 1
      fi
      if [ $SECONDS -ge $deadline ]; then
        echo "bundled_cluster: no bootstrap.servers line from the broker in 60 s" >&2
        [ -s "$dir/pid" ] && kill -KILL "$(cat "$dir/pid")" 2>/dev/null
        stderr_tail
        exit 1
      fi
      sleep 0.1
    done
    # The broker writes both lines with one flush.
    sed -n 's/^bootstrap\.servers=//p' "$dir/stdout" >"$dir/bootstrap"
    sed -n 's/^admin=//p' "$dir/stdout" >"$dir/admin"
    echo "bootstrap.servers=$(cat "$dir/bootstrap")"
    [ -s "$dir/admin" ] && echo "admin=$(cat "$dir/admin")"
    echo "cluster.dir=$dir"
    ;;
  exec)
    [ "${1:-}" = "--" ] || usage
    shift
    [ $# -ge 1 ] || usage
    if ! running || [ ! -s "$dir/bootstrap" ]; then
      echo "bundled_cluster: no running cluster in $dir (did its start test fail?)" >&2
      exit 1
    fi
    EXACTLY_TEST_BOOTSTRAP=$(cat "$dir/bootstrap")
    export EXACTLY_TEST_BOOTSTRAP
    exec "$@"
    ;;
  stop)
    if [ ! -s "$dir/pid" ]; then
      echo "bundled_cluster: no cluster in $dir (no pid file)" >&2
      exit 1
    fi
    if [ -e "$dir/rc" ]; then
      echo "bundled_cluster: the broker had already exited, with status $(cat "$dir/rc")," \
           "before it was asked to stop" >&2
      stderr_tail
      exit 1
    fi
    kill -TERM "$(cat "$dir/pid")"
    if ! wait_exit 60; then
      echo "bundled_cluster: the broker did not stop within 60 s of SIGTERM; killed" >&2
      kill -KILL "$(cat "$dir/pid")" 2>/dev/null || true
      stderr_tail
      exit 1
    fi
    rc=$(cat "$dir/rc")
    if [ "$rc" != 0 ]; then
      echo "bundled_cluster: the broker exited with status $rc on SIGTERM" >&2
      stderr_tail
      exit 1
    fi
    echo "bundled_cluster: stopped cleanly"
    ;;
  *) usage ;;
esac
