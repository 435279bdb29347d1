#!/usr/bin/env bash
# Bad input to `cluster.sh start` about the cluster's shape: each case must
# end with exit 1, a message that says what and what to do, and nothing
# left running.
#
#   tests/integration/yarn_cluster_bad_input.sh
#
# Cases: --nodes that is not a positive number, or more nodes than fit after
# the cluster's address; --second-namenode without --hdfs or with --hdfs-ha;
# a JournalNode's port taken with --hdfs-ha; --hadoop-version
# that is no release number, or a release Maven Central does not have; a
# node's port taken (refused before anything starts); a NodeManager wrapper
# that is not a program (refused before anything starts); TONY_YARN_NM_CLOCK
# naming a node the cluster does not have, an offset without its sign, a
# node twice, or no libfaketime (refused before anything starts); a second
# start of
# a different shape on a running cluster (refused, the cluster untouched);
# a killed NodeManager whose pid file names a thread of the ResourceManager
# (taken for dead: nm-start starts it again); a NodeManager between two
# execs of its wrapper, whose command line reads empty (not taken for dead).
# Exits 0 when all hold, 1 otherwise, 77 when java or mvn is missing. Uses
# $TONY_YARN_HOST.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/scripts/yarn/cluster.sh"
yarn="$root/scripts/yarn/yarn.sh"
host=${TONY_YARN_HOST:-127.0.0.1}
node2="${host%.*}.$((${host##*.} + 2))"

for tool in java mvn python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "yarn_cluster_bad_input: skipped, $tool not found (scripts/setup.sh installs it)"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tony-yarn-bad.XXXXXX")
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

# Runs `cluster.sh start ARGS`, which must fail with exit 1 and a message
# matching $1; leaves its output in $out.
start_must_fail() {
  local want=$1 rc
  shift
  out=$("$cluster" start --dir "$state" "$@" 2>&1)
  rc=$?
  ((rc == 1)) || fail "start $* exited $rc, expected 1; output: $out"
  grep -qE -- "$want" <<<"$out" || fail "start $*: no message matching '$want' in: $out"
}

nothing_left() {
  local left
  left=$(pgrep -fa -- "-Dtony[.]yarn[.]dir=${state//./[.]}( |$)" || true)
  [[ -z "$left" ]] || fail "$1: processes left: $left"
}

start_must_fail "--nodes must be a whole number of NodeManagers \(1 or more\), not '0'" --nodes 0
start_must_fail "--nodes must be a whole number of NodeManagers \(1 or more\), not 'two'" --nodes two
start_must_fail "--nodes 300 does not fit after $host" --nodes 300
nothing_left "--nodes"
pass "--nodes 0, two and 300 are refused with what to pass"

start_must_fail "--second-namenode goes with --hdfs" --second-namenode
nothing_left "--second-namenode"
pass "--second-namenode without --hdfs is refused"

start_must_fail "--second-namenode does not go with --hdfs-ha" --hdfs-ha --second-namenode
nothing_left "--hdfs-ha --second-namenode"
pass "--hdfs-ha with --second-namenode is refused"

# A JournalNode's port taken (--hdfs-ha): refused before anything starts.
python3 - "$host" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 8495))
s.listen(1)
time.sleep(300)
PY
holder=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/$host/8495") 2>/dev/null && break
  sleep 0.1
done
start_must_fail "port $host:8495 is in use" --hdfs-ha
nothing_left "a JournalNode's port taken"
release_port
pass "--hdfs-ha: a JournalNode's port in use is named and nothing starts"

start_must_fail "must be a release number like 3.4.2 or 3.3.6, not '3.4'" --hadoop-version 3.4
start_must_fail "Maven could not resolve the jars of Hadoop 3.3.99" --hadoop-version 3.3.99
nothing_left "--hadoop-version"
pass "--hadoop-version 3.4 and an unpublished 3.3.99 are refused"

# A node's NodeManager port taken: refused before anything starts.
python3 - "$node2" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 45454))
s.listen(1)
time.sleep(300)
PY
holder=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/$node2/45454") 2>/dev/null && break
  sleep 0.1
done
start_must_fail "port $node2:45454 is in use" --nodes 3
nothing_left "a node's port taken"
release_port
pass "a node's port in use is named and nothing starts"

TONY_YARN_NM_WRAPPER="$work/no-such-wrapper" \
  start_must_fail "TONY_YARN_NM_WRAPPER '$work/no-such-wrapper' is not an executable program" --nodes 2
nothing_left "a missing NodeManager wrapper"
pass "a NodeManager wrapper that is not a program is refused before anything starts"

