# shellcheck shell=bash disable=SC2154 # host, state, conf, the ports: cluster.sh's
# ResourceManager HA for cluster.sh --ha; sourced by cluster.sh, never run.
#
# Two ResourceManagers (rm1 on $host, rm2 on $rm2_host) with automatic
# failover (the embedded elector) and recovery from a ZooKeeper state store
# (ZKRMStateStore, work-preserving: running containers survive a failover),
# one standalone ZooKeeper on $host:$zk_port (ZooKeeperServerMain, from the
# zookeeper jar already on Hadoop's classpath), and NodeManagers that follow
# the active RM. Each RM reads conf-<id>/ (the cluster's conf plus its own
# yarn.resourcemanager.ha.id: on one machine both addresses are local, so
# an RM cannot tell its id from its address). The state directory keeps
# `ha` (a marker), conf-rm1/, conf-rm2/ and zookeeper/ besides the rest.
#
# Expects from cluster.sh: $state, $conf, $host, the port variables, launch,
# daemon_pid, yarn_die, yarn_log.

readonly zk_port=2181
# The second RM's loopback address: 127.A.B.C -> 127.(A+1).B.C, so clusters
# on different addresses keep apart (TONY_YARN_RM2_HOST overrides it).
ha_default_rm2_host() {
  local a b c
  IFS=. read -r _ a b c <<<"$host"
  echo "127.$(((a + 1) % 256)).$b.$c"
}
readonly rm2_host=${TONY_YARN_RM2_HOST:-$(ha_default_rm2_host)}
[[ "$rm2_host" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ && "$rm2_host" != "$host" ]] || {
  echo "cluster.sh: TONY_YARN_RM2_HOST must be a loopback address 127.x.y.z other than $host, not '$rm2_host'" >&2
  exit 1
}

state_is_ha() {
  [[ -s "$state/ha" && $(<"$state/ha") == ha ]]
}

# The RM daemons of an HA cluster beyond the first, and ZooKeeper.
ha_daemons() {
  state_is_ha && echo "zookeeper resourcemanager2"
  return 0
}

# "host:port" pairs that must be free before an HA cluster starts.
ha_ports() {
  echo "$host:$zk_port"
  local port
  for port in "$rm_client_port" "$rm_scheduler_port" "$rm_tracker_port" \
    "$rm_admin_port" "$rm_web_port"; do
    echo "$rm2_host:$port"
  done
}

ha_rm_host() {
  [[ "$1" == rm1 ]] && echo "$host" || echo "$rm2_host"
}

# yarn-site.xml properties of RM HA (after the single-RM ones: later wins
# only where Hadoop reads the suffixed keys, which it does with HA on).
ha_yarn_props() {
  local id rm
  prop yarn.resourcemanager.ha.enabled true
  prop yarn.resourcemanager.ha.rm-ids rm1,rm2
  prop yarn.resourcemanager.cluster-id tony-test
  prop yarn.resourcemanager.ha.automatic-failover.enabled true
  prop yarn.resourcemanager.ha.automatic-failover.embedded true
  for id in rm1 rm2; do
    rm=$(ha_rm_host "$id")
    prop "yarn.resourcemanager.hostname.$id" "$rm"
    prop "yarn.resourcemanager.address.$id" "$rm:$rm_client_port"
    prop "yarn.resourcemanager.scheduler.address.$id" "$rm:$rm_scheduler_port"
    prop "yarn.resourcemanager.resource-tracker.address.$id" "$rm:$rm_tracker_port"
    prop "yarn.resourcemanager.admin.address.$id" "$rm:$rm_admin_port"
    prop "yarn.resourcemanager.webapp.address.$id" "$rm:$rm_web_port"
  done
  prop hadoop.zk.address "$host:$zk_port"
  # A dead RM's ZooKeeper session (and its leadership) ends within 4 s.
  prop hadoop.zk.timeout-ms 4000
  prop yarn.resourcemanager.recovery.enabled true
  prop yarn.resourcemanager.store.class \
    org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore
  prop yarn.resourcemanager.work-preserving-recovery.enabled true
  # The restarted RM waits this long for the NodeManagers' container
  # reports before it schedules (default 10 s).
  prop yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms 2000
  # Clients and NodeManagers try the other RM quickly.
  prop yarn.client.failover-sleep-base-ms 200
  prop yarn.client.failover-sleep-max-ms 1000
}

# zoo.cfg of the standalone ZooKeeper (also --hdfs-ha's, for its ZKFCs).
ha_write_zoo_cfg() {
  mkdir -p "$state/zookeeper"
  cat >"$conf/zoo.cfg" <<ZOO
# Written by scripts/yarn/cluster.sh (--ha, --hdfs-ha): one standalone ZooKeeper.
tickTime=500
dataDir=$state/zookeeper
clientPort=$zk_port
clientPortAddress=$host
maxClientCnxns=100
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
ZOO
}

ha_write_zk_conf() {
  ha_write_zoo_cfg
  local id
  for id in rm1 rm2; do
    rm -rf "$state/conf-$id"
    cp -r "$conf" "$state/conf-$id"
    sed -i "s#</configuration>#  <property><name>yarn.resourcemanager.ha.id</name><value>$id</value></property>\n</configuration>#" \
      "$state/conf-$id/yarn-site.xml"
  done
  echo ha >"$state/ha"
}

# Starts ZooKeeper and waits until it serves (up to 30 s).
ha_start_zookeeper() {
  launch zookeeper org.apache.zookeeper.server.ZooKeeperServerMain "$conf/zoo.cfg"
  local deadline=$((SECONDS + 30))
  until (exec 3<>"/dev/tcp/$host/$zk_port") 2>/dev/null; do
    daemon_pid zookeeper >/dev/null || return 1
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# Starts the RM `id` (rm1 or rm2) with its own conf dir: `conf` is local
# here, and bash's dynamic scope hands it to launch and write_jvm_args.
ha_launch_rm() {
  local id=$1 name=resourcemanager
  [[ "$id" == rm2 ]] && name=resourcemanager2
  local conf="$state/conf-$id"
  launch "$name" org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
}

# The web address of the active RM, or nothing.
ha_active_web() {
  local id rm
  for id in rm1 rm2; do
    rm=$(ha_rm_host "$id")
    if curl -sf -m 3 "http://$rm:$rm_web_port/ws/v1/cluster/info" 2>/dev/null |
      grep -q '"haState":"ACTIVE"'; then
      echo "http://$rm:$rm_web_port"
      return 0
    fi
  done
  return 1
}

# Prints "rm1=ACTIVE rm2=STANDBY"-style states (DOWN when it does not answer).
ha_states() {
  local id rm st out=""
  for id in rm1 rm2; do
    rm=$(ha_rm_host "$id")
    st=$(curl -sf -m 3 "http://$rm:$rm_web_port/ws/v1/cluster/info" 2>/dev/null |
      sed -n 's/.*"haState":"\([A-Z]*\)".*/\1/p')
    out+="$id=${st:-DOWN} "
  done
  echo "${out% }"
}
