#!/usr/bin/env bash
# The HA HDFS of scripts/yarn/cluster.sh --hdfs-ha, checked with Hadoop's
# own clients: the client configuration is a production one, the standby
# answers WebHDFS with a StandbyException, a file written to hdfs://tonyns
# is read back after the active NameNode is killed with SIGKILL, and a
# DistributedShell job whose NodeManager localizes from hdfs://tonyns
# while the active NameNode is killed succeeds and its logs (aggregated to
# hdfs://tonyns/tmp/logs, SIMPLE only) are read back. The killed NameNode
# is started again and must come back as standby.
#
#   tests/integration/hdfs_ha/hdfs_ha_cluster.sh            # on a running
#       cluster: TONY_YARN_DIR (the hdfs_ha fixture), left running
#   tests/integration/hdfs_ha/hdfs_ha_cluster.sh --own [--secure]
#       starts a cluster of its own (on TONY_YARN_HOST) and stops it
#
# Exits 0 when every check passes, 1 on a failed check, 77 when java or
# mvn is missing.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
cluster="$root/scripts/yarn/cluster.sh"
yarn="$root/scripts/yarn/yarn.sh"

own=0
mode_args=(--hdfs-ha)
while (($#)); do
  case "$1" in
    --own) own=1 ;;
    --secure) mode_args+=(--secure) ;;
    *)
      echo "hdfs_ha_cluster: unknown argument '$1'" >&2
      exit 2
      ;;
  esac
  shift
done

for tool in java mvn curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "hdfs_ha_cluster: skipped, $tool not found (scripts/setup.sh installs it)"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tony-hdfsha.XXXXXX")
if ((own)); then
  state="$work/cluster"
else
  state=${TONY_YARN_DIR:?TONY_YARN_DIR must name the running --hdfs-ha cluster}
fi
# shellcheck source=tests/integration/smoke_lib.sh
source "$root/tests/integration/smoke_lib.sh"
if ((own)); then
  smoke_init
else
  trap 'rm -rf "$work"' EXIT
fi

if ((own)); then
  t0=$SECONDS
  "$cluster" start --dir "$state" "${mode_args[@]}" >/dev/null || fail "cluster.sh start ${mode_args[*]} failed"
  pass "cluster.sh start ${mode_args[*]} took $((SECONDS - t0))s"
fi

env_lines=$("$cluster" env --dir "$state") || fail "cluster.sh env exited non-zero"
eval "$env_lines"
[[ "${TONY_HDFS_NAMESERVICE:-}" == tonyns && -n "${TONY_HDFS_NN1_WEB:-}" && -n "${TONY_HDFS_NN2_WEB:-}" ]] ||
  fail "cluster.sh env lacks the nameservice and its NameNodes: $env_lines"
secure=0
[[ -n "${KRB5CCNAME:-}" ]] && secure=1
curl_() {
  if ((secure)); then
    curl --negotiate -u : --cacert "$TONY_TEST_CA_FILE" "$@"
  else
    curl "$@"
  fi
}

# -- the client configuration -------------------------------------------------

python3 - "$HADOOP_CONF_DIR" "$TONY_HDFS_NN1" "$TONY_HDFS_NN2" "$secure" <<'PY' || fail "the client configuration is not a production HA one"
import sys, xml.etree.ElementTree as ET
conf, nn1, nn2, secure = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
props = {}
for f in ("core-site.xml", "hdfs-site.xml"):
    for p in ET.parse(f"{conf}/{f}").getroot().iter("property"):
        props[p.findtext("name")] = p.findtext("value")
want = {
    "fs.defaultFS": "hdfs://tonyns",
    "dfs.nameservices": "tonyns",
    "dfs.ha.namenodes.tonyns": "nn1,nn2",
    "dfs.namenode.rpc-address.tonyns.nn1": nn1,
    "dfs.namenode.rpc-address.tonyns.nn2": nn2,
    "dfs.client.failover.proxy.provider.tonyns":
        "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
}
for k, v in want.items():
    assert props.get(k) == v, f"{k} = {props.get(k)!r}, expected {v!r}"
web = "https-address" if secure else "http-address"
for nn in ("nn1", "nn2"):
    assert props.get(f"dfs.namenode.{web}.tonyns.{nn}"), f"no dfs.namenode.{web}.tonyns.{nn}"
# No single-NameNode keys: a client must go through the nameservice.
for k in ("dfs.namenode.rpc-address", "dfs.namenode.http-address", "dfs.namenode.https-address"):
    assert k not in props, f"{k} is set ({props[k]})"
assert "dfs.ha.namenode.id" not in props, "the client configuration names a NameNode id"
PY
pass "the client configuration names hdfs://tonyns, nn1 and nn2 and the failover proxy provider"

active=$("$cluster" nn-wait-active --dir "$state") || fail "no NameNode is active"
[[ "$active" == nn1 ]] && standby=nn2 || standby=nn1
[[ "$active" == nn1 ]] && standby_web=$TONY_HDFS_NN2_WEB || standby_web=$TONY_HDFS_NN1_WEB
answer=$(curl_ -s -m 10 "$standby_web/webhdfs/v1/?op=GETFILESTATUS")
grep -q '"exception":"StandbyException"' <<<"$answer" ||
  fail "the standby $standby answered WebHDFS with '$answer', expected a StandbyException"
