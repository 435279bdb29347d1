#!/usr/bin/env bash
# Smoke test of the local Apache Hadoop YARN that tony's real-YARN tests run
# on (scripts/yarn/cluster.sh): start it, check the node, run containers with
# Hadoop's DistributedShell, read them back with Hadoop's own CLI, stop it and
# check that nothing of it is left.
#
#   tests/integration/yarn_cluster_smoke.sh [--hdfs] [--nodes N]
#
# With --nodes N > 1 the NodeManagers are hosts of their own (the N
# addresses after TONY_YARN_HOST): each must be RUNNING under its own
# address, containers must land on several of them, and stop must find a
# container on any of them.
#
# Exits 0 when every check passes, 1 on a failed check (with a message), 77
# when java or mvn is missing. Uses the fixed ports of cluster.sh, so it
# cannot run beside another local cluster; the cluster is stopped on every
# exit path.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/scripts/yarn/cluster.sh"
yarn="$root/scripts/yarn/yarn.sh"

mode_args=()
hdfs=0
node_count=1
while (($#)); do
  case "$1" in
    --hdfs)
      hdfs=1
      mode_args+=(--hdfs)
      ;;
    --nodes)
      node_count=$2
      mode_args+=(--nodes "$2")
      shift
      ;;
    *)
      echo "yarn_cluster_smoke: unknown argument '$1'" >&2
      exit 2
      ;;
  esac
  shift
done
host=${TONY_YARN_HOST:-127.0.0.1}
# The addresses the nodes must have, and the names they may register as.
if ((node_count == 1)); then
  node_patterns=("(localhost|${host//./\\.})")
  expected_nodes=$host
else
  node_patterns=()
  for ((i = 1; i <= node_count; i++)); do
    node_patterns+=("${host%.*}\\.$((${host##*.} + i))")
    expected_nodes+="${expected_nodes:+ }${host%.*}.$((${host##*.} + i))"
  done
fi

for tool in java mvn curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "yarn_cluster_smoke: skipped, $tool not found (scripts/setup.sh installs it)"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tony-yarn-smoke.XXXXXX")
state="$work/cluster"
# shellcheck source=tests/integration/smoke_lib.sh
source "$here/smoke_lib.sh"
smoke_init

# -- start ---------------------------------------------------------------------

# Containers must see the PATH the cluster was started with (a test puts
# its virtualenv first); a marker directory stands in for it.
path_marker="$work/venv-bin"
mkdir -p "$path_marker"
t0=$(date +%s.%N)
conf=$(PATH="$path_marker:$PATH" "$cluster" start --dir "$state" "${mode_args[@]}") ||
  fail "cluster.sh start exited non-zero"
t1=$(date +%s.%N)
[[ "$conf" == "$state/conf" && -s "$conf/yarn-site.xml" ]] ||
  fail "start printed '$conf', expected the config dir $state/conf"
pass "cluster started in $(python3 -c "print(round($t1 - $t0, 1))")s, conf $conf"

again=$("$cluster" start --dir "$state" "${mode_args[@]}" 2>/dev/null) ||
  fail "a second start of a running cluster exited non-zero"
[[ "$again" == "$conf" ]] || fail "a second start printed '$again', expected '$conf'"
pass "start is idempotent"

"$cluster" status --dir "$state" >/dev/null || fail "status says the cluster is not up"
pass "status reports the cluster up"

# Hadoop's native library: every NodeManager maps it with TONY_YARN_NATIVE=1
# (CMake sets it for the --hdfs --nodes 2 run), none without.
nm_pids=$(pgrep -f -- "$state/run/nodemanager" || true)
[[ -n "$nm_pids" ]] || fail "no NodeManager process of $state found"
for pid in $nm_pids; do
  if [[ ${TONY_YARN_NATIVE:-0} == 1 ]]; then
    grep -q 'libhadoop[.]so' "/proc/$pid/maps" ||
      fail "TONY_YARN_NATIVE=1, but NodeManager $pid has not loaded libhadoop.so"
  else
    grep -q 'libhadoop[.]so' "/proc/$pid/maps" &&
      fail "NodeManager $pid loaded libhadoop.so without TONY_YARN_NATIVE=1"
  fi
