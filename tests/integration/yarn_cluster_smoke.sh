#!/usr/bin/env bash
# Smoke test of the local Apache Hadoop YARN that tony's real-YARN tests run
# on (scripts/yarn/cluster.sh): start it, check the node, run containers with
# Hadoop's DistributedShell, read them back with Hadoop's own CLI, stop it and
# check that nothing of it is left.
#
#   tests/integration/yarn_cluster_smoke.sh [--hdfs]
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
[[ "${1:-}" == --hdfs ]] && mode_args=(--hdfs)

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

env_lines=$("$cluster" env --dir "$state") || fail "cluster.sh env exited non-zero"
grep -qx "export HADOOP_CONF_DIR=$conf" <<<"$env_lines" ||
  fail "cluster.sh env does not export HADOOP_CONF_DIR=$conf: $env_lines"
grep -q 'KRB5' <<<"$env_lines" && fail "cluster.sh env of a SIMPLE cluster names Kerberos: $env_lines"
pass "cluster.sh env exports HADOOP_CONF_DIR and nothing of Kerberos"

# -- the node --------------------------------------------------------------------

nodes=$("$yarn" --dir "$state" node -list -all 2>/dev/null) || fail "yarn node -list -all failed"
grep -q '^Total Nodes:1$' <<<"$nodes" || fail "expected 1 node, got: $nodes"
grep -qE "^ *(localhost|${TONY_YARN_HOST:-127.0.0.1}):45454[[:space:]]+RUNNING" <<<"$nodes" ||
  fail "the node on port 45454 is not RUNNING: $nodes"
pass "yarn node -list -all shows 1 RUNNING node"

node_json=$(curl -sf -m 10 http://${TONY_YARN_HOST:-127.0.0.1}:8088/ws/v1/cluster/nodes) ||
  fail "the RM REST API does not answer"
python3 - "$node_json" <<'PY' || fail "the node does not offer the configured resources: $node_json"
import json, sys
node = json.loads(sys.argv[1])["nodes"]["node"][0]
assert node["availMemoryMB"] == 16384, node["availMemoryMB"]
assert node["availableVirtualCores"] == 16, node["availableVirtualCores"]
infos = node["availableResource"]["resourceInformations"]["resourceInformation"]
gpus = [r["value"] for r in infos if r["name"] == "yarn.io/gpu"]
assert gpus == [4], gpus
PY
pass "the node offers 16384 MB, 16 vcores and 4 yarn.io/gpu"

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

code=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "http://${TONY_YARN_HOST:-127.0.0.1}:8088/proxy/$app/")
[[ "$code" == 200 || "$code" == 302 ]] || fail "the RM web proxy answered $code for /proxy/$app/"
pass "the RM web proxy serves /proxy/$app/ ($code)"

if ((${#mode_args[@]})); then
  echo smoke >"$work/file.txt"
  "$yarn" --dir "$state" dfs -put -f "$work/file.txt" /smoke.txt 2>/dev/null ||
    fail "hdfs put failed"
  got=$(curl -sfL -m 10 "http://${TONY_YARN_HOST:-127.0.0.1}:9870/webhdfs/v1/smoke.txt?op=OPEN&user.name=$(id -un)") ||
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
TONY_YARN_CLIENT_LOG=WARN "$yarn" --dir "$state" distributedshell -master_memory 256 \
  -timeout 120000 -shell_script "$orphan" -num_containers 1 >/dev/null 2>&1 &
client=$!
for _ in $(seq 1 60); do
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