pass "$active is active; the standby $standby answers WebHDFS with a StandbyException"

# -- files through the nameservice -------------------------------------------------

user=$(id -un)
dir="/user/$user/hdfsha-$$"
echo "hdfs-ha-marker $$" >"$work/f.txt"
"$yarn" --dir "$state" dfs -mkdir -p "hdfs://tonyns$dir" >/dev/null 2>&1 &&
  "$yarn" --dir "$state" dfs -put "$work/f.txt" "hdfs://tonyns$dir/f.txt" >/dev/null 2>&1 ||
  fail "writing hdfs://tonyns$dir/f.txt with Hadoop's FsShell failed"
pass "Hadoop's FsShell wrote hdfs://tonyns$dir/f.txt"

# -- a job while the active NameNode dies ---------------------------------------

# The container reads the localized script after a pause; the AM is
# submitted, the active NameNode killed once the application runs, and the
# NodeManager localizes the shell containers' files from the new active.
cat >"$work/job.sh" <<'SH'
echo "hdfsha-job-marker"
sleep 3
SH
dshell_log="$work/dshell.log"
TONY_YARN_CLIENT_LOG=INFO "$yarn" --dir "$state" distributedshell -master_memory 256 \
  -timeout 180000 -shell_script "$work/job.sh" -num_containers 1 -container_memory 128 \
  >"$dshell_log" 2>&1 &
dshell=$!
app=""
for _ in $(seq 1 120); do
  app=$(grep -o 'Submitted application application_[0-9_]*' "$dshell_log" | head -n1 | awk '{print $3}')
  [[ -n "$app" && $(app_field "$app" State) == RUNNING ]] && break
  kill -0 "$dshell" 2>/dev/null || break
  sleep 0.5
done
[[ -n "$app" ]] || {
  tail -n 20 "$dshell_log" >&2
  fail "DistributedShell submitted nothing"
}
t0=$SECONDS
killed=$("$cluster" nn-kill-active --dir "$state" 2>/dev/null) || fail "nn-kill-active failed"
[[ "$killed" == "$active" ]] || fail "nn-kill-active killed '$killed', expected $active"
new_active=$("$cluster" nn-wait-active --dir "$state") || fail "no NameNode became active after $killed was killed"
[[ "$new_active" == "$standby" ]] || fail "$new_active is active, expected $standby"
pass "killed $killed (SIGKILL) while $app ran; $new_active active after $((SECONDS - t0))s"

if ! wait "$dshell"; then
  tail -n 20 "$dshell_log" >&2
  fail "DistributedShell ($app) failed after the failover"
fi
final=$(app_field "$app" Final-State)
[[ "$final" == SUCCEEDED ]] || fail "$app ended $final, expected SUCCEEDED"
pass "$app (localized from hdfs://tonyns) SUCCEEDED across the failover"

got=$("$yarn" --dir "$state" dfs -cat "hdfs://tonyns$dir/f.txt" 2>/dev/null)
[[ "$got" == "hdfs-ha-marker $$" ]] || fail "hdfs://tonyns$dir/f.txt reads '$got' after the failover"
pass "hdfs://tonyns$dir/f.txt reads back from $new_active"

if ((!secure)); then
  # Aggregation to hdfs://tonyns/tmp/logs follows the end by seconds.
  logs=""
  for _ in $(seq 1 30); do
    logs=$("$yarn" --dir "$state" logs -applicationId "$app" -log_files stdout 2>/dev/null)
    grep -q hdfsha-job-marker <<<"$logs" && break
    sleep 1
  done
  grep -q hdfsha-job-marker <<<"$logs" || fail "yarn logs of $app lacks the container's stdout: $logs"
  pass "yarn logs reads $app's logs aggregated to hdfs://tonyns/tmp/logs"
fi

# -- the killed NameNode comes back ----------------------------------------------

"$cluster" nn-start "$killed" --dir "$state" 2>/dev/null || fail "nn-start $killed failed"
back=""
for _ in $(seq 1 120); do
  back=$(curl_ -sf -m 3 "$([[ $killed == nn1 ]] && echo "$TONY_HDFS_NN1_WEB" || echo "$TONY_HDFS_NN2_WEB")/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["beans"][0]["State"])' 2>/dev/null)
  [[ "$back" == standby ]] && break
  sleep 0.5
done
[[ "$back" == standby ]] || fail "$killed restarted is '$back', expected standby"
"$cluster" status --dir "$state" >/dev/null || fail "cluster.sh status says the cluster is not whole"
pass "$killed restarted as standby; the cluster is whole again"

"$yarn" --dir "$state" dfs -rm -r -f -skipTrash "hdfs://tonyns$dir" >/dev/null 2>&1 || true
echo "hdfs_ha_cluster: $passed passed"
