#!/usr/bin/env bash
# A real single-machine Apache Hadoop YARN (and optionally HDFS) on 127.0.0.1,
# run from the Hadoop jars on Maven Central. See doc/local-yarn.md.
#
#   scripts/yarn/cluster.sh start [--hdfs] [--secure] [--ha] [--dir DIR] [--rpc-protection P]
#       Starts a ResourceManager and a NodeManager (plus a NameNode and a
#       DataNode with --hdfs), waits until the node is RUNNING and prints the
#       config directory (use it as HADOOP_CONF_DIR) as the last stdout line.
#       Does nothing but print it when the cluster already runs (a secure
#       one gets a fresh ticket in the user's cache).
#       P is hadoop.rpc.protection: authentication (default), integrity or
#       privacy; the token (SASL) connections of AMs then wrap every call.
#       --secure: Kerberos. A KDC of its own (realm TONY.TEST), principals
#       and keytabs for every daemon and for the user, secure daemons
#       (SPNEGO web UIs, HTTPS-only HDFS with a test CA, SASL data
#       transfer), and the user's ticket cache ready; see `env`.
#       --ha: ResourceManager HA. Two RMs (rm1 on TONY_YARN_HOST, rm2 on
#       TONY_YARN_RM2_HOST) with automatic failover, recovery from a
#       ZooKeeper state store (work-preserving) and a standalone ZooKeeper
#       on TONY_YARN_HOST:2181; see scripts/yarn/ha.sh.
#   scripts/yarn/cluster.sh rm-start rm1|rm2 [--dir DIR]
#       (--ha) Starts that ResourceManager again after it was stopped or
#       killed; it joins as standby (or active when the other is down).
#   scripts/yarn/cluster.sh stop [--dir DIR | --all] [--keep]
#       Stops every daemon and container of the cluster, then removes the
#       state directory (kept with --keep, e.g. to read the logs). --all
#       stops every cluster started by this script, whatever its directory.
#   scripts/yarn/cluster.sh status [--dir DIR]
#       Says what runs; exit 0 when the whole cluster is up, 3 when not.
#   scripts/yarn/cluster.sh conf-dir [--dir DIR]
#       Prints the config directory of a running cluster.
#   scripts/yarn/cluster.sh env [--dir DIR]
#       Prints `export NAME=VALUE` lines for a client of the running cluster
#       (eval "$(cluster.sh env)"): HADOOP_CONF_DIR, TONY_YARN_DIR,
#       TONY_YARN_HOST, and with --secure KRB5_CONFIG, KRB5CCNAME (the
#       user's ticket cache), KRB5_KDC_PROFILE, TONY_TEST_PRINCIPAL,
#       TONY_TEST_KEYTAB, TONY_TEST_REALM, TONY_TEST_KDC,
#       TONY_TEST_TOKEN_MAX_LIFETIME, TONY_TEST_TOKEN_RENEW_INTERVAL and,
#       with --hdfs, TONY_TEST_CA_FILE (the PEM CA of the HTTPS endpoints).
#
# DIR defaults to $TONY_YARN_DIR, then /tmp/tony-yarn. Other knobs:
#   TONY_YARN_START_TIMEOUT  seconds to wait for the node (default 90)
#   TONY_YARN_NM_MEMORY_MB   NodeManager memory (default 16384)
#   TONY_YARN_NM_VCORES      NodeManager vcores (default 16)
#   TONY_YARN_NM_GPUS        yarn.io/gpu declared by the NodeManager (default 4)
#   TONY_YARN_HOST           the loopback address every daemon binds (default
#                            127.0.0.1); clusters on different addresses of
#                            127.0.0.0/8 run side by side on one machine
#   TONY_YARN_RM2_HOST       with --ha: the second RM's address (default
#                            TONY_YARN_HOST with its second byte + 1,
#                            127.0.0.1 -> 127.1.0.1)
#   TONY_YARN_TOKEN_MAX_LIFETIME    with --secure: delegation-token maximum
#                            lifetime in seconds, HDFS and RM (default 604800)
#   TONY_YARN_TOKEN_RENEW_INTERVAL  with --secure: delegation-token renew
#                            interval in seconds (default 86400)
#   TONY_KRB5_SBIN           where krb5kdc, kdb5_util and kadmin.local are
#                            when not on PATH (default /usr/sbin)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/yarn/lib.sh
source "$here/lib.sh"

# -- ports -------------------------------------------------------------------

