# Sourced by scripts that run many independent jobs (fuzz.sh, tsan.sh).
#
#   parallel_each JOBS STATUS_DIR FUNCTION ITEM...
#   parallel_status STATUS_DIR ITEM
#
# parallel_each calls `FUNCTION ITEM` for every item, JOBS at a time, each in a background
# subshell, writes each call's exit status to STATUS_DIR/<basename of ITEM>.status (those of an
# earlier run removed first) and returns when all have ended. parallel_status prints an item's
# status ("no status" if its call never ended), so that the caller reports them in order.
parallel_each() {
  local jobs=$1 dir=$2 fn=$3 running=0 item
  shift 3
  mkdir -p "$dir"
  for item in "$@"; do rm -f "$dir/$(basename "$item").status"; done
  for item in "$@"; do
    (
      status=0
      "$fn" "$item" || status=$?
      echo "$status" >"$dir/$(basename "$item").status"
    ) &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait
}

parallel_status() {
  cat "$1/$(basename "$2").status" 2>/dev/null || echo "no status"
}
