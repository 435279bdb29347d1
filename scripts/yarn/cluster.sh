#!/usr/bin/env bash
# A real single-machine Apache Hadoop YARN (and optionally HDFS) on loopback
# addresses, run from the Hadoop jars on Maven Central. See doc/local-yarn.md.
#
#   scripts/yarn/cluster.sh start [--hdfs [--second-namenode] | --hdfs-ha] [--secure] [--ha]
#                                 [--nodes N] [--dir DIR] [--rpc-protection P]
#                                 [--hadoop-version V] [--s3a ENDPOINT]
#       Starts a ResourceManager and N NodeManagers (plus a NameNode and a
#       DataNode with --hdfs), waits until every node is RUNNING and prints
#       the config directory (use it as HADOOP_CONF_DIR) as the last stdout
#       line. Does nothing but print it when the cluster already runs (a
#       secure one gets a fresh ticket in the user's cache).
#       --nodes N (default 1): one NodeManager shares the cluster's address;
#       with N > 1 each NodeManager is a host of its own, on the N addresses
#       after the cluster's (a.b.c.d+1 ... a.b.c.d+N), with its own node id,
#       config, local and log dirs.
#       P is hadoop.rpc.protection: authentication (default), integrity or
#       privacy; the token (SASL) connections of AMs then wrap every call.
#       --secure: Kerberos. A KDC of its own (realm TONY.TEST), principals
#       and keytabs for every daemon (one nm principal per node) and for the
#       user, secure daemons (SPNEGO web UIs, HTTPS-only HDFS with a test CA,
#       SASL data transfer), and the user's ticket cache ready; see `env`.
#       --second-namenode (with --hdfs): a second, independent NameNode
#       (namespace only, no DataNode: mkdir, ls, rename work, writing file
#       data does not) on the cluster's address, port 9100, its own name
#       dir and config (namenode2/conf), on the same realm when --secure;
#       a job's [security] file_systems can name it.
#       --ha: ResourceManager HA. Two RMs (rm1 on TONY_YARN_HOST, rm2 on
#       TONY_YARN_RM2_HOST) with automatic failover, recovery from a
#       ZooKeeper state store (work-preserving) and a standalone ZooKeeper
#       on TONY_YARN_HOST:2181; see scripts/yarn/ha.sh.
#       --hdfs-ha: HDFS with NameNode HA instead of --hdfs's one NameNode.
#       The nameservice tonyns (fs.defaultFS=hdfs://tonyns) of two NameNodes
#       (nn1 on port 9000, HTTP 9870 / HTTPS 9871; nn2 on 9010, HTTP 9876 /
#       HTTPS 9877) on the cluster's address, three JournalNodes for the
#       shared edits, automatic failover by a ZKFC per NameNode through a
#       standalone ZooKeeper on TONY_YARN_HOST:2181 (--ha's, or its own
#       without --ha) and one DataNode; with or without --secure. See
#       scripts/yarn/hdfsha.sh.
#   scripts/yarn/cluster.sh nn-active | nn-wait-active | nn-kill-active [--dir DIR]
#       (--hdfs-ha) Print the active NameNode's id (nn1 or nn2); exit 3 when
#       none is. nn-wait-active waits for one (up to TONY_YARN_START_TIMEOUT);
#       nn-kill-active kills the active one with SIGKILL and prints its id.
#   scripts/yarn/cluster.sh nn-start nn1|nn2 [--dir DIR]
#       (--hdfs-ha) Starts that NameNode again after it was killed; its ZKFC
#       makes it standby (or active when the other is down).
#       --s3a ENDPOINT: s3a:// on an S3-compatible server at ENDPOINT
#       (http://host:port, e.g. moto_server's): Hadoop's S3A connector on
#       every daemon, aggregated logs in s3a://$TONY_YARN_S3A_BUCKET/logs
#       and a `hadoop fs` client in DIR/bin; see scripts/yarn/s3a.sh.
#   scripts/yarn/cluster.sh rm-start rm1|rm2 [--dir DIR]
#       (--ha) Starts that ResourceManager again after it was stopped or
#       killed; it joins as standby (or active when the other is down).
#   scripts/yarn/cluster.sh nm-start ADDRESS [--dir DIR]
#       Starts the NodeManager of that node of the cluster again after it
#       was stopped or killed (a node joining a running cluster, as an
#       autoscaler's does); it registers with the ResourceManager as it
#       starts.
#   scripts/yarn/cluster.sh zk-start [--dir DIR]
#       (--ha) Starts the cluster's ZooKeeper again after it was stopped or
#       killed (its data directory is kept); waits until it serves.
#       --hadoop-version V: the Apache Hadoop release the daemons run
#       (default $TONY_HADOOP_VERSION, else 3.4.2; 3.3.6 is tested too).
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
#       TONY_YARN_HOST, TONY_YARN_NODES (the NodeManagers' addresses),
#       TONY_HADOOP_VERSION, TONY_YARN_NM_CLOCK (when a node's clock is
#       off), and with --secure KRB5_CONFIG, KRB5CCNAME (the
#       user's ticket cache), KRB5_KDC_PROFILE, TONY_TEST_PRINCIPAL,
#       TONY_TEST_KEYTAB, TONY_TEST_REALM, TONY_TEST_KDC,
#       TONY_TEST_TOKEN_MAX_LIFETIME, TONY_TEST_TOKEN_RENEW_INTERVAL and,
#       with --hdfs, TONY_TEST_CA_FILE (the PEM CA of the HTTPS endpoints);
#       with --second-namenode TONY_YARN_NAMENODE2 (its hdfs:// URI);
#       with --hdfs-ha TONY_HDFS_NAMESERVICE (tonyns), TONY_HDFS_NN1 and
#       TONY_HDFS_NN2 (host:port of their RPC), TONY_HDFS_NN1_WEB and
#       TONY_HDFS_NN2_WEB (their http(s):// web endpoints, WebHDFS under
#       /webhdfs/v1) and TONY_ZOOKEEPER. `env` and `conf-dir` answer while
#       a NameNode of --hdfs-ha is down.
#
# DIR defaults to $TONY_YARN_DIR, then /tmp/tony-yarn. Other knobs:
#   TONY_YARN_START_TIMEOUT  seconds to wait for the nodes (default 90)
#   TONY_YARN_NM_MEMORY_MB   memory of each NodeManager (default 16384)
#   TONY_YARN_NM_VCORES      vcores of each NodeManager (default 16)
#   TONY_YARN_NM_GPUS        yarn.io/gpu declared by each NodeManager (default 4)
#   TONY_YARN_NM_HEAP_MB     heap limit of each NodeManager JVM (default 256)
#   TONY_YARN_NM_EXPIRY      seconds without heartbeat after which the RM
#                            declares a NodeManager LOST (default 10)
#   TONY_YARN_PLACEMENT_CONSTRAINTS
#                            yarn.resourcemanager.placement-constraints.handler:
#                            disabled (YARN's default), scheduler or
#                            placement-processor (SchedulingRequests)
#   TONY_YARN_ASYNC_SCHEDULING 1: the CapacityScheduler places containers
#                            from its own thread, not on node heartbeats
#                            (schedule-asynchronously.enable)
#   TONY_YARN_NATIVE         1: the daemons load Hadoop's native library
#                            (libhadoop.so) as production ones do, also when
#                            not --secure (which always does). Without it a
#                            NodeManager sets the permissions of a localized
#                            archive's files by running chmod once per file
#                            (minutes for a Python environment of 30,000
#                            files on a busy machine)
#   TONY_YARN_NM_WRAPPER     a command the NodeManagers are started under
#                            (it gets the java command line as arguments and
#                            must exec it; TONY_YARN_NM_NODE is the node's
#                            address), e.g. one that hides libraries in a
#                            mount namespace or runs the NodeManager in a
#                            container of that node
#   TONY_YARN_NM_CLOCK       N:OFFSET[,N:OFFSET...], nodes whose wall clock is
#                            off: node N (1 to --nodes, in TONY_YARN_NODES'
#                            order) sees the time OFFSET away from everyone
#                            else's, +90s, -30m, +1h or +2d (libfaketime,
#                            Debian's `faketime` package); its NodeManager's
#                            wall clock does, its monotonic clock and file
#                            times stay true, as on a node whose NTP is off
#                            (its containers run on the true clock: see
#                            clock_env)
#   TONY_FAKETIME_LIB        libfaketime.so.1 when not in /usr/lib/*/faketime
#   TONY_YARN_HOST           the loopback address the RM (and HDFS) binds
#                            (default 127.0.0.1); clusters on different
#                            addresses of 127.0.0.0/8 run side by side on one
#                            machine
#   TONY_YARN_RM2_HOST       with --ha: the second RM's address (default
#                            TONY_YARN_HOST with its second byte + 1,
#                            127.0.0.1 -> 127.1.0.1)
#   TONY_HADOOP_VERSION      the default of --hadoop-version
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
readonly nn2_port=9100 nn2_http_port=9880
readonly dn_port=9866 dn_http_port=9864 dn_ipc_port=9867