done
pass "the NodeManagers load Hadoop's native library exactly when TONY_YARN_NATIVE=1 (${TONY_YARN_NATIVE:-0})"

env_lines=$("$cluster" env --dir "$state") || fail "cluster.sh env exited non-zero"
grep -qx "export HADOOP_CONF_DIR=$conf" <<<"$env_lines" ||
  fail "cluster.sh env does not export HADOOP_CONF_DIR=$conf: $env_lines"
grep -q 'KRB5' <<<"$env_lines" && fail "cluster.sh env of a SIMPLE cluster names Kerberos: $env_lines"
grep -qxF "export TONY_YARN_NODES=${expected_nodes// /\\ }" <<<"$env_lines" ||
  fail "cluster.sh env does not export TONY_YARN_NODES='$expected_nodes': $env_lines"
pass "cluster.sh env exports HADOOP_CONF_DIR, the nodes ($expected_nodes) and nothing of Kerberos"

# -- the node --------------------------------------------------------------------

nodes=$("$yarn" --dir "$state" node -list -all 2>/dev/null) || fail "yarn node -list -all failed"
grep -q "^Total Nodes:$node_count\$" <<<"$nodes" || fail "expected $node_count node(s), got: $nodes"
for pattern in "${node_patterns[@]}"; do
  grep -qE "^ *$pattern:45454[[:space:]]+RUNNING" <<<"$nodes" ||
    fail "no node $pattern:45454 RUNNING: $nodes"
done
pass "yarn node -list -all shows $node_count RUNNING node(s): $expected_nodes"

node_json=$(curl -sf -m 10 "http://$host:8088/ws/v1/cluster/nodes") ||
  fail "the RM REST API does not answer"
python3 - "$node_json" "$node_count" <<'PY' || fail "a node does not offer the configured resources: $node_json"
import json, sys
nodes = json.loads(sys.argv[1])["nodes"]["node"]
assert len(nodes) == int(sys.argv[2]), len(nodes)
for node in nodes:
    assert node["availMemoryMB"] == 16384, node["availMemoryMB"]
    assert node["availableVirtualCores"] == 16, node["availableVirtualCores"]
    infos = node["availableResource"]["resourceInformations"]["resourceInformation"]
    gpus = [r["value"] for r in infos if r["name"] == "yarn.io/gpu"]
    assert gpus == [4], gpus
PY
pass "each node offers 16384 MB, 16 vcores and 4 yarn.io/gpu"

# -- containers --------------------------------------------------------------

app=$(run_dshell -shell_command "exit 0" -num_containers 1 -container_memory 128) ||
  fail "DistributedShell 'exit 0' failed"
[[ "$app" == application_* ]] || fail "no application id in the DistributedShell output"
state_=$(app_field "$app" State)
final=$(app_field "$app" Final-State)
[[ "$state_" == FINISHED && "$final" == SUCCEEDED ]] ||
  fail "$app ended $state_/$final, expected FINISHED/SUCCEEDED"
pass "DistributedShell 'exit 0' ($app) is FINISHED/SUCCEEDED"

listed=$("$yarn" --dir "$state" application -list -appStates ALL 2>/dev/null)
grep -q "^${app}[[:space:]]" <<<"$listed" || fail "application -list -appStates ALL lacks $app"
pass "application -list -appStates ALL lists $app"

script="$work/container.sh"
cat >"$script" <<'SH'
echo "smoke-marker container=$CONTAINER_ID"
echo "smoke-path=$PATH"
sleep 2
SH
gpu_app=$(run_dshell -shell_script "$script" -num_containers 1 \
  -container_resources memory-mb=128,vcores=1,yarn.io/gpu=1) ||
  fail "DistributedShell with yarn.io/gpu=1 failed"
final=$(app_field "$gpu_app" Final-State)
[[ "$final" == SUCCEEDED ]] || fail "$gpu_app (yarn.io/gpu=1) ended $final"
alloc=$(app_field "$gpu_app" "Aggregate Resource Allocation")
gpu_seconds=$(grep -oE '[0-9]+ yarn.io/gpu-seconds' <<<"$alloc" | awk '{print $1}')
((${gpu_seconds:-0} >= 1)) || fail "$gpu_app was not charged any yarn.io/gpu: '$alloc'"
pass "a container asking for yarn.io/gpu=1 ran and was charged $gpu_seconds gpu-seconds"