readonly host=${TONY_YARN_HOST:-127.0.0.1}
[[ "$host" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || {
  echo "cluster.sh: TONY_YARN_HOST must be a loopback address 127.x.y.z, not '$host'" >&2
  exit 1
}
readonly rm_client_port=8032 rm_scheduler_port=8030 rm_tracker_port=8031
readonly rm_admin_port=8033 rm_web_port=8088
readonly nm_port=45454 nm_localizer_port=8040 nm_web_port=8042
readonly nm_collector_port=8048
readonly nn_port=9000 nn_http_port=9870
readonly dn_port=9866 dn_http_port=9864 dn_ipc_port=9867

yarn_ports=("$rm_client_port" "$rm_scheduler_port" "$rm_tracker_port"
  "$rm_admin_port" "$rm_web_port" "$nm_port" "$nm_localizer_port"
  "$nm_web_port")
hdfs_ports=("$nn_port" "$nn_http_port" "$dn_port" "$dn_http_port" "$dn_ipc_port")

# -- arguments ---------------------------------------------------------------

usage() {
  sed -n '2,/^set -euo pipefail$/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
}

cmd=${1:-}
[[ -n "$cmd" ]] || {
  usage >&2
  exit 2
}
shift
with_hdfs=0
secure=0
with_ha=0
rpc_protection=authentication
keep=0
all=0
dir_arg=""
while (($#)); do
  case "$1" in
    --hdfs) with_hdfs=1 ;;
    --secure) secure=1 ;;
    --ha) with_ha=1 ;;
    --keep) keep=1 ;;
    --rpc-protection)
      [[ $# -ge 2 ]] || yarn_die "cluster.sh: --rpc-protection needs authentication, integrity or privacy"
      rpc_protection=$2
      shift
      ;;
    --rpc-protection=*) rpc_protection=${1#--rpc-protection=} ;;
    --all) all=1 ;;
    --dir)
      [[ $# -ge 2 ]] || yarn_die "cluster.sh: --dir needs a directory"
      dir_arg=$2
      shift
      ;;
    --dir=*) dir_arg=${1#--dir=} ;;
    -h | --help)
      usage
      exit 0
      ;;
    rm1 | rm2)
      [[ "$cmd" == rm-start ]] || yarn_die "cluster.sh: '$1' goes with rm-start only"
      rm_id=$1
      ;;
    *) yarn_die "cluster.sh: unknown argument '$1' (see cluster.sh --help)" ;;
  esac
  shift
done
for knob in TONY_YARN_START_TIMEOUT TONY_YARN_NM_MEMORY_MB TONY_YARN_NM_VCORES TONY_YARN_NM_GPUS \
  TONY_YARN_TOKEN_MAX_LIFETIME TONY_YARN_TOKEN_RENEW_INTERVAL; do
  [[ -z "${!knob:-}" || "${!knob}" =~ ^[0-9]+$ ]] ||
    yarn_die "cluster.sh: $knob must be a whole number, not '${!knob}'"
done
case "$rpc_protection" in
  authentication | integrity | privacy) ;;
  *) yarn_die "cluster.sh: --rpc-protection must be authentication, integrity or privacy, not '$rpc_protection'" ;;
esac
state=$(yarn_state_dir "$dir_arg")
conf="$state/conf"
marker="-Dtony.yarn.dir=$state"
# shellcheck source=scripts/yarn/secure.sh
source "$here/secure.sh"
# shellcheck source=scripts/yarn/ha.sh
source "$here/ha.sh"

# True when the cluster in $state was started with --secure.
state_is_secure() {
  [[ -s "$state/security" && $(<"$state/security") == kerberos ]]
}

# -- processes ---------------------------------------------------------------

