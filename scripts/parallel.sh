# Sourced by scripts that run many independent jobs (fuzz.sh, tsan.sh).
#
#   parallel_each JOBS FUNCTION ITEM...
#
# Calls `FUNCTION ITEM` for every item, JOBS at a time, each in a background subshell, and
# returns when all have ended. The function records its own outcome (a status file, a log):
# the caller reports them afterwards, in order.
parallel_each() {
  local jobs=$1 fn=$2 running=0 item
  shift 2
  for item in "$@"; do
    "$fn" "$item" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait
}