rm_ports=("$rm_client_port" "$rm_scheduler_port" "$rm_tracker_port"
  "$rm_admin_port" "$rm_web_port")
nm_ports=("$nm_port" "$nm_localizer_port" "$nm_web_port")
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
hdfs_ha=0
second_nn=0
secure=0
with_ha=0
rpc_protection=authentication
keep=0
all=0
dir_arg=""
node_count=1
hadoop_version=${TONY_HADOOP_VERSION:-$yarn_default_hadoop_version}
s3a_endpoint=""
while (($#)); do
  case "$1" in
    --hdfs) with_hdfs=1 ;;
    --hdfs-ha)
      with_hdfs=1
      hdfs_ha=1
      ;;
    --second-namenode) second_nn=1 ;;
    --secure) secure=1 ;;
    --ha) with_ha=1 ;;
    --keep) keep=1 ;;
    --nodes)
      [[ $# -ge 2 ]] || yarn_die "cluster.sh: --nodes needs a number of NodeManagers"
      node_count=$2
      shift
      ;;
    --nodes=*) node_count=${1#--nodes=} ;;
    --hadoop-version)
      [[ $# -ge 2 ]] || yarn_die "cluster.sh: --hadoop-version needs a Hadoop release, e.g. 3.3.6"
      hadoop_version=$2
      shift
      ;;
    --hadoop-version=*) hadoop_version=${1#--hadoop-version=} ;;
    --rpc-protection)
      [[ $# -ge 2 ]] || yarn_die "cluster.sh: --rpc-protection needs authentication, integrity or privacy"
      rpc_protection=$2
      shift
      ;;
    --rpc-protection=*) rpc_protection=${1#--rpc-protection=} ;;
    --all) all=1 ;;
    --s3a)
      [[ $# -ge 2 ]] || yarn_die "cluster.sh: --s3a needs the S3 server's endpoint, e.g. http://127.0.24.1:5000"
      s3a_endpoint=$2
      shift
      ;;
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
    nn1 | nn2)
      [[ "$cmd" == nn-start ]] || yarn_die "cluster.sh: '$1' goes with nn-start only"
      nn_id=$1
      ;;
    *)
      [[ "$cmd" == nm-start && -z "${nm_addr:-}" ]] ||
        yarn_die "cluster.sh: unknown argument '$1' (see cluster.sh --help)"
      nm_addr=$1
      ;;
  esac
  shift
done
for knob in TONY_YARN_START_TIMEOUT TONY_YARN_NM_MEMORY_MB TONY_YARN_NM_VCORES TONY_YARN_NM_GPUS \
  TONY_YARN_NM_HEAP_MB TONY_YARN_NM_EXPIRY TONY_YARN_TOKEN_MAX_LIFETIME \
  TONY_YARN_TOKEN_RENEW_INTERVAL; do
  [[ -z "${!knob:-}" || "${!knob}" =~ ^[0-9]+$ ]] ||
    yarn_die "cluster.sh: $knob must be a whole number, not '${!knob}'"
done
[[ "${TONY_YARN_ASYNC_SCHEDULING:-0}" =~ ^[01]$ ]] ||
  yarn_die "cluster.sh: TONY_YARN_ASYNC_SCHEDULING must be 0 or 1, not '$TONY_YARN_ASYNC_SCHEDULING'"
case "${TONY_YARN_PLACEMENT_CONSTRAINTS:-disabled}" in
  disabled | scheduler | placement-processor) ;;
  *) yarn_die "cluster.sh: TONY_YARN_PLACEMENT_CONSTRAINTS must be disabled, scheduler or placement-processor, not '$TONY_YARN_PLACEMENT_CONSTRAINTS'" ;;
esac
[[ "$node_count" =~ ^[1-9][0-9]*$ ]] ||
  yarn_die "cluster.sh: --nodes must be a whole number of NodeManagers (1 or more), not '$node_count'"
yarn_check_hadoop_version "$hadoop_version"
((!second_nn || with_hdfs)) || yarn_die "cluster.sh: --second-namenode goes with --hdfs"
((!second_nn || !hdfs_ha)) ||
  yarn_die "cluster.sh: --second-namenode does not go with --hdfs-ha (its ports are nn2's)"
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
# shellcheck source=scripts/yarn/hdfsha.sh
source "$here/hdfsha.sh"
# shellcheck source=scripts/yarn/s3a.sh
source "$here/s3a.sh"

# True when the cluster in $state was started with --secure.
state_is_secure() {
  [[ -s "$state/security" && $(<"$state/security") == kerberos ]]
}

# True when the cluster in $state was started with --second-namenode.
state_has_nn2() {
  [[ -d "$state/namenode2" ]]
}

# -- nodes -------------------------------------------------------------------