# True when pid runs and is one of this cluster's JVMs or its KDC (pids get
# reused): the JVMs carry the marker, the KDC its pid file's path (-P).
# Matched in bash, not with grep, whose own arguments would hold the marker.
is_our_daemon() {
  local args
  args=$(tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline") || return 1
  [[ $'\n'"$args"$'\n' == *$'\n'"$marker"$'\n'* ||
    $'\n'"$args"$'\n' == *$'\n'"$state/pids/krb5kdc.pid"$'\n'* ]]
}

daemon_pid() {
  local name=$1 pid
  [[ -s "$state/pids/$name.pid" ]] || return 1
  pid=$(<"$state/pids/$name.pid") || return 1
  is_our_daemon "$pid" || return 1
  echo "$pid"
}

daemons_of_mode() {
  local kdc=""
  state_is_secure && kdc="krb5kdc "
  local ha=""
  state_is_ha && ha="$(ha_daemons) "
  if [[ -s "$state/mode" && $(<"$state/mode") == hdfs ]]; then
    echo "${kdc}${ha}namenode datanode resourcemanager nodemanager"
  else
    echo "${kdc}${ha}resourcemanager nodemanager"
  fi
}

# Every process this cluster owns, daemons or containers, one pid a line:
# - JVMs carrying the marker (found even when a pid file is gone),
# - container processes: the NodeManager gives each container a working
#   directory under nm-local/ and LOG_DIRS under nm-logs/; a process that
#   changed directory still has that environment.
# Never the caller or its ancestors, which may sit in the state directory.
cluster_pids() {
  local self_chain=" " p=$BASHPID
  while [[ -n "$p" && "$p" != 0 ]]; do
    self_chain+="$p "
    p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
  done
  local proc pid cwd env
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    [[ "$self_chain" == *" $pid "* ]] && continue
    if is_our_daemon "$pid"; then
      echo "$pid"
      continue
    fi
    cwd=$(readlink "$proc/cwd" 2>/dev/null || true)
    if [[ "$cwd" == "$state/nm-local/"* ]]; then
      echo "$pid"
      continue
    fi
    env=$(tr '\0' '\n' 2>/dev/null <"$proc/environ") || continue
    if [[ $'\n'"$env" == *$'\n'"LOG_DIRS=$state/nm-logs/"* ]]; then
      echo "$pid"
    fi
  done
}

# Sends a signal to pids, ignoring those already gone.
signal_pids() {
  local sig=$1 pid
  shift
  for pid in "$@"; do
    kill "-$sig" "$pid" 2>/dev/null || true
  done
}

# True when pid runs (a zombie does not).
pid_alive() {
  [[ -e "/proc/$1" ]] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# Waits until a just-forked daemon has exec'd (its command line carries
# its marker, which daemon_pid checks); returns 1 when it died first.
wait_exec() {
  local pid=$1 deadline=$((SECONDS + 10))
  until is_our_daemon "$pid"; do
    pid_alive "$pid" && ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

# Waits up to $1 seconds until none of the given pids runs.
wait_gone() {
  local deadline=$((SECONDS + $1)) pid alive
  shift
  while :; do
    alive=0
    for pid in "$@"; do
      if pid_alive "$pid"; then
        alive=1
        break
      fi
    done
    ((alive)) || return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# -- config ------------------------------------------------------------------

xml_begin() {
  printf '<?xml version="1.0"?>\n<!-- Written by scripts/yarn/cluster.sh; rewritten on every start. -->\n<configuration>\n'
}

prop() {
  printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"
}

xml_end() {
  printf '</configuration>\n'
}

write_config() {
  local classpath_file=$1 java_home=$2
  local default_fs="file:///"
  ((with_hdfs)) && default_fs="hdfs://$host:$nn_port"
  local memory=${TONY_YARN_NM_MEMORY_MB:-16384}
  local vcores=${TONY_YARN_NM_VCORES:-16}
  local gpus=${TONY_YARN_NM_GPUS:-4}
  mkdir -p "$conf"

  {
    xml_begin
    prop fs.defaultFS "$default_fs"
    prop hadoop.tmp.dir "$state/tmp"
    prop hadoop.rpc.protection "$rpc_protection"
    # The web UIs and REST calls without user.name act as this user.
    prop hadoop.http.staticuser.user "$(id -un)"
    # Short IPC retries: the NM may start before the RM listens.
    prop ipc.client.connect.retry.interval 500
    prop ipc.client.connect.max.retries 40
    ((secure)) && secure_core_props
    xml_end
  } >"$conf/core-site.xml"

  # yarn.application.classpath: what a Java AM (e.g. DistributedShell) puts
  # on its classpath; there is no Hadoop install tree, so name the jars.
  local app_classpath
  app_classpath="$conf,$(tr ':' ',' <"$classpath_file")"
  {
    xml_begin
    prop yarn.resourcemanager.hostname "$host"
    prop yarn.resourcemanager.address "$host:$rm_client_port"
    prop yarn.resourcemanager.scheduler.address "$host:$rm_scheduler_port"
    prop yarn.resourcemanager.resource-tracker.address "$host:$rm_tracker_port"
    prop yarn.resourcemanager.admin.address "$host:$rm_admin_port"
    prop yarn.resourcemanager.webapp.address "$host:$rm_web_port"
    prop yarn.resourcemanager.connect.retry-interval.ms 500
    prop yarn.resourcemanager.connect.max-wait.ms 60000
    prop yarn.nodemanager.hostname "$host"
    prop yarn.nodemanager.address "$host:$nm_port"
    prop yarn.nodemanager.localizer.address "$host:$nm_localizer_port"
    prop yarn.nodemanager.webapp.address "$host:$nm_web_port"
    prop yarn.nodemanager.collector-service.address "$host:$nm_collector_port"
    prop yarn.nodemanager.local-dirs "$state/nm-local"
    prop yarn.nodemanager.log-dirs "$state/nm-logs"
    prop yarn.nodemanager.resource.memory-mb "$memory"
    prop yarn.nodemanager.resource.cpu-vcores "$vcores"
    prop yarn.scheduler.minimum-allocation-mb 128
    prop yarn.scheduler.maximum-allocation-mb 8192
    prop yarn.scheduler.minimum-allocation-vcores 1
    prop yarn.scheduler.maximum-allocation-vcores 8
    prop yarn.nodemanager.vmem-check-enabled false
    prop yarn.nodemanager.container-executor.class \
      org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor
    prop yarn.nodemanager.env-whitelist \
      JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,CLASSPATH_PREPEND_DISTCACHE,HADOOP_YARN_HOME,HADOOP_HOME,PATH,LANG,TZ
    # The whitelist alone does not carry PATH: the DefaultContainerExecutor
    # starts launch_container.sh with an empty environment, bash fills in
    # its compiled-in PATH, and `export PATH=${PATH:-<NM's PATH>}` keeps it.
    # The admin env is always applied; $PATH there is the NM's own PATH
    # (appended when the application sets PATH itself), so containers find
    # what the caller of `start` had on PATH, e.g. a Python virtualenv.
    # A secure cluster's containers also get its krb5.conf (for MIT
    # Kerberos libraries; a Java task is handed -Djava.security.krb5.conf).
    # shellcheck disable=SC2016 # expanded by the NodeManager, not here
    local admin_env='MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX,PATH=$PATH'
    ((secure)) && admin_env+=",KRB5_CONFIG=$krb5_dir/krb5.conf"
    prop yarn.nodemanager.admin-env "$admin_env"
    # A nearly full disk would otherwise mark the node UNHEALTHY.
    prop yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage 99.9
    prop yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb 0
    prop yarn.nodemanager.disk-health-checker.min-free-space-per-disk-watermark-high-mb 0
    # Aggregated logs make `yarn logs -applicationId` work for finished apps.
    prop yarn.log-aggregation-enable true
    prop yarn.nodemanager.remote-app-log-dir "file://$state/app-logs"
    # Keep container directories and local logs after an app ends, for
    # tests and debugging; stop removes the whole state directory anyway.
    prop yarn.nodemanager.delete.debug-delay-sec 3600
    prop yarn.nodemanager.resource-plugins ""
    prop yarn.application.classpath "$app_classpath"
    prop yarn.resourcemanager.scheduler.class \
      org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler
    if ((with_ha)); then
      ha_yarn_props
    else
      prop yarn.resourcemanager.recovery.enabled false
    fi
    prop yarn.timeline-service.enabled false
    prop yarn.webapp.ui2.enable false
    ((secure)) && secure_yarn_props
    xml_end
  } >"$conf/yarn-site.xml"

  # Two queues: tests may pick a queue other than the default one.
  {
    xml_begin
    prop yarn.scheduler.capacity.root.queues default,second
    prop yarn.scheduler.capacity.root.default.capacity 70
    prop yarn.scheduler.capacity.root.default.maximum-capacity 100
    prop yarn.scheduler.capacity.root.second.capacity 30
    prop yarn.scheduler.capacity.root.second.maximum-capacity 100
    prop yarn.scheduler.capacity.maximum-am-resource-percent 0.5
    # Counts vcores and yarn.io/gpu too, not only memory.
    prop yarn.scheduler.capacity.resource-calculator \
      org.apache.hadoop.yarn.util.resource.DominantResourceCalculator
    prop yarn.scheduler.capacity.node-locality-delay -1
    # Queue admins may kill anyone's application, and root's default
    # admin ACL is everyone: with ACLs on, only the yarn admins are.
    ((secure)) && prop yarn.scheduler.capacity.root.acl_administer_queue yarn
    xml_end
  } >"$conf/capacity-scheduler.xml"

  # yarn.io/gpu as a countable resource type. The NodeManager declares a
  # static count (node-resources.xml) with no GPU plugin, so no device is
  # discovered, isolated or exposed; requests are scheduled and accounted.
  {
    xml_begin
    prop yarn.resource-types yarn.io/gpu
    prop yarn.resource-types.yarn.io/gpu.maximum-allocation "$gpus"
    xml_end
  } >"$conf/resource-types.xml"
  {
    xml_begin
    prop yarn.nodemanager.resource-type.yarn.io/gpu "$gpus"
    xml_end
  } >"$conf/node-resources.xml"

  {
    xml_begin
    prop dfs.namenode.rpc-address "$host:$nn_port"
    prop dfs.namenode.http-address "$host:$nn_http_port"
    prop dfs.datanode.address "$host:$dn_port"
    prop dfs.datanode.http.address "$host:$dn_http_port"
    prop dfs.datanode.ipc.address "$host:$dn_ipc_port"
    if ((secure)); then
      secure_hdfs_props
    else
      prop dfs.permissions.enabled false
    fi
    prop dfs.datanode.hostname "$host"
    prop dfs.namenode.name.dir "file://$state/hdfs/name"
    prop dfs.datanode.data.dir "file://$state/hdfs/data"
    prop dfs.replication 1
    prop dfs.webhdfs.enabled true
    prop dfs.namenode.safemode.extension 0
    prop dfs.namenode.safemode.min.datanodes 0
    prop dfs.namenode.datanode.registration.ip-hostname-check false
    # The DataNode is known by its configured address: its connections to
    # the NameNode come from 127.0.0.1 whatever address it binds.
    prop dfs.client.use.datanode.hostname true
    prop dfs.datanode.use.datanode.hostname true
    prop dfs.datanode.du.reserved 0
    prop dfs.namenode.resource.du.reserved 0
    prop dfs.namenode.resource.check.interval 3600000
    prop dfs.heartbeat.interval 1
    xml_end
  } >"$conf/hdfs-site.xml"

  cat >"$conf/log4j.properties" <<'LOG4J'
# Written by scripts/yarn/cluster.sh. Daemons log to stderr, which the
# script sends to logs/<daemon>.log.
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.logger.org.apache.hadoop.conf.Configuration.deprecation=WARN
log4j.logger.org.eclipse.jetty=WARN
LOG4J

  # The hadoop-hdfs jar on Maven Central leaves out the web UI resources
  # that a distribution ships in share/hadoop/hdfs/webapps, and the HDFS
  # daemons refuse to start without the directories. Empty ones suffice:
  # WebHDFS, JMX and /conf are servlets; only the HTML UI is missing.
  mkdir -p "$state/run/resources/webapps"/{hdfs,datanode,secondary,journal}

  cp "$classpath_file" "$conf/hadoop-classpath.txt"
  echo "$java_home" >"$conf/java-home.txt"
  ((with_hdfs)) && echo hdfs >"$state/mode" || echo yarn >"$state/mode"
  ((secure)) && echo kerberos >"$state/security" || echo simple >"$state/security"
  echo "$rpc_protection" >"$state/rpc-protection"
  echo "$host" >"$state/host"
  if ((with_ha)); then ha_write_zk_conf; fi
}

# -- daemons -----------------------------------------------------------------

# Writes a JVM argument file for a daemon; `java @file` keeps ps readable.
write_jvm_args() {
  local name=$1 heap=$2
  local file="$state/run/$name.args"
  mkdir -p "$state/run"
  {
    yarn_jvm_opts "$heap"
    echo "-Dhadoop.log.dir=$state/logs"
    echo "-Dyarn.log.dir=$state/logs"
    echo "-Dhadoop.log.file=$name.log"
    echo "-Dyarn.log.file=$name.log"
    echo "-Dhadoop.home.dir=$state"
    echo "-Dhadoop.id.str=$(id -un)"
    echo "-Dhadoop.root.logger=INFO,console"
    echo "-Dlog4j.configuration=file:$conf/log4j.properties"
    if state_is_secure; then
      echo "-Djava.security.krb5.conf=$krb5_dir/krb5.conf"
      echo "-Djava.library.path=$(<"$state/run/native-dir")"
    fi
    echo "-cp"
    echo "$conf:$state/run/resources:$(<"$conf/hadoop-classpath.txt")"
  } >"$file"
  echo "$file"
}

# Starts one daemon in its own session, detached from the caller's terminal
# and pipes (a caller reading our stdout must not wait for the daemons).
launch() {
  local name=$1 class=$2
  shift 2
  local args java java_home
  args=$(write_jvm_args "$name" 512m)
  java=$(yarn_java)
  java_home=$(<"$conf/java-home.txt")
  mkdir -p "$state/logs" "$state/pids"
  (
    cd "$state"
    export HADOOP_CONF_DIR="$conf" JAVA_HOME="$java_home"
    export HADOOP_HOME="$state" HADOOP_COMMON_HOME="$state"
    exec setsid "$java" "@$args" "$marker" -Dproc_"$name" "$class" "$@" \
      </dev/null >>"$state/logs/$name.log" 2>&1
  ) &
  echo $! >"$state/pids/$name.pid"
  # A check before the exec would take the daemon for dead; one that died
  # is reported by the caller's wait loop.
  wait_exec $! || true
}

show_log_tail() {
  local name=$1 log="$state/logs/$1.log"
  if [[ -s "$log" ]]; then
    echo "---- last lines of $log ----" >&2
    grep -v -e '^\s*at ' -e 'STARTUP_MSG:   classpath' "$log" | tail -n 25 | cut -c1-400 >&2
    echo "----" >&2
  fi
}

# Shows the logs of the daemons that died, or of all when none did (a
# timeout), stops what runs and exits non-zero.
fail_start() {
  local name dead=()
  yarn_log "cluster.sh: $*"
  for name in $(daemons_of_mode); do
    daemon_pid "$name" >/dev/null || dead+=("$name")
  done
  ((${#dead[@]})) || read -r -a dead <<<"$(daemons_of_mode)"
  for name in "${dead[@]}"; do
    show_log_tail "$name"
  done
  yarn_log "cluster.sh: stopping what did start; state kept in $state for inspection"
  stop_cluster 1 >/dev/null || true
  exit 1
}

port_in_use() {
  (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null
}

# curl for the cluster's own REST and JMX endpoints: as the user, with
# SPNEGO and the test CA, on a secure cluster.
cluster_curl() {
  if state_is_secure; then
    secure_curl "$@"
  else
    curl "$@"
  fi
}

# The NameNode's web endpoint: HTTPS only on a secure cluster.
nn_web_url() {
  if state_is_secure; then
    echo "https://$host:$nn_https_port"
  else
    echo "http://$host:$nn_http_port"
  fi
}

# Prints the RUNNING node count from the RM REST API, or nothing.
running_nodes() {
  local web="http://$host:$rm_web_port"
  if state_is_ha; then web=$(ha_active_web) || return 0; fi
  cluster_curl -sf -m 3 "$web/ws/v1/cluster/nodes?states=RUNNING" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); n=(d.get("nodes") or {}).get("node") or []; print(len(n))' 2>/dev/null || true
}

# Prints "live safemode" from the NameNode's JMX, e.g. "1 off".
namenode_state() {
  cluster_curl -sf -m 3 "$(nn_web_url)/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" 2>/dev/null |
    python3 -c 'import json,sys; b=json.load(sys.stdin)["beans"][0]; print(b["NumLiveDataNodes"], b["FSState"])' 2>/dev/null || true
}

all_running() {
  local name
  for name in $(daemons_of_mode); do
    daemon_pid "$name" >/dev/null || return 1
  done
}

any_running() {
  local name
  for name in krb5kdc zookeeper namenode datanode resourcemanager resourcemanager2 nodemanager; do
    daemon_pid "$name" >/dev/null && return 0
  done
  return 1
}

start_cluster() {
  if [[ -d "$state" ]] && any_running; then
    if all_running && [[ "$((with_hdfs))" -eq "$([[ $(<"$state/mode") == hdfs ]] && echo 1 || echo 0)" ]] &&
      [[ "$((secure))" -eq "$(state_is_secure && echo 1 || echo 0)" ]] &&
      [[ "$((with_ha))" -eq "$(state_is_ha && echo 1 || echo 0)" ]] &&
      [[ "$(cat "$state/rpc-protection" 2>/dev/null || echo authentication)" == "$rpc_protection" ]]; then
      yarn_log "cluster.sh: already running ($(daemons_of_mode)) in $state"
      # A long-lived cluster outlives the user's ticket (24 h): get a new one.
      if state_is_secure && ! kinit_user; then
        yarn_die "cluster.sh: renewing the user's ticket in $krb5_dir/user.ccache failed (KDC log: $state/logs/krb5kdc.log)"
      fi
      echo "$conf"
      return 0
    fi
    yarn_die "cluster.sh: a different or partial cluster runs in $state ($(status_line)); run 'cluster.sh stop --dir $state' first"
  fi

  local t0=$SECONDS port
  local -a ports=("${yarn_ports[@]}")
  if ((secure)); then
    secure_check_tools
    # HTTPS only: the HTTP ports of the NameNode and DataNode stay closed.
    ports+=("$kdc_port")
    ((with_hdfs)) && ports+=("$nn_port" "$nn_https_port" "$dn_port" "$dn_https_port" "$dn_ipc_port")
  else
    ((with_hdfs)) && ports+=("${hdfs_ports[@]}")
  fi
  for port in "${ports[@]}"; do
    port_in_use "$port" &&
      yarn_die "cluster.sh: port $host:$port is in use (another cluster? 'cluster.sh status', or find its owner with 'fuser -n tcp $port')"
  done
  if ((with_ha)); then
    ((secure)) && yarn_die "cluster.sh: --ha does not go with --secure yet"
    local hp
    for hp in $(ha_ports); do
      (exec 3<>"/dev/tcp/${hp%:*}/${hp#*:}") 2>/dev/null &&
        yarn_die "cluster.sh: port $hp is in use (another cluster? find its owner with 'fuser -n tcp ${hp#*:}')"
    done
  fi
  command -v curl >/dev/null || yarn_die "cluster.sh: curl not found (scripts/setup.sh installs it)"
  command -v python3 >/dev/null || yarn_die "cluster.sh: python3 not found"

  local classpath_file java_home
  classpath_file=$(yarn_resolve_classpath 0)
  java_home=$(yarn_java_home)

  # A stale state directory (crashed cluster, kept logs) starts over.
  rm -rf "$state"
  mkdir -p "$state"/{conf,logs,pids,run,nm-local,nm-logs,app-logs,tmp}
  write_config "$classpath_file" "$java_home"
  if ((secure)); then
    yarn_resolve_native >"$state/run/native-dir"
    save_token_lifetimes
    # The KDC first: the NameNode logs in to format its storage.
    write_krb5_conf
    create_realm
    start_kdc
    ((with_hdfs)) && make_tls
  fi

  if ((with_hdfs)); then
    mkdir -p "$state/hdfs"
    local fmt_args java
    fmt_args=$(write_jvm_args namenode-format 256m)
    java=$(yarn_java)
    if ! (cd "$state" && HADOOP_CONF_DIR="$conf" "$java" "@$fmt_args" "$marker" \
      org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive -force \
      </dev/null >"$state/logs/namenode-format.log" 2>&1); then
      show_log_tail namenode-format
      local why="formatting the NameNode failed (log: $state/logs/namenode-format.log)"
      ((secure)) && fail_start "$why" # stops the KDC
      yarn_die "cluster.sh: $why"
    fi
    launch namenode org.apache.hadoop.hdfs.server.namenode.NameNode
    launch datanode org.apache.hadoop.hdfs.server.datanode.DataNode
  fi
  if ((with_ha)); then
    ha_start_zookeeper || fail_start "ZooKeeper did not start (log: $state/logs/zookeeper.log)"
    ha_launch_rm rm1
    ha_launch_rm rm2
  else
    launch resourcemanager org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
  fi
  launch nodemanager org.apache.hadoop.yarn.server.nodemanager.NodeManager

  local timeout=${TONY_YARN_START_TIMEOUT:-90}
  local deadline=$((SECONDS + timeout)) name nodes hdfs_ok=1
  ((with_hdfs)) && hdfs_ok=0
  while :; do
    for name in $(daemons_of_mode); do
      daemon_pid "$name" >/dev/null ||
        fail_start "the $name exited during start (log: $state/logs/$name.log)"
    done
    nodes=$(running_nodes)
    if ((!hdfs_ok)) && [[ $(namenode_state) == "1 Operational" ]]; then
      hdfs_ok=1
    fi
    [[ "$nodes" == 1 ]] && ((hdfs_ok)) && break
    ((SECONDS < deadline)) ||
      fail_start "no RUNNING node$( ((hdfs_ok)) || echo " or no live DataNode") after ${timeout}s (RM reports ${nodes:-nothing}); see $state/logs"
    sleep 0.5
  done
  ((secure && with_hdfs)) && bootstrap_hdfs_dirs
  local mode=""
  ((secure)) && mode=" (Kerberos realm $krb5_realm, KDC $host:$kdc_port, rpc protection $rpc_protection)"
  ((with_ha)) && mode=" (HA: $(ha_states), ZooKeeper $host:$zk_port)"
  yarn_log "cluster.sh: $(daemons_of_mode | sed 's/ /, /g') running after $((SECONDS - t0))s$mode; RM http://$host:$rm_web_port, state $state"
  echo "$conf"
}

# -- stop --------------------------------------------------------------------

# Arg 1: 1 to keep the state directory.
stop_cluster() {
  local keep_state=${1:-0}
  local -a pids
  # NodeManager first: it stops its containers on the way down.
  local name pid
  for name in nodemanager resourcemanager resourcemanager2 zookeeper datanode namenode krb5kdc; do
    pid=$(daemon_pid "$name") || continue
    kill -TERM "$pid" 2>/dev/null || true
    if [[ "$name" == nodemanager ]]; then
      wait_gone 10 "$pid" || true
    fi
  done
  mapfile -t pids < <(cluster_pids)
  if ((${#pids[@]})); then
    signal_pids TERM "${pids[@]}"
    if ! wait_gone 15 "${pids[@]}"; then
      yarn_log "cluster.sh: processes still up after SIGTERM, sending SIGKILL"
    fi
  fi
  # Containers may fork while we look; a few SIGKILL rounds settle it.
  for _ in 1 2 3 4 5; do
    mapfile -t pids < <(cluster_pids)
    ((${#pids[@]})) || break
    signal_pids KILL "${pids[@]}"
    wait_gone 5 "${pids[@]}" || true
  done
  mapfile -t pids < <(cluster_pids)
  if ((${#pids[@]})); then
    ps -o pid,stat,args -p "$(
      IFS=,
      echo "${pids[*]}"
    )" >&2 || true
    yarn_die "cluster.sh: these processes of $state survive SIGKILL; state directory kept"
  fi
  if ((keep_state == 0)); then
    rm -rf "$state"
    yarn_log "cluster.sh: stopped; removed $state"
  else
    yarn_log "cluster.sh: stopped; state kept in $state"
  fi
}

# -- status ------------------------------------------------------------------

status_line() {
  local name pid out=""
  for name in krb5kdc zookeeper namenode datanode resourcemanager resourcemanager2 nodemanager; do
    if pid=$(daemon_pid "$name"); then
      out+="$name=$pid "
    fi
  done
  echo "${out:-nothing running}"
}

status_cluster() {
  if [[ ! -d "$state" ]]; then
    echo "no cluster in $state"
    return 3
  fi
  echo "state:   $state"
  echo "daemons: $(status_line)"
  if all_running; then
    echo "nodes:   $(running_nodes) RUNNING (http://$host:$rm_web_port/cluster/nodes)"
    if [[ $(<"$state/mode") == hdfs ]]; then
      echo "hdfs:    hdfs://$host:$nn_port (live datanodes, state: $(namenode_state))"
    fi
    if state_is_ha; then
      echo "ha:      $(ha_states), ZooKeeper $host:$zk_port"
    fi
    if state_is_secure; then
      echo "secure:  Kerberos realm $krb5_realm, KDC $host:$kdc_port, user $(secure_user_principal), rpc protection $(<"$state/rpc-protection")"
    fi
    echo "conf:    $conf"
    return 0
  fi
  return 3
}

# State directories of every running cluster, from the daemons' markers.
all_state_dirs() {
  local proc
  for proc in /proc/[0-9]*; do
    # A process may vanish while we look; that is no error (set -e).
    tr '\0' '\n' 2>/dev/null <"$proc/cmdline" |
      sed -n -e 's/^-Dtony[.]yarn[.]dir=//p' -e 's#^\(/.*\)/pids/krb5kdc[.]pid$#\1#p' || true
  done | sort -u
}

if ((all)); then
  [[ "$cmd" == stop && -z "$dir_arg" ]] || yarn_die "cluster.sh: --all goes with stop only, without --dir"
  rc=0
  found=0
  while read -r dir; do
    [[ -n "$dir" ]] || continue
    found=1
    keep_arg=()
    ((keep)) && keep_arg=(--keep)
    "$0" stop --dir "$dir" "${keep_arg[@]}" || rc=1
  done < <(all_state_dirs)
  ((found)) || yarn_log "cluster.sh: no cluster runs"
  exit "$rc"
fi

case "$cmd" in
  start) start_cluster ;;
  stop)
    if [[ ! -d "$state" ]] && [[ -z "$(cluster_pids)" ]]; then
      yarn_log "cluster.sh: nothing runs in $state"
      exit 0
    fi
    stop_cluster "$keep"
    ;;
  status) status_cluster ;;
  rm-start)
    state_is_ha || yarn_die "cluster.sh: rm-start needs an --ha cluster in $state"
    [[ -n "${rm_id:-}" ]] || yarn_die "cluster.sh: rm-start needs rm1 or rm2"
    rm_name=resourcemanager
    [[ "$rm_id" == rm2 ]] && rm_name=resourcemanager2
    daemon_pid "$rm_name" >/dev/null && yarn_die "cluster.sh: $rm_id already runs"
    ha_launch_rm "$rm_id"
    yarn_log "cluster.sh: $rm_id started (log: $state/logs/$rm_name.log)"
    ;;
  conf-dir)
    all_running || yarn_die "cluster.sh: no cluster runs in $state; start one with 'cluster.sh start'"
    echo "$conf"
    ;;
  env)
    all_running || yarn_die "cluster.sh: no cluster runs in $state; start one with 'cluster.sh start'"
    # The address the cluster was started on, whatever the caller's is.
    addr=$(cat "$state/host" 2>/dev/null || echo "$host")
    printf 'export %s=%q\n' HADOOP_CONF_DIR "$conf" TONY_YARN_DIR "$state" TONY_YARN_HOST "$addr"
    if state_is_ha; then printf 'export %s=%q\n' TONY_YARN_RM2_HOST "$rm2_host"; fi
    if state_is_secure; then secure_env_lines "$addr"; fi
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
