# shellcheck shell=bash disable=SC2154 # cluster, yarn, work, state: the caller's
# Shared by the cluster smoke tests (yarn_cluster_smoke.sh,
# secure_cluster_smoke.sh); sourced, never run. The caller sets
#   cluster, yarn   paths of scripts/yarn/cluster.sh and yarn.sh
#   work            its temporary directory, state  the cluster's state dir
# and calls smoke_init, which stops the cluster and removes $work on every
# exit path.

passed=0
failed=0

smoke_cleanup() {
  "$cluster" stop --dir "$state" >/dev/null 2>&1 || true
  rm -rf "$work"
}

smoke_init() {
  trap smoke_cleanup EXIT
  # Turn a test runner's SIGTERM or a ^C into an exit, which runs cleanup.
  trap 'exit 143' TERM
  trap 'exit 130' INT
}

pass() {
  passed=$((passed + 1))
  echo "ok: $* [${SECONDS}s]"
}

# A failed check ends the test: later checks depend on earlier ones. The
# daemon logs are printed before the EXIT trap removes them.
fail() {
  failed=$((failed + 1))
  echo "FAILED: $*" >&2
  local log
  for log in "$state"/logs/*.log; do
    [[ -s "$log" ]] || continue
    echo "---- $log (last lines) ----" >&2
    grep -v -e '^\s*at ' -e 'STARTUP_MSG:   classpath' "$log" | tail -n 15 | cut -c1-300 >&2
  done
  echo "smoke: $passed passed, $failed failed"
  exit 1
}

# Runs DistributedShell and prints the application id it submitted.
run_dshell() {
  local out="$work/dshell.$RANDOM.log"
  if ! TONY_YARN_CLIENT_LOG=INFO "$yarn" --dir "$state" distributedshell \
    -master_memory 512 -timeout 120000 "$@" >"$out" 2>&1; then
    tail -n 20 "$out" >&2
    return 1
  fi
  grep -o 'Submitted application application_[0-9_]*' "$out" | head -n1 | awk '{print $3}'
}

# Prints one field ("State", "Final-State", ...) of `application -status`.
app_field() {
  "$yarn" --dir "$state" application -status "$1" 2>/dev/null |
    awk -F' : ' -v k="$2" '{gsub(/^[ \t]+/, "", $1)} $1 == k {print $2; exit}'
}

# Seconds since the epoch with a fraction, for timings in the output.
now() {
  date +%s.%N
}

elapsed() {
  python3 -c "print(round($2 - $1, 1))"
}