TONY_YARN_NM_CLOCK=3:+1h \
  start_must_fail "TONY_YARN_NM_CLOCK names node 3, but the cluster has 2 \(--nodes\)" --nodes 2
TONY_YARN_NM_CLOCK=2:1h \
  start_must_fail "TONY_YARN_NM_CLOCK must be NODE:OFFSET\[,NODE:OFFSET...\], e.g. 3:\+1h .*not '2:1h'" --nodes 2
TONY_YARN_NM_CLOCK=2:+1h,2:-1h \
  start_must_fail "TONY_YARN_NM_CLOCK names node 2 twice" --nodes 2
TONY_YARN_NM_CLOCK=1:+1h TONY_FAKETIME_LIB="$work/no-libfaketime.so" \
  start_must_fail "TONY_FAKETIME_LIB '$work/no-libfaketime.so' is not a readable file" --nodes 2
nothing_left "a node clock"
pass "a node clock on a node that is not there, without a sign, twice or without libfaketime is refused"

"$cluster" start --dir "$state" --nodes 2 >/dev/null 2>&1 || fail "a start with --nodes 2 failed"
start_must_fail "a different or partial cluster runs in $state" --nodes 3
start_must_fail "a different or partial cluster runs in $state" --nodes 2 --hadoop-version 3.3.6
nodes=$("$yarn" --dir "$state" node -list 2>/dev/null)
grep -q '^Total Nodes:2$' <<<"$nodes" || fail "the running cluster changed: $nodes"
pass "a start of another shape on a running cluster is refused and the cluster keeps running"

# A killed daemon's pid given out again as a thread of another of the
# cluster's JVMs (whose /proc/<tid> shows that JVM's command line, marker
# included) is not taken for the daemon: nm-start starts it again.
nm_pid=$(<"$state/pids/nodemanager-$node2.pid")
rm_pid=$(<"$state/pids/resourcemanager.pid")
kill -KILL "$nm_pid"
for _ in $(seq 50); do
  [[ -n "$(tr -d '\0' 2>/dev/null <"/proc/$nm_pid/cmdline")" ]] || break
  sleep 0.1
done
rm_thread=$(ls "/proc/$rm_pid/task" | grep -vx "$rm_pid" | head -n 1)
echo "$rm_thread" >"$state/pids/nodemanager-$node2.pid"
out=$("$cluster" nm-start "$node2" --dir "$state" 2>&1) ||
  fail "nm-start took a thread of the ResourceManager ($rm_thread) for the NodeManager: $out"
new_pid=$(<"$state/pids/nodemanager-$node2.pid")
[[ "$new_pid" != "$rm_thread" ]] && "$cluster" status --dir "$state" >/dev/null 2>&1 ||
  fail "no NodeManager of $node2 runs after nm-start (pid file: $new_pid): $out"
pass "a daemon whose pid is now another JVM's thread is taken for dead and starts again"

# A daemon started through a wrapper execs several programs before the JVM
# (the portable test's NodeManager: sh, unshare, env, bash, java), and its
# /proc/<pid>/cmdline reads empty while the kernel sets up each one. One
# that execs itself over and over, with the NodeManager's arguments, stands
# in for it: nm-start must say every time that the NodeManager runs.
real_nm=$(<"$state/pids/nodemanager-$node2.pid")
printf '#!/bin/bash\n[[ -e "$1" ]] || exit 0\nexec "$0" "$@"\n' >"$work/reexec.sh"
chmod +x "$work/reexec.sh"
touch "$work/reexec.on"
"$work/reexec.sh" "$work/reexec.on" "-Dtony.yarn.dir=$state" "-Dproc_nodemanager-$node2" &
reexec=$!
echo "$reexec" >"$state/pids/nodemanager-$node2.pid"
dead=0
for _ in $(seq 50); do
  out=$("$cluster" nm-start "$node2" --dir "$state" 2>&1) && dead=$((dead + 1))
  [[ "$out" == *"the NodeManager of $node2 already runs"* ]] || dead=$((dead + 1))
done
rm -f "$work/reexec.on"
wait "$reexec"
echo "$real_nm" >"$state/pids/nodemanager-$node2.pid"
((dead == 0)) ||
  fail "a NodeManager between two execs was taken for dead by $dead of 50 nm-starts: $out"
pass "a daemon between two execs of its wrapper is not taken for dead"

"$cluster" stop --dir "$state" >/dev/null 2>&1 || fail "stop failed"
nothing_left "stop"
echo "bad input: $passed passed, $failed failed"
