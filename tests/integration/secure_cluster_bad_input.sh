#!/usr/bin/env bash
# Bad input to `cluster.sh start --secure`: each case must end with exit 1,
# a message that says what and what to do, and nothing left running. No
# daemon JVM starts in any case, so this takes seconds.
#
#   tests/integration/secure_cluster_bad_input.sh
#
# Cases: the Kerberos programs missing; the KDC's port taken (refused
# before anything starts); a KDC that dies at start (its log is shown); a
# token knob that is not a number; `env` with no cluster. Exits 0 when all
# hold, 1 otherwise, 77 when java or mvn is missing. Uses $TONY_YARN_HOST.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/scripts/yarn/cluster.sh"
host=${TONY_YARN_HOST:-127.0.0.1}

for tool in java mvn python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "secure_cluster_bad_input: skipped, $tool not found (scripts/setup.sh installs it)"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tony-secure-bad.XXXXXX")
state="$work/cluster"
# shellcheck source=tests/integration/smoke_lib.sh
source "$here/smoke_lib.sh"
smoke_init
holder=""
release_port() {
  [[ -n "$holder" ]] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
  holder=""
}
trap 'release_port; smoke_cleanup' EXIT

# Runs `cluster.sh start --secure`, which must fail; leaves its output in
# $out and fails the test if it exits other than 1.
start_must_fail() {
  local rc
  out=$("$@" "$cluster" start --secure --dir "$state" 2>&1)
  rc=$?
  ((rc == 1)) || fail "start --secure exited $rc, expected 1; output: $out"
}

# Nothing of the cluster may run after a failed start.
nothing_left() {
  local left
  left=$(pgrep -fa -- "-Dtony[.]yarn[.]dir=${state//./[.]}( |$)|${state//./[.]}/pids/krb5kdc[.]pid" || true)
  [[ -z "$left" ]] || fail "$1: processes left: $left"
}

# Holds a port of $host until release_port; $1 is tcp or udp.
hold_port() {
  python3 - "$1" "$host" "$2" <<'PY' &
import socket, sys, time
kind = socket.SOCK_STREAM if sys.argv[1] == "tcp" else socket.SOCK_DGRAM
s = socket.socket(socket.AF_INET, kind)
if kind == socket.SOCK_STREAM:  # past the TIME_WAITs of an earlier KDC
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[2], int(sys.argv[3])))
if kind == socket.SOCK_STREAM:
    s.listen(1)
print("bound", flush=True)
time.sleep(300)
PY
  holder=$!
  local _
  for _ in $(seq 1 100); do
    if [[ "$1" == tcp ]]; then
      (exec 3<>"/dev/tcp/$host/$2") 2>/dev/null && return 0
    else
      grep -q "$(printf ':%04X ' "$2")" /proc/net/udp 2>/dev/null && return 0
    fi
    sleep 0.1
  done
  fail "could not hold $1 port $host:$2"
}

# -- the programs missing --------------------------------------------------------

no_sbin_path=$(tr ':' '\n' <<<"$PATH" | grep -v -E '^/(usr/)?(local/)?sbin/?$' | paste -sd: -)
start_must_fail env PATH="$no_sbin_path" TONY_KRB5_SBIN="$work/no-such-dir"
grep -q 'needs MIT Kerberos and OpenSSL; not found: krb5kdc kdb5_util kadmin.local' <<<"$out" ||
  fail "missing krb5kdc: unexpected message: $out"
grep -q 'apt-get install krb5-kdc krb5-admin-server krb5-user' <<<"$out" ||
  fail "missing krb5kdc: the message does not say what to install: $out"
nothing_left "missing programs"
pass "no Kerberos programs: exit 1, names them and the packages to install"

# -- the KDC's port taken -----------------------------------------------------------

hold_port tcp 10088
start_must_fail
grep -q "port $host:10088 is in use" <<<"$out" || fail "KDC port taken: unexpected message: $out"
[[ ! -e "$state/pids/krb5kdc.pid" ]] || fail "KDC port taken: a KDC was started anyway"
release_port
nothing_left "KDC port taken"
pass "the KDC's TCP port taken: exit 1 before anything starts"

# -- a KDC that dies --------------------------------------------------------------------

# The UDP port escapes the TCP check; krb5kdc cannot bind it and exits.
hold_port udp 10088
start_must_fail
grep -q 'the KDC (krb5kdc) exited during start' <<<"$out" ||
  fail "dying KDC: unexpected message: $out"
grep -q -- "---- last lines of $state/logs/krb5kdc.log ----" <<<"$out" ||
  fail "dying KDC: its log is not shown: $out"
grep -q -i 'address already in use' <<<"$out" || fail "dying KDC: the log lacks the cause: $out"
release_port
nothing_left "dying KDC"
pass "a KDC that dies at start: exit 1 with its log (Address already in use)"

# -- knobs and commands ---------------------------------------------------------------------

start_must_fail env TONY_YARN_TOKEN_MAX_LIFETIME=1h
grep -q 'TONY_YARN_TOKEN_MAX_LIFETIME must be a whole number' <<<"$out" ||
  fail "bad token knob: unexpected message: $out"
pass "TONY_YARN_TOKEN_MAX_LIFETIME=1h: exit 1, says it must be a whole number"

"$cluster" stop --dir "$state" >/dev/null 2>&1
out=$("$cluster" env --dir "$state" 2>&1) && fail "cluster.sh env without a cluster succeeded: $out"
grep -q "no cluster runs in $state" <<<"$out" || fail "env without a cluster: unexpected message: $out"
pass "cluster.sh env without a cluster: exit 1, says to start one"

echo "smoke: $passed passed, $failed failed"