logs=$("$yarn" --dir "$state" logs -applicationId "$gpu_app" -log_files stdout 2>&1) ||
  fail "yarn logs -applicationId $gpu_app failed: $logs"
grep -q 'smoke-marker container=container_' <<<"$logs" ||
  fail "yarn logs lacks the container's stdout: $logs"
pass "yarn logs -applicationId returns the container's stdout"

grep -q "smoke-path=$path_marker:" <<<"$logs" ||
  fail "the container's PATH does not start with the cluster's PATH: $(grep smoke-path <<<"$logs")"
pass "containers inherit the PATH the cluster was started with"

if ((node_count > 1)); then
  # Three containers of half a node each: one node holds two at most (and
  # only one beside the AM), so they spread.
  # shellcheck disable=SC2016 # expanded in the container
  spread_app=$(run_dshell -shell_command 'echo "smoke-node=$NM_HOST"' -num_containers 3 \
    -container_memory 8192) || fail "DistributedShell over $node_count nodes failed"
  # The logs are read once the NodeManagers uploaded them (aggregation
  # follows the application's end by seconds: read at once, they were empty
  # once in CI).
  for _ in $(seq 1 12); do
    spread=$("$yarn" --dir "$state" logs -applicationId "$spread_app" -log_files stdout 2>/dev/null |
      grep -o 'smoke-node=[0-9.]*' | sort -u | tr '\n' ' ')
    [[ $(wc -w <<<"$spread") -ge 2 ]] && break
    sleep 5
  done
  [[ $(wc -w <<<"$spread") -ge 2 ]] ||
    fail "the containers of $spread_app ran on '$spread', expected several of $expected_nodes"
  pass "containers ran on several nodes: $spread"
fi

code=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "http://$host:8088/proxy/$app/")
[[ "$code" == 200 || "$code" == 302 ]] || fail "the RM web proxy answered $code for /proxy/$app/"
pass "the RM web proxy serves /proxy/$app/ ($code)"

if ((hdfs)); then
  echo smoke >"$work/file.txt"
  "$yarn" --dir "$state" dfs -put -f "$work/file.txt" /smoke.txt 2>/dev/null ||
    fail "hdfs put failed"
  # The NameNode and the DataNode set up their REST services (Jersey) on
  # the first request: that took over 10 s on two loaded cores.
  got=$(curl -sfL -m 60 "http://$host:9870/webhdfs/v1/smoke.txt?op=OPEN&user.name=$(id -un)") ||
    fail "WebHDFS OPEN failed"
  [[ "$got" == smoke ]] || fail "WebHDFS returned '$got', expected 'smoke'"
  pass "HDFS stores a file and WebHDFS reads it back"
fi

# -- stop ----------------------------------------------------------------------

# A container that outlives its process group and leaves the working
# directory, as a crashed job's orphan would; stop must find it anyway.
orphan="$work/orphan.sh"
cat >"$orphan" <<'SH'
cd /
setsid sleep 4321 </dev/null >/dev/null 2>&1 &
sleep 4322
SH
TONY_YARN_CLIENT_LOG=WARN "$yarn" --dir "$state" distributedshell -master_memory 512 \
  -timeout 120000 -shell_script "$orphan" -num_containers 1 >/dev/null 2>&1 &
client=$!
# DistributedShell's AM, then its container: 30 s was once too few on two
# loaded cores.
for _ in $(seq 1 180); do
  pgrep -f '^sleep 4321$' >/dev/null && break
  sleep 0.5
done
pgrep -f '^sleep 4321$' >/dev/null || fail "the long-running container did not start"

"$cluster" stop --dir "$state" >/dev/null 2>&1 || fail "cluster.sh stop exited non-zero"
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
left=$(pgrep -fa -- "-Dtony[.]yarn[.]dir=${state//./[.]}( |$)" || true)
[[ -z "$left" ]] || fail "daemons survive stop: $left"
left=$(pgrep -fa '^sleep 432[12]$' || true)
[[ -z "$left" ]] || fail "container processes survive stop: $left"
[[ ! -e "$state" ]] || fail "stop left the state directory $state"
pass "stop leaves no daemon, no container process and no state directory"

echo "smoke: $passed passed, $failed failed"