# The NodeManagers' addresses. One node shares the cluster's address (and
# keeps the names and directories of the state layout); N > 1 nodes take the
# N addresses after it, each a host of its own.
node_addresses_for() {
  local n=$1 prefix=${host%.*} last=${host##*.} i
  if ((n == 1)); then
    echo "$host"
    return
  fi
  ((last + n <= 254)) ||
    yarn_die "cluster.sh: --nodes $n does not fit after $host (the last node would be $prefix.$((last + n))); use a cluster address with a smaller last number"
  for ((i = 1; i <= n; i++)); do
    echo "$prefix.$((last + i))"
  done
}

# The cluster's node addresses: as it was started, else one node.
nodes=()
load_nodes() {
  if [[ -s "$state/node-addresses" ]]; then
    mapfile -t nodes <"$state/node-addresses"
  else
    nodes=("$host")
  fi
}
load_nodes

single_node() {
  ((${#nodes[@]} == 1))
}

# A NodeManager's daemon name (pid and log file): `nodemanager` for a
# single node, `nodemanager-<address>` for each of several.
nm_name() {
  if single_node; then echo nodemanager; else echo "nodemanager-$1"; fi
}

nm_names() {
  local node
  for node in "${nodes[@]}"; do
    nm_name "$node"
  done
}

# A node's local dirs (container working directories) and log dirs:
# nm-local/ and nm-logs/ of the state directory for a single node, their
# <address>/ subdirectories for each of several, so that everything of the
# containers stays under those two whatever the shape.
node_local_dir() {
  if single_node; then echo "$state/nm-local"; else echo "$state/nm-local/$1"; fi
}

node_log_dir() {
  if single_node; then echo "$state/nm-logs"; else echo "$state/nm-logs/$1"; fi
}

# A node's config directory: the cluster's for a single node,
# nodes/<address>/conf for each of several.
node_conf_dir() {
  if single_node; then echo "$conf"; else echo "$state/nodes/$1/conf"; fi
}

# -- nodes' clocks (TONY_YARN_NM_CLOCK) ---------------------------------------

# The nodes whose clock is off, as asked for (N:OFFSET[,N:OFFSET...]), or
# empty.
clock_knob=${TONY_YARN_NM_CLOCK:-}

# The same of the running cluster, or empty.
state_clock() {
  cat "$state/node-clock" 2>/dev/null || true
}

# Checks TONY_YARN_NM_CLOCK against the nodes to start.
check_clock_knob() {
  [[ -n "$clock_knob" ]] || return 0
  local item seen=" " one='[1-9][0-9]*:[+-][0-9]+[smhd]?'
  local -a items
  [[ "$clock_knob" =~ ^$one(,$one)*$ ]] ||
    yarn_die "cluster.sh: TONY_YARN_NM_CLOCK must be NODE:OFFSET[,NODE:OFFSET...], e.g. 3:+1h or 1:-30m,2:+2h (a node from 1 to --nodes; an offset of + or - a whole number of s, m, h or d), not '$clock_knob'"
  IFS=, read -r -a items <<<"$clock_knob"
  for item in "${items[@]}"; do
    [[ "$item" =~ ^([0-9]+): ]]
    ((BASH_REMATCH[1] <= node_count)) ||
      yarn_die "cluster.sh: TONY_YARN_NM_CLOCK names node ${BASH_REMATCH[1]}, but the cluster has ${node_count} (--nodes)"
    [[ "$seen" != *" ${BASH_REMATCH[1]} "* ]] ||
      yarn_die "cluster.sh: TONY_YARN_NM_CLOCK names node ${BASH_REMATCH[1]} twice"
    seen+="${BASH_REMATCH[1]} "
  done
  faketime_lib >/dev/null
}

# The offset of node ADDRESS's clock (arg 2: the knob, default the one asked
# for), or nothing.
clock_offset_of() {
  local address=$1 knob=${2-$clock_knob} item
  local -a items
  [[ -n "$knob" ]] || return 0
  IFS=, read -r -a items <<<"$knob"
  for item in "${items[@]}"; do
    if [[ "${nodes[$((${item%%:*} - 1))]}" == "$address" ]]; then
      echo "${item#*:}"
      return
    fi
  done
}

# "node 127.0.0.4's clock +1h off, node ..." of a knob (default the one
# asked for).
describe_clocks() {
  local knob=${1-$clock_knob} item out=""
  local -a items
  IFS=, read -r -a items <<<"$knob"
  for item in "${items[@]}"; do
    out+="${out:+, }node ${nodes[$((${item%%:*} - 1))]}'s clock ${item#*:} off"
  done
  echo "$out"
}

# libfaketime's path.
faketime_lib() {
  local lib
  if [[ -n "${TONY_FAKETIME_LIB:-}" ]]; then
    [[ -r "$TONY_FAKETIME_LIB" ]] ||
      yarn_die "cluster.sh: TONY_FAKETIME_LIB '$TONY_FAKETIME_LIB' is not a readable file"
    echo "$TONY_FAKETIME_LIB"
    return
  fi
  for lib in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 \
    /usr/local/lib/faketime/libfaketime.so.1; do
    if [[ -r "$lib" ]]; then
      echo "$lib"
      return
    fi
  done
  yarn_die "cluster.sh: TONY_YARN_NM_CLOCK needs libfaketime: apt-get install faketime (scripts/setup.sh installs it), or set TONY_FAKETIME_LIB"
}

# The environment that puts the NodeManager on the node's clock, NAME=VALUE
# a line: its wall clock (CLOCK_REALTIME, time(), gettimeofday) runs OFFSET
# away, and nothing else does, as on a real node whose NTP is off: file
# times stay true (NO_FAKE_STAT; the NodeManager compares them with what the
# client saw when it localizes a job's files), and so does the monotonic
# clock (FAKETIME_DONT_FAKE_MONOTONIC). libfaketime 0.9.10 then "fixes"
# pthread_cond_timedwait as if the monotonic clock were faked, unless
# FAKETIME_FORCE_MONOTONIC_FIX=0: with that fix the JVM's timed waits
# (Object.wait, parkNanos) return at once, every waiting thread spins, and
# the NodeManager had not registered after more than 5 minutes on a loaded
# machine, where the others took 31 s (doc/local-yarn.md). A frozen clock (the absolute
# "YYYY-MM-DD hh:mm:ss" form) never lets it start at all. Its containers
# run on the true clock: under libfaketime 0.9.10 no setting keeps both a
# C++ program's waits (std::condition_variable: tony-executor's heartbeat
# timer never fired with a faked monotonic clock) and Python's time.sleep
# (EINVAL with a true one) working.
clock_env() {
  local lib offset=$1
  lib=$(faketime_lib)
  echo "LD_PRELOAD=$lib"
  echo "FAKETIME=$offset"
  echo "FAKETIME_DONT_FAKE_MONOTONIC=1"
  echo "FAKETIME_FORCE_MONOTONIC_FIX=0"
  echo "NO_FAKE_STAT=1"
}

# Writes the program the NodeManager of node ADDRESS, whose clock is OFFSET
# off, starts under: the clock's environment, then TONY_YARN_NM_WRAPPER if
# any. Prints its path.
# shellcheck disable=SC2016 # the wrapper expands $LD_PRELOAD and $@, not us
write_clock_wrapper() {
  local address=$1 offset=$2 line
  local file="$state/run/clock-$address.sh"
  {
    echo "#!/bin/sh"
    echo "# Written by scripts/yarn/cluster.sh: node $address runs $offset off."
    while IFS= read -r line; do
      if [[ "$line" == LD_PRELOAD=* ]]; then
        printf 'export LD_PRELOAD=%q"${LD_PRELOAD:+:$LD_PRELOAD}"\n' "${line#*=}"
      else
        printf 'export %s=%q\n' "${line%%=*}" "${line#*=}"
      fi
    done < <(clock_env "$offset")
    if [[ -n "${TONY_YARN_NM_WRAPPER:-}" ]]; then
      printf 'exec %q "$@"\n' "$TONY_YARN_NM_WRAPPER"
    else
      echo 'exec "$@"'
    fi
  } >"$file"
  chmod +x "$file"
  echo "$file"
}

# -- processes ---------------------------------------------------------------

# True when a command line (one argument a line) is one of this cluster's
# JVMs or its KDC: the JVMs carry the marker, the KDC its pid file's path
# (-P). Matched in bash, not with grep, whose own arguments would hold the
# marker.
marks_ours() {
  [[ $'\n'"$1"$'\n' == *$'\n'"$marker"$'\n'* ||
    $'\n'"$1"$'\n' == *$'\n'"$state/pids/krb5kdc.pid"$'\n'* ]]
}

# True when pid runs and is one of this cluster's JVMs or its KDC (pids get
# reused).
is_our_daemon() {
  local args
  args=$(tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline") || return 1
  marks_ours "$args"
}

# The pid of daemon NAME from its pid file, when that daemon still runs
# there. A dead daemon's pid is given out again (pid_max may be 32768), also
# as the thread id of another process, whose /proc/<tid> shows that
# process's command line: the pid must be a process of its own, and carry
# the daemon's own name (launch's -Dproc_NAME; the KDC's own pid file), not
# only the cluster's marker. A daemon started through a wrapper
# (TONY_YARN_NM_WRAPPER, libfaketime's) execs several programs before the
# JVM, and while the kernel sets up the next one its /proc/<pid>/cmdline
# reads empty: read again while the process lives, for up to 1 s, rather
# than take it for dead.
daemon_pid() {
  local name=$1 pid key value args tries=0
  [[ -s "$state/pids/$name.pid" ]] || return 1
  pid=$(<"$state/pids/$name.pid") || return 1
  while :; do
    args=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    [[ -n "$args" ]] && break
    ((tries++ < 20)) && pid_alive "$pid" || return 1
    sleep 0.05
  done
  marks_ours "$args" || return 1
  [[ "$name" == krb5kdc || $'\n'"$args"$'\n' == *$'\n'"-Dproc_$name"$'\n'* ]] || return 1
  while read -r key value _; do
    [[ "$key" == Tgid: ]] && break
  done 2>/dev/null <"/proc/$pid/status" || return 1
  [[ "$value" == "$pid" ]] || return 1
  echo "$pid"
}

daemons_of_mode() {
  local kdc=""
  state_is_secure && kdc="krb5kdc "
  local nms ha=""
  nms=$(nm_names | tr '\n' ' ')
  state_is_ha && ha="$(ha_daemons) "
  if state_is_hdfs_ha; then
    state_is_ha || ha="zookeeper "
    echo "${kdc}${ha}$(hdfsha_daemons) resourcemanager ${nms% }"
  elif [[ -s "$state/mode" && $(<"$state/mode") == hdfs ]]; then
    local nn2=""
    state_has_nn2 && nn2="namenode2 "
    echo "${kdc}${ha}namenode ${nn2}datanode resourcemanager ${nms% }"
  else
    echo "${kdc}${ha}resourcemanager ${nms% }"
  fi
}

# Every process this cluster owns, daemons or containers, one pid a line:
# - JVMs carrying the marker (found even when a pid file is gone),
# - container processes: a NodeManager gives each container a working
#   directory under nm-local/ and LOG_DIRS under nm-logs/ (each node of
#   several its own subdirectory); a process that changed directory still
#   has that environment.
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

# Prints yarn-site.xml. Arg 2: the address of the NodeManager that reads
# it, or empty for the copy of the ResourceManager and clients of a
# cluster of several nodes.
yarn_site() {
  local classpath_file=$1 node=$2
  local memory=${TONY_YARN_NM_MEMORY_MB:-16384}
  local vcores=${TONY_YARN_NM_VCORES:-16}
  local expiry=${TONY_YARN_NM_EXPIRY:-10}
  # yarn.application.classpath: what a Java AM (e.g. DistributedShell) puts
  # on its classpath; there is no Hadoop install tree, so name the jars.
  local app_classpath
  app_classpath="$conf,$(tr ':' ',' <"$classpath_file")"
  xml_begin
  prop yarn.resourcemanager.hostname "$host"
  prop yarn.resourcemanager.address "$host:$rm_client_port"
  prop yarn.resourcemanager.scheduler.address "$host:$rm_scheduler_port"
  prop yarn.resourcemanager.resource-tracker.address "$host:$rm_tracker_port"
  prop yarn.resourcemanager.admin.address "$host:$rm_admin_port"
  prop yarn.resourcemanager.webapp.address "$host:$rm_web_port"
  prop yarn.resourcemanager.connect.retry-interval.ms 500
  prop yarn.resourcemanager.connect.max-wait.ms 60000
  # The RM declares a node LOST after this long without a heartbeat (600 s
  # by default): short, so that a test which kills a NodeManager sees the
  # RM agree within seconds.
  prop yarn.nm.liveness-monitor.expiry-interval-ms "$((expiry * 1000))"
  if [[ -n "$node" ]]; then
    prop yarn.nodemanager.hostname "$node"
    prop yarn.nodemanager.address "$node:$nm_port"
    # A node of its own binds its address only, and with a bind-host the
    # NodeManager takes its node id from yarn.nodemanager.address (else
    # from a reverse lookup of the address, which names 127.0.0.1
    # `localhost` and may wait on DNS).
    single_node || prop yarn.nodemanager.bind-host "$node"
    prop yarn.nodemanager.localizer.address "$node:$nm_localizer_port"
    prop yarn.nodemanager.webapp.address "$node:$nm_web_port"
    prop yarn.nodemanager.collector-service.address "$node:$nm_collector_port"
    prop yarn.nodemanager.local-dirs "$(node_local_dir "$node")"
    prop yarn.nodemanager.log-dirs "$(node_log_dir "$node")"
  fi
  prop yarn.nodemanager.resource.memory-mb "$memory"
  prop yarn.nodemanager.resource.cpu-vcores "$vcores"
  prop yarn.scheduler.minimum-allocation-mb 128
  prop yarn.scheduler.maximum-allocation-mb 8192
  prop yarn.scheduler.minimum-allocation-vcores 1
  prop yarn.scheduler.maximum-allocation-vcores 8
  prop yarn.nodemanager.vmem-check-enabled false
  # The physical memory check, as production clusters run it: the
  # NodeManager polls each container's process tree and kills one that
  # uses more than it asked for (exit status -104). With memory.enforced
  # (the default) it leaves that to the cgroups OOM killer and never kills
  # by itself; this cluster has no cgroups.
  prop yarn.nodemanager.pmem-check-enabled true
  prop yarn.nodemanager.resource.memory.enforced false
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
  # An ASan build keeps freed memory in a quarantine of 256 MiB by
  # default, on top of its shadow memory: an ASan tony-am that proxies
  # TensorBoard's 8 MB bundle a few times reached 530 MB, and the
  # NodeManager killed its 512 MB container (-104) mid-test. A quarantine of
  # 16 MiB still catches a use after a recent free; a binary without ASan
  # ignores the variable. The literal value goes in (the NodeManager has no
  # ASAN_OPTIONS of its own to expand).
  admin_env+=",ASAN_OPTIONS=quarantine_size_mb=16:thread_local_quarantine_size_kb=256"
  ((secure)) && admin_env+=",KRB5_CONFIG=$krb5_dir/krb5.conf"
  prop yarn.nodemanager.admin-env "$admin_env"
  # A nearly full disk would otherwise mark the node UNHEALTHY.
  prop yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage 99.9
  prop yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb 0
  prop yarn.nodemanager.disk-health-checker.min-free-space-per-disk-watermark-high-mb 0
  # Aggregated logs make `yarn logs -applicationId` work for finished apps.
  # With HDFS they go where production clusters put them (/tmp/logs on the
  # default filesystem), so tony-submit --logs reads them through WebHDFS;
  # the secure cluster keeps them on the local disk (its NodeManagers would
  # need HDFS superuser rights to create the root).
  prop yarn.log-aggregation-enable true
  if ((hdfs_ha && !secure)); then
    prop yarn.nodemanager.remote-app-log-dir "hdfs://$hdfsha_ns/tmp/logs"
  elif ((with_hdfs && !secure)); then
    prop yarn.nodemanager.remote-app-log-dir "hdfs://$host:$nn_port/tmp/logs"
  else
    prop yarn.nodemanager.remote-app-log-dir "file://$state/app-logs"
  fi
  # Keep container directories and local logs after an app ends, for
  # tests and debugging; stop removes the whole state directory anyway.
  prop yarn.nodemanager.delete.debug-delay-sec 3600
  prop yarn.nodemanager.resource-plugins ""
  prop yarn.application.classpath "$app_classpath"
  prop yarn.resourcemanager.scheduler.class \
    org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler
  # SchedulingRequests (YARN's placement constraints): tony asks a type capped
  # per node with its anti-affinity when the handler is not disabled.
  prop yarn.resourcemanager.placement-constraints.handler \
    "${TONY_YARN_PLACEMENT_CONSTRAINTS:-disabled}"
  if ((with_ha)); then
    ha_yarn_props
  else
    prop yarn.resourcemanager.recovery.enabled false
  fi
  prop yarn.timeline-service.enabled false
  prop yarn.webapp.ui2.enable false
  ((secure)) && secure_yarn_props "$node"
  xml_end
}

# A config directory per node of a cluster of several: the cluster's files
# (written first, TLS included) with the node's own yarn-site.xml.
write_node_confs() {
  local classpath_file=$1 node dir
  single_node && return 0
  for node in "${nodes[@]}"; do
    dir=$(node_conf_dir "$node")
    mkdir -p "$dir" "$(node_local_dir "$node")" "$(node_log_dir "$node")"
    cp -p "$conf"/* "$dir/"
    yarn_site "$classpath_file" "$node" >"$dir/yarn-site.xml"
  done
}

# hdfs-site.xml of a NameNode (and of the DataNode and clients, for the
# first one) on stdout.
#   hdfs_site RPC_PORT HTTP_PORT HTTPS_PORT NAME_DIR
hdfs_site() {
  local rpc_port=$1 http_port=$2 https_port=$3 name_dir=$4
  xml_begin
  if ((hdfs_ha)); then
    # The nameservice's addresses, suffixed; no NameNode without them.
    hdfsha_hdfs_props
    https_port=""
  else
    prop dfs.namenode.rpc-address "$host:$rpc_port"
    prop dfs.namenode.http-address "$host:$http_port"
    prop dfs.namenode.name.dir "file://$name_dir"
  fi
  prop dfs.datanode.address "$host:$dn_port"
  prop dfs.datanode.http.address "$host:$dn_http_port"
  prop dfs.datanode.ipc.address "$host:$dn_ipc_port"
  if ((secure)); then
    secure_hdfs_props "$https_port"
  else
    prop dfs.permissions.enabled false
  fi
  prop dfs.datanode.hostname "$host"
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
}

write_config() {
  local classpath_file=$1 java_home=$2
  local gpus=${TONY_YARN_NM_GPUS:-4}
  local default_fs="file:///"
  ((with_hdfs)) && default_fs="hdfs://$host:$nn_port"
  ((hdfs_ha)) && default_fs="hdfs://$hdfsha_ns"
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
    ((hdfs_ha)) && hdfsha_core_props
    xml_end
  } >"$conf/core-site.xml"

  # One node: its NodeManager reads the cluster's yarn-site.xml. Several:
  # the cluster's names no NodeManager; each node gets its own copy of the
  # config directory (write_node_confs).
  if single_node; then
    yarn_site "$classpath_file" "$host" >"$conf/yarn-site.xml"
  else
    yarn_site "$classpath_file" "" >"$conf/yarn-site.xml"
  fi

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
    # TONY_YARN_ASYNC_SCHEDULING=1: containers placed from the scheduler's
    # own thread rather than on each node's heartbeat (bench/notes.md,
    # spread against packed placement at 8 tasks).
    [[ ${TONY_YARN_ASYNC_SCHEDULING:-0} == 1 ]] &&
      prop yarn.scheduler.capacity.schedule-asynchronously.enable true
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

  hdfs_site "$nn_port" "$nn_http_port" "$nn_https_port" "$state/hdfs/name" \
    >"$conf/hdfs-site.xml"

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
  if ((second_nn)); then mkdir -p "$state/namenode2"; fi
  ((secure)) && echo kerberos >"$state/security" || echo simple >"$state/security"
  ((secure)) && write_policy
  echo "$rpc_protection" >"$state/rpc-protection"
  echo "$host" >"$state/host"
  if ((with_ha)); then ha_write_zk_conf; elif ((hdfs_ha)); then ha_write_zoo_cfg; fi
  printf '%s\n' "${nodes[@]}" >"$state/node-addresses"
  if [[ -n "$clock_knob" ]]; then echo "$clock_knob" >"$state/node-clock"; fi
  echo "$hadoop_version" >"$state/hadoop-version"
}

# The second NameNode's config directory (--second-namenode): the
# cluster's, with its own ports and name dir, and fs.defaultFS naming it.
# After make_tls: it takes the cluster's ssl-server.xml too.
write_namenode2_conf() {
  local dir="$state/namenode2/conf" file
  mkdir -p "$dir"
  for file in "$conf"/*; do
    if [[ -f "$file" ]]; then cp -p "$file" "$dir/"; fi
  done
  hdfs_site "$nn2_port" "$nn2_http_port" "$nn2_https_port" "$state/namenode2/name" \
    >"$dir/hdfs-site.xml"
  sed -i "s#hdfs://$host:$nn_port#hdfs://$host:$nn2_port#" "$dir/core-site.xml"
}

# -- daemons -----------------------------------------------------------------

# Writes a JVM argument file for a daemon; `java @file` keeps ps readable.
# Arg 3: its config directory (default: the cluster's).
write_jvm_args() {
  local name=$1 heap=$2 dir=${3:-$conf}
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
    echo "-Dlog4j.configuration=file:$dir/log4j.properties"
    if state_is_secure; then
      echo "-Djava.security.krb5.conf=$krb5_dir/krb5.conf"
    fi
    if [[ -s "$state/run/native-dir" ]]; then
      echo "-Djava.library.path=$(<"$state/run/native-dir")"
    fi
    echo "-cp"
    echo "$dir:$state/run/resources:$(<"$conf/hadoop-classpath.txt")"
  } >"$file"
  echo "$file"
}

# Starts one daemon in its own session, detached from the caller's terminal
# and pipes (a caller reading our stdout must not wait for the daemons).
#   launch NAME CLASS [ARGS...]
# with, in the environment of the call, DAEMON_CONF (its config directory,
# default the cluster's), DAEMON_HEAP (default 512m), DAEMON_WRAPPER (a
# program to start it under, which must exec its arguments) and DAEMON_NODE
# (a NodeManager's address, exported to the wrapper as TONY_YARN_NM_NODE).
launch() {
  local name=$1 class=$2
  shift 2
  local dir=${DAEMON_CONF:-$conf} args java java_home
  local -a wrapper=()
  [[ -n "${DAEMON_WRAPPER:-}" ]] && wrapper=("$DAEMON_WRAPPER")
  args=$(write_jvm_args "$name" "${DAEMON_HEAP:-512m}" "$dir")
  java=$(yarn_java)
  java_home=$(<"$conf/java-home.txt")
  mkdir -p "$state/logs" "$state/pids"
  (
    cd "$state"
    export HADOOP_CONF_DIR="$dir" JAVA_HOME="$java_home"
    export HADOOP_HOME="$state" HADOOP_COMMON_HOME="$state"
    [[ -n "${DAEMON_NODE:-}" ]] && export TONY_YARN_NM_NODE="$DAEMON_NODE"
    exec setsid "${wrapper[@]}" "$java" "@$args" "$marker" -Dproc_"$name" "$class" "$@" \
      </dev/null >>"$state/logs/$name.log" 2>&1
  ) &
  echo $! >"$state/pids/$name.pid"
  # A check before the exec would take the daemon for dead; one that died
  # is reported by the caller's wait loop.
  wait_exec $! || true
}

# Starts the NodeManager of every node, each with its config directory.
# The nodes of TONY_YARN_NM_CLOCK start under libfaketime.
launch_nodemanagers() {
  local node
  for node in "${nodes[@]}"; do
    launch_nodemanager "$node"
  done
}

launch_nodemanager() {
  local node=$1 wrapper=${TONY_YARN_NM_WRAPPER:-} offset
  offset=$(clock_offset_of "$node")
  [[ -n "$offset" ]] && wrapper=$(write_clock_wrapper "$node" "$offset")
  DAEMON_CONF="$(node_conf_dir "$node")" DAEMON_HEAP="${TONY_YARN_NM_HEAP_MB:-256}m" \
    DAEMON_WRAPPER="$wrapper" DAEMON_NODE="$node" \
    launch "$(nm_name "$node")" org.apache.hadoop.yarn.server.nodemanager.NodeManager
}

# Formats the storage of a NameNode (name: namenode or namenode2) whose
# config is in dir.
format_namenode() {
  local name=$1 dir=$2 fmt_args java
  fmt_args=$(write_jvm_args "$name-format" 256m "$dir")
  java=$(yarn_java)
  if ! (cd "$state" && HADOOP_CONF_DIR="$dir" "$java" "@$fmt_args" "$marker" \
    org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive -force \
    </dev/null >"$state/logs/$name-format.log" 2>&1); then
    show_log_tail "$name-format"
    local why="formatting the NameNode ($name) failed (log: $state/logs/$name-format.log)"
    ((secure)) && fail_start "$why" # stops the KDC
    yarn_die "cluster.sh: $why"
  fi
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

# True when something listens on address $1, port $2.
port_in_use() {
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# Exits 1 naming the first port of the cluster-to-be that is taken.
check_ports_free() {
  local -a ports=("${rm_ports[@]}")
  local port node
  if ((secure)); then
    # HTTPS only: the HTTP ports of the NameNode and DataNode stay closed.
    ports+=("$kdc_port")
    ((with_hdfs && !hdfs_ha)) && ports+=("$nn_port" "$nn_https_port" "$dn_port" "$dn_https_port" "$dn_ipc_port")
    ((second_nn)) && ports+=("$nn2_port" "$nn2_https_port")
  else
    ((with_hdfs && !hdfs_ha)) && ports+=("${hdfs_ports[@]}")
    ((second_nn)) && ports+=("$nn2_port" "$nn2_http_port")
  fi
  local -a taken=()
  local hp
  if ((hdfs_ha)); then
    for hp in $(hdfsha_ports) "$host:$zk_port"; do
      port_in_use "${hp%:*}" "${hp#*:}" && taken+=("$hp")
    done
  fi
  for port in "${ports[@]}"; do
    port_in_use "$host" "$port" && taken+=("$host:$port")
  done
  for node in "${nodes[@]}"; do
    for port in "${nm_ports[@]}"; do
      port_in_use "$node" "$port" && taken+=("$node:$port")
    done
  done
  if ((with_ha)); then
    ((secure)) && yarn_die "cluster.sh: --ha does not go with --secure yet"
    for hp in $(ha_ports); do
      port_in_use "${hp%:*}" "${hp#*:}" && taken+=("$hp")
    done
  fi
  ((${#taken[@]} == 0)) ||
    yarn_die "cluster.sh: port ${taken[0]} is in use (another cluster? 'cluster.sh status', or find its owner with 'fuser -n tcp ${taken[0]##*:}')"
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

# The web endpoint of the NameNode, or with arg 2 of the second one:
# HTTPS only on a secure cluster.
nn_web_url() {
  if state_is_secure; then
    [[ "${1:-}" == 2 ]] && echo "https://$host:$nn2_https_port" || echo "https://$host:$nn_https_port"
  else
    [[ "${1:-}" == 2 ]] && echo "http://$host:$nn2_http_port" || echo "http://$host:$nn_http_port"
  fi
}

# Prints the RUNNING node count from the RM REST API, or nothing.
running_nodes() {
  local web="http://$host:$rm_web_port"
  if state_is_ha; then web=$(ha_active_web) || return 0; fi
  cluster_curl -sf -m 3 "$web/ws/v1/cluster/nodes?states=RUNNING" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); n=(d.get("nodes") or {}).get("node") or []; print(len(n))' 2>/dev/null || true
}

# Prints "live-datanodes state" from the NameNode's JMX (arg 2: the second
# one's), e.g. "1 Operational".
namenode_state() {
  cluster_curl -sf -m 3 "$(nn_web_url "${1:-}")/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" 2>/dev/null |
    python3 -c 'import json,sys; b=json.load(sys.stdin)["beans"][0]; print(b["NumLiveDataNodes"], b["FSState"])' 2>/dev/null || true
}

# Arg 1: 1 to let the NameNodes of --hdfs-ha be down (a test kills them;
# the cluster is still there for `env` and `conf-dir`).
all_running() {
  local name lenient=${1:-0}
  for name in $(daemons_of_mode); do
    if ((lenient)) && state_is_hdfs_ha && [[ "$name" == namenode || "$name" == namenode-nn2 ]]; then
      continue
    fi
    daemon_pid "$name" >/dev/null || return 1
  done
}

any_running() {
  local name
  for name in krb5kdc zookeeper $(hdfsha_daemons) namenode2 resourcemanager resourcemanager2 $(nm_names); do
    daemon_pid "$name" >/dev/null && return 0
  done
  return 1
}

# True when the running cluster is the one `start` was asked for.
same_cluster() {
  [[ "$((with_hdfs))" -eq "$([[ $(<"$state/mode") == hdfs ]] && echo 1 || echo 0)" ]] &&
    [[ "$((secure))" -eq "$(state_is_secure && echo 1 || echo 0)" ]] &&
    [[ "$((with_ha))" -eq "$(state_is_ha && echo 1 || echo 0)" ]] &&
    [[ "$((hdfs_ha))" -eq "$(state_is_hdfs_ha && echo 1 || echo 0)" ]] &&
    [[ "$((second_nn))" -eq "$(state_has_nn2 && echo 1 || echo 0)" ]] &&
    [[ "$(cat "$state/rpc-protection" 2>/dev/null || echo authentication)" == "$rpc_protection" ]] &&
    [[ "${#nodes[@]}" -eq "$node_count" ]] &&
    [[ "$(state_clock)" == "$clock_knob" ]] &&
    [[ "$(cat "$state/hadoop-version" 2>/dev/null || echo "$yarn_default_hadoop_version")" == "$hadoop_version" ]]
}

start_cluster() {
  if [[ -d "$state" ]] && any_running; then
    if all_running && same_cluster; then
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

  local t0=$SECONDS node_list
  node_list=$(node_addresses_for "$node_count")
  mapfile -t nodes <<<"$node_list"
  ((secure)) && secure_check_tools
  [[ -z "${TONY_YARN_NM_WRAPPER:-}" || -x "${TONY_YARN_NM_WRAPPER}" ]] ||
    yarn_die "cluster.sh: TONY_YARN_NM_WRAPPER '$TONY_YARN_NM_WRAPPER' is not an executable program"
  check_clock_knob
  check_ports_free
  command -v curl >/dev/null || yarn_die "cluster.sh: curl not found (scripts/setup.sh installs it)"
  command -v python3 >/dev/null || yarn_die "cluster.sh: python3 not found"

  local classpath_file java_home
  classpath_file=$(yarn_resolve_classpath 0 "$hadoop_version")
  java_home=$(yarn_java_home)

  # A stale state directory (crashed cluster, kept logs) starts over.
  rm -rf "$state"
  mkdir -p "$state"/{conf,logs,pids,run,nm-local,nm-logs,app-logs,tmp}
  write_config "$classpath_file" "$java_home"
  if ((secure)) || [[ ${TONY_YARN_NATIVE:-0} == 1 ]]; then
    yarn_resolve_native >"$state/run/native-dir"
  fi
  if ((secure)); then
    save_token_lifetimes
    # The KDC first: the NameNode logs in to format its storage.
    write_krb5_conf
    create_realm
    start_kdc
    ((with_hdfs)) && make_tls
  fi
  write_node_confs "$classpath_file"
  if [[ -n "$s3a_endpoint" ]]; then s3a_configure "$s3a_endpoint" "$hadoop_version"; fi

  if ((with_ha || hdfs_ha)); then
    ha_start_zookeeper || fail_start "ZooKeeper did not start (log: $state/logs/zookeeper.log)"
  fi
  if ((hdfs_ha)); then
    hdfsha_start
  elif ((with_hdfs)); then
    mkdir -p "$state/hdfs"
    format_namenode namenode "$conf"
    launch namenode org.apache.hadoop.hdfs.server.namenode.NameNode
    launch datanode org.apache.hadoop.hdfs.server.datanode.DataNode
  fi
  if ((second_nn)); then
    write_namenode2_conf
    format_namenode namenode2 "$state/namenode2/conf"
    DAEMON_CONF="$state/namenode2/conf" launch namenode2 \
      org.apache.hadoop.hdfs.server.namenode.NameNode
  fi
  if ((with_ha)); then
    ha_launch_rm rm1
    ha_launch_rm rm2
  else
    launch resourcemanager org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
  fi
  launch_nodemanagers

  local timeout=${TONY_YARN_START_TIMEOUT:-90}
  local deadline=$((SECONDS + timeout)) name running hdfs_ok=1 nn2_ok=1
  ((with_hdfs)) && hdfs_ok=0
  ((second_nn)) && nn2_ok=0
  while :; do
    for name in $(daemons_of_mode); do
      daemon_pid "$name" >/dev/null ||
        fail_start "the $name exited during start (log: $state/logs/$name.log)"
    done
    running=$(running_nodes)
    if ((!hdfs_ok)); then
      if ((hdfs_ha)); then
        hdfsha_ready && hdfs_ok=1
      elif [[ $(namenode_state) == "1 Operational" ]]; then
        hdfs_ok=1
      fi
    fi
    # No DataNode reports to the second NameNode: it is up once out of
    # safe mode.
    if ((!nn2_ok)) && [[ $(namenode_state 2) == "0 Operational" ]]; then
      nn2_ok=1
    fi
    [[ "$running" == "${#nodes[@]}" ]] && ((hdfs_ok && nn2_ok)) && break
    ((SECONDS < deadline)) ||
      fail_start "${running:-no} of ${#nodes[@]} nodes RUNNING$( ((hdfs_ok)) || echo " or no live DataNode")$( ((nn2_ok)) || echo " or the second NameNode not operational") after ${timeout}s; see $state/logs"
    sleep 0.5
  done
  if ((secure && hdfs_ha)); then
    bootstrap_hdfs_dirs "$(hdfsha_web_url "$(hdfsha_active)")"
  elif ((secure && with_hdfs)); then
    bootstrap_hdfs_dirs "https://$host:$nn_https_port"
  fi
  ((secure && second_nn)) && bootstrap_hdfs_dirs "https://$host:$nn2_https_port"
  local mode=""
  ((secure)) && mode=" (Kerberos realm $krb5_realm, KDC $host:$kdc_port, rpc protection $rpc_protection)"
  ((with_ha)) && mode=" (HA: $(ha_states), ZooKeeper $host:$zk_port)"
  ((hdfs_ha)) && mode+=" (HDFS HA hdfs://$hdfsha_ns: $(hdfsha_states))"
  [[ -n "$clock_knob" ]] && mode+=" ($(describe_clocks))"
  yarn_log "cluster.sh: $(daemons_of_mode | sed 's/ /, /g') running after $((SECONDS - t0))s$mode; Hadoop $hadoop_version, RM http://$host:$rm_web_port, nodes ${nodes[*]}, state $state"
  echo "$conf"
}

# -- stop --------------------------------------------------------------------

# Arg 1: 1 to keep the state directory.
stop_cluster() {
  local keep_state=${1:-0}
  local -a pids
  # NodeManagers first: they stop their containers on the way down.
  local name pid
  local -a nms=()
  for name in $(nm_names); do
    pid=$(daemon_pid "$name") || continue
    kill -TERM "$pid" 2>/dev/null || true
    nms+=("$pid")
  done
  ((${#nms[@]} == 0)) || wait_gone 10 "${nms[@]}" || true
  for name in resourcemanager resourcemanager2 zkfc-nn1 zkfc-nn2 zookeeper datanode namenode \
    namenode-nn2 namenode2 journalnode1 journalnode2 journalnode3 krb5kdc; do
    pid=$(daemon_pid "$name") || continue
    kill -TERM "$pid" 2>/dev/null || true
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
  for name in krb5kdc zookeeper $(hdfsha_daemons) namenode2 resourcemanager resourcemanager2 $(nm_names); do
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
    echo "nodes:   $(running_nodes) of ${#nodes[@]} RUNNING: ${nodes[*]} (http://$host:$rm_web_port/cluster/nodes)"
    echo "hadoop:  $(cat "$state/hadoop-version" 2>/dev/null || echo "$yarn_default_hadoop_version")"
    if state_is_hdfs_ha; then
      echo "hdfs:    hdfs://$hdfsha_ns (HA: $(hdfsha_states); nn1 $host:$nn_port, nn2 $host:$hdfsha_nn2_port)"
    elif [[ $(<"$state/mode") == hdfs ]]; then
      echo "hdfs:    hdfs://$host:$nn_port (live datanodes, state: $(namenode_state))"
      if state_has_nn2; then
        echo "hdfs 2:  hdfs://$host:$nn2_port (namespace only; live datanodes, state: $(namenode_state 2))"
      fi
    fi
    if state_is_ha; then
      echo "ha:      $(ha_states), ZooKeeper $host:$zk_port"
    fi
    if state_is_secure; then
      echo "secure:  Kerberos realm $krb5_realm, KDC $host:$kdc_port, user $(secure_user_principal), rpc protection $(<"$state/rpc-protection")"
    fi
    if [[ -n "$(state_clock)" ]]; then
      echo "clocks:  $(describe_clocks "$(state_clock)") (TONY_YARN_NM_CLOCK=$(state_clock))"
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
  nm-start)
    [[ -n "${nm_addr:-}" ]] || yarn_die "cluster.sh: nm-start needs a node's address (one of: ${nodes[*]})"
    printf '%s\n' "${nodes[@]}" | grep -qxF -- "$nm_addr" ||
      yarn_die "cluster.sh: $nm_addr is no node of the cluster in $state (its nodes: ${nodes[*]})"
    nm=$(nm_name "$nm_addr")
    daemon_pid "$nm" >/dev/null && yarn_die "cluster.sh: the NodeManager of $nm_addr already runs"
    launch_nodemanager "$nm_addr"
    yarn_log "cluster.sh: the NodeManager of $nm_addr started (log: $state/logs/$nm.log)"
    ;;
  zk-start)
    state_is_ha || yarn_die "cluster.sh: zk-start needs an --ha cluster in $state"
    daemon_pid zookeeper >/dev/null && yarn_die "cluster.sh: ZooKeeper already runs"
    ha_start_zookeeper || yarn_die "cluster.sh: ZooKeeper did not start; see $state/logs/zookeeper.log"
    yarn_log "cluster.sh: ZooKeeper started on $host:$zk_port"
    ;;
  nn-active)
    state_is_hdfs_ha || yarn_die "cluster.sh: nn-active needs an --hdfs-ha cluster in $state"
    hdfsha_active || {
      yarn_log "cluster.sh: no NameNode is active ($(hdfsha_states))"
      exit 3
    }
    ;;
  nn-kill-active)
    state_is_hdfs_ha || yarn_die "cluster.sh: nn-kill-active needs an --hdfs-ha cluster in $state"
    nn_id=$(hdfsha_active) || {
      yarn_log "cluster.sh: no NameNode is active ($(hdfsha_states))"
      exit 3
    }
    nn_pid=$(daemon_pid "$(hdfsha_nn_daemon "$nn_id")") ||
      yarn_die "cluster.sh: $nn_id answers as active but its process is not this cluster's"
    kill -KILL "$nn_pid"
    wait_gone 10 "$nn_pid" || yarn_die "cluster.sh: $nn_id (pid $nn_pid) survived SIGKILL"
    yarn_log "cluster.sh: killed the active NameNode $nn_id (pid $nn_pid) with SIGKILL"
    echo "$nn_id"
    ;;
  nn-wait-active)
    state_is_hdfs_ha || yarn_die "cluster.sh: nn-wait-active needs an --hdfs-ha cluster in $state"
    hdfsha_wait_active "${TONY_YARN_START_TIMEOUT:-90}" || {
      yarn_log "cluster.sh: no NameNode became active within ${TONY_YARN_START_TIMEOUT:-90}s ($(hdfsha_states))"
      exit 3
    }
    ;;
  nn-start)
    state_is_hdfs_ha || yarn_die "cluster.sh: nn-start needs an --hdfs-ha cluster in $state"
    [[ -n "${nn_id:-}" ]] || yarn_die "cluster.sh: nn-start needs nn1 or nn2"
    nn_name=$(hdfsha_nn_daemon "$nn_id")
    daemon_pid "$nn_name" >/dev/null && yarn_die "cluster.sh: $nn_id already runs"
    DAEMON_CONF="$state/conf-$nn_id" DAEMON_HEAP=256m launch "$nn_name" \
      org.apache.hadoop.hdfs.server.namenode.NameNode
    yarn_log "cluster.sh: $nn_id started (log: $state/logs/$nn_name.log); its ZKFC makes it standby, or active when the other is down"
    ;;
  conf-dir)
    all_running 1 || yarn_die "cluster.sh: no cluster runs in $state; start one with 'cluster.sh start'"
    echo "$conf"
    ;;
  env)
    all_running 1 || yarn_die "cluster.sh: no cluster runs in $state; start one with 'cluster.sh start'"
    # The address the cluster was started on, whatever the caller's is.
    addr=$(cat "$state/host" 2>/dev/null || echo "$host")
    printf 'export %s=%q\n' HADOOP_CONF_DIR "$conf" TONY_YARN_DIR "$state" TONY_YARN_HOST "$addr" \
      TONY_YARN_NODES "${nodes[*]}" \
      TONY_HADOOP_VERSION "$(cat "$state/hadoop-version" 2>/dev/null || echo "$yarn_default_hadoop_version")"
    if [[ -n "$(state_clock)" ]]; then printf 'export %s=%q\n' TONY_YARN_NM_CLOCK "$(state_clock)"; fi
    if state_is_ha; then printf 'export %s=%q\n' TONY_YARN_RM2_HOST "$rm2_host"; fi
    if state_has_nn2; then printf 'export %s=%q\n' TONY_YARN_NAMENODE2 "hdfs://$addr:$nn2_port"; fi
    if state_is_hdfs_ha; then
      printf 'export %s=%q\n' TONY_HDFS_NAMESERVICE "$hdfsha_ns" \
        TONY_HDFS_NN1 "$addr:$nn_port" TONY_HDFS_NN2 "$addr:$hdfsha_nn2_port" \
        TONY_HDFS_NN1_WEB "$(hdfsha_web_url nn1)" TONY_HDFS_NN2_WEB "$(hdfsha_web_url nn2)" \
        TONY_ZOOKEEPER "$addr:$zk_port"
    fi
    if state_is_secure; then secure_env_lines "$addr"; fi
    if state_has_s3a; then s3a_env_lines; fi
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
