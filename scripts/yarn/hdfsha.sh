# shellcheck shell=bash disable=SC2154 # host, state, conf, the ports: cluster.sh's
# HDFS HA for cluster.sh --hdfs-ha; sourced by cluster.sh, never run.
#
# One nameservice, `tonyns` (fs.defaultFS = hdfs://tonyns), as a production
# cluster names its file system:
#   nn1   NameNode on $host:9000 (HTTP 9870, HTTPS 9871 when --secure)
#   nn2   NameNode on $host:9010 (HTTP 9876, HTTPS 9877 when --secure)
#   three JournalNodes holding the shared edits (qjournal://), on $host
#         ports 8485, 8495 and 8505 (HTTP 8480, 8490, 8500; HTTPS 8481,
#         8491, 8501 when --secure)
#   two ZKFCs (DFSZKFailoverController, one per NameNode, ports 8019 and
#         8029): automatic failover through the ZooKeeper of ha.sh on
#         $host:2181 (started for --hdfs-ha even without --ha)
#   one DataNode, reporting to both NameNodes
# Fencing is shell(/bin/true): both NameNodes run on this machine, and the
# JournalNodes already refuse the writes of a NameNode that lost its epoch.
#
# Every daemon reads the cluster's conf/ except the NameNodes and their
# ZKFCs, which read conf-nn1/ or conf-nn2/ (the same files plus
# dfs.ha.namenode.id: both NameNodes' addresses are local, so a NameNode
# cannot tell its id from its address), and the JournalNodes, which read
# conf-jn1/ .. conf-jn3/ (their own ports and edits directory). The state
# directory keeps `hdfs-ha` (the nameservice's name), hdfs/nn1, hdfs/nn2
# (name dirs) and hdfs/journal1..3 besides the rest.
#
# Expects from cluster.sh: $state, $conf, $host, $secure, the NameNode and
# DataNode ports, launch, daemon_pid, format_namenode, fail_start,
# cluster_curl, prop, yarn_die, yarn_log.

readonly hdfsha_ns=tonyns
readonly hdfsha_nn2_port=9010 hdfsha_nn2_http_port=9876 hdfsha_nn2_https_port=9877
readonly hdfsha_zkfc1_port=8019 hdfsha_zkfc2_port=8029
readonly hdfsha_jn_ports=(8485 8495 8505) hdfsha_jn_http_ports=(8480 8490 8500)
readonly hdfsha_jn_https_ports=(8481 8491 8501)

state_is_hdfs_ha() {
  [[ -s "$state/hdfs-ha" ]]
}

# The HDFS daemons of an HA cluster, in start order.
hdfsha_daemons() {
  echo "journalnode1 journalnode2 journalnode3 namenode namenode-nn2 zkfc-nn1 zkfc-nn2 datanode"
}

# The daemon (pid file) name of NameNode nn1 or nn2.
hdfsha_nn_daemon() {
  [[ "$1" == nn1 ]] && echo namenode || echo namenode-nn2
}

# "host:port" pairs that must be free before an HA HDFS starts (ZooKeeper's
# is ha.sh's).
hdfsha_ports() {
  local port i
  for port in "$nn_port" "$hdfsha_nn2_port" "$hdfsha_zkfc1_port" "$hdfsha_zkfc2_port" \
    "$dn_port" "$dn_ipc_port" "${hdfsha_jn_ports[@]}"; do
    echo "$host:$port"
  done
  if ((secure)); then
    for port in "$nn_https_port" "$hdfsha_nn2_https_port" "$dn_https_port" \
      "${hdfsha_jn_https_ports[@]}"; do
      echo "$host:$port"
    done
  else
    for port in "$nn_http_port" "$hdfsha_nn2_http_port" "$dn_http_port" \
      "${hdfsha_jn_http_ports[@]}"; do
      echo "$host:$port"
    done
  fi
  return 0
}

hdfsha_rpc_port() {
  [[ "$1" == nn1 ]] && echo "$nn_port" || echo "$hdfsha_nn2_port"
}

# The web endpoint of nn1 or nn2 (HTTPS only on a secure cluster).
hdfsha_web_url() {
  if state_is_secure; then
    [[ "$1" == nn1 ]] && echo "https://$host:$nn_https_port" || echo "https://$host:$hdfsha_nn2_https_port"
  else
    [[ "$1" == nn1 ]] && echo "http://$host:$nn_http_port" || echo "http://$host:$hdfsha_nn2_http_port"
  fi
}

