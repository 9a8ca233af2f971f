# Shared by the bench scripts that start processes: source it after `pids=()`.

# Stops every process in the caller's `pids` array: TERM, up to 10 s each, then KILL; empties it.
stop_pids() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  pids=()
}

# wait_for WHAT SECONDS CMD...: waits (bounded, once a second) until CMD succeeds.
wait_for() {
  local what="$1" limit="$2"; shift 2
  for _ in $(seq 1 "$limit"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "$(basename "$0"): timed out waiting for $what" >&2
  return 1
}

# fabric_is_up CLI NAME: true when `ibfabric sim list` shows NAME up (to be reused); a stale
# entry of that name (its processes died) is cleaned up first, so the caller brings it up anew.
fabric_is_up() {
  local cli="$1" name="$2"
  "$cli" sim list 2>/dev/null | awk -v n="$name" '$1 == n && $2 == "up" { f = 1 } END { exit !f }' &&
    return 0
  "$cli" sim down --name "$name" >/dev/null 2>&1 || true
  return 1
}