# hdfs-site.xml properties of the nameservice, for every daemon and client
# (what a production cluster's client configuration holds, plus the name,
# edits and fencing settings its NameNodes read).
hdfsha_hdfs_props() {
  local id i jns=""
  prop dfs.nameservices "$hdfsha_ns"
  prop "dfs.ha.namenodes.$hdfsha_ns" nn1,nn2
  for id in nn1 nn2; do
    prop "dfs.namenode.rpc-address.$hdfsha_ns.$id" "$host:$(hdfsha_rpc_port "$id")"
    if ((secure)); then
      if [[ "$id" == nn1 ]]; then
        prop "dfs.namenode.https-address.$hdfsha_ns.$id" "$host:$nn_https_port"
      else
        prop "dfs.namenode.https-address.$hdfsha_ns.$id" "$host:$hdfsha_nn2_https_port"
      fi
    fi
    if [[ "$id" == nn1 ]]; then
      prop "dfs.namenode.http-address.$hdfsha_ns.$id" "$host:$nn_http_port"
    else
      prop "dfs.namenode.http-address.$hdfsha_ns.$id" "$host:$hdfsha_nn2_http_port"
    fi
    prop "dfs.namenode.name.dir.$hdfsha_ns.$id" "file://$state/hdfs/$id"
  done
  prop "dfs.ha.zkfc.port.$hdfsha_ns.nn1" "$hdfsha_zkfc1_port"
  prop "dfs.ha.zkfc.port.$hdfsha_ns.nn2" "$hdfsha_zkfc2_port"
  prop "dfs.client.failover.proxy.provider.$hdfsha_ns" \
    org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider
  for i in 0 1 2; do
    jns+="${jns:+;}$host:${hdfsha_jn_ports[$i]}"
  done
  prop dfs.namenode.shared.edits.dir "qjournal://$jns/$hdfsha_ns"
  prop "dfs.ha.automatic-failover.enabled.$hdfsha_ns" true
  prop dfs.ha.fencing.methods "shell(/bin/true)"
  # The standby reads the shared edits every second (default 60 s), so a
  # failover has little to catch up on.
  prop dfs.ha.tail-edits.period 1s
  # Clients (the NodeManagers' localizers, Hadoop's CLI) try the other
  # NameNode after 0.2 s, not 0.5 s, and back off to 2 s, not 15 s.
  prop dfs.client.failover.sleep.base.millis 200
  prop dfs.client.failover.sleep.max.millis 2000
  if ((secure)); then
    prop dfs.journalnode.kerberos.principal "jn/_HOST@$krb5_realm"
    prop dfs.journalnode.keytab.file "$keytab_dir/jn.keytab"
    prop dfs.journalnode.kerberos.internal.spnego.principal "HTTP/_HOST@$krb5_realm"
  fi
}

# core-site.xml properties of the ZKFCs.
hdfsha_core_props() {
  prop ha.zookeeper.quorum "$host:$zk_port"
  # A ZKFC that dies loses its lock within 4 s (ZooKeeper's tickTime is
  # 0.5 s, so sessions may last 1 to 10 s).
  prop ha.zookeeper.session-timeout.ms 4000
}

# Writes conf-nn1/, conf-nn2/ and conf-jn1/ .. conf-jn3/ from the cluster's
# finished conf/ (after make_tls: they take ssl-server.xml too).
hdfsha_write_confs() {
  local id i dir
  for id in nn1 nn2; do
    dir="$state/conf-$id"
    rm -rf "$dir"
    cp -r "$conf" "$dir"
    sed -i "s#</configuration>#  <property><name>dfs.ha.namenode.id</name><value>$id</value></property>\n</configuration>#" \
      "$dir/hdfs-site.xml"
  done
  for i in 1 2 3; do
    dir="$state/conf-jn$i"
    rm -rf "$dir"
    cp -r "$conf" "$dir"
    {
      prop dfs.journalnode.rpc-address "$host:${hdfsha_jn_ports[$((i - 1))]}"
      prop dfs.journalnode.http-address "$host:${hdfsha_jn_http_ports[$((i - 1))]}"
      prop dfs.journalnode.https-address "$host:${hdfsha_jn_https_ports[$((i - 1))]}"
      prop dfs.journalnode.edits.dir "$state/hdfs/journal$i"
    } >"$state/run/jn$i.props"
    sed -i '$d' "$dir/hdfs-site.xml" # </configuration>
    {
      cat "$state/run/jn$i.props"
      xml_end
    } >>"$dir/hdfs-site.xml"
    mkdir -p "$state/hdfs/journal$i"
  done
  echo "$hdfsha_ns" >"$state/hdfs-ha"
}

# Starts the HA HDFS; ZooKeeper already serves. The JournalNodes first
# (formatting nn1 writes the shared edits), then nn1's storage is formatted
# while the ZKFCs' znode is made, nn2 gets a copy of nn1's fresh storage
# (what `hdfs namenode -bootstrapStandby` would fetch from a running nn1),
# and both NameNodes, their ZKFCs and the DataNode start together.
hdfsha_start() {
  local i
  mkdir -p "$state/hdfs"
  hdfsha_write_confs
  for i in 1 2 3; do
    DAEMON_CONF="$state/conf-jn$i" DAEMON_HEAP=128m launch "journalnode$i" \
      org.apache.hadoop.hdfs.qjournal.server.JournalNode
  done
  local zk_args java zk_log="$state/logs/zkfc-format.log"
  zk_args=$(write_jvm_args zkfc-format 128m "$state/conf-nn1")
  java=$(yarn_java)
  (cd "$state" && HADOOP_CONF_DIR="$state/conf-nn1" "$java" "@$zk_args" "$marker" \
    org.apache.hadoop.hdfs.tools.DFSZKFailoverController -formatZK -force -nonInteractive \
    </dev/null >"$zk_log" 2>&1) &
  local zk_format=$!
  format_namenode namenode "$state/conf-nn1"
  wait "$zk_format" || {
    show_log_tail zkfc-format
    fail_start "formatting the ZKFCs' znode in ZooKeeper failed (log: $zk_log)"
  }
  cp -a "$state/hdfs/nn1" "$state/hdfs/nn2"
  DAEMON_CONF="$state/conf-nn1" DAEMON_HEAP=256m launch namenode \
    org.apache.hadoop.hdfs.server.namenode.NameNode
  DAEMON_CONF="$state/conf-nn2" DAEMON_HEAP=256m launch namenode-nn2 \
    org.apache.hadoop.hdfs.server.namenode.NameNode
  # nn1's ZKFC first, so that nn1 is most likely the first active.
  DAEMON_CONF="$state/conf-nn1" DAEMON_HEAP=128m launch zkfc-nn1 \
    org.apache.hadoop.hdfs.tools.DFSZKFailoverController
  DAEMON_CONF="$state/conf-nn2" DAEMON_HEAP=128m launch zkfc-nn2 \
    org.apache.hadoop.hdfs.tools.DFSZKFailoverController
  DAEMON_HEAP=256m launch datanode org.apache.hadoop.hdfs.server.datanode.DataNode
}

# Prints the HA state of nn1 or nn2 (active, standby, ...), or DOWN when it
# does not answer.
hdfsha_nn_state() {
  local st
  st=$(cluster_curl -sf -m 3 "$(hdfsha_web_url "$1")/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["beans"][0]["State"])' 2>/dev/null) || true
  echo "${st:-DOWN}"
}

# "nn1=active nn2=standby"
hdfsha_states() {
  echo "nn1=$(hdfsha_nn_state nn1) nn2=$(hdfsha_nn_state nn2)"
}

# Prints the active NameNode's id; 1 when none is active.
hdfsha_active() {
  local id
  for id in nn1 nn2; do
    if [[ $(hdfsha_nn_state "$id") == active ]]; then
      echo "$id"
      return 0
    fi
  done
  return 1
}

# "live-datanodes state" of nn1 or nn2, as namenode_state.
hdfsha_fs_state() {
  cluster_curl -sf -m 3 "$(hdfsha_web_url "$1")/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" 2>/dev/null |
    python3 -c 'import json,sys; b=json.load(sys.stdin)["beans"][0]; print(b["NumLiveDataNodes"], b["FSState"])' 2>/dev/null || true
}

# True once one NameNode is active with the DataNode live and the other is
# standby.
hdfsha_ready() {
  local active other
  active=$(hdfsha_active) || return 1
  [[ "$active" == nn1 ]] && other=nn2 || other=nn1
  [[ $(hdfsha_fs_state "$active") == "1 Operational" ]] &&
    [[ $(hdfsha_nn_state "$other") == standby ]]
}

# Waits up to $1 seconds until a NameNode is active; prints its id.
hdfsha_wait_active() {
  local deadline=$((SECONDS + $1)) id
  while :; do
    if id=$(hdfsha_active); then
      echo "$id"
      return 0
    fi
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
