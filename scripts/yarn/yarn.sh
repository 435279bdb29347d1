#!/usr/bin/env bash
# Runs Hadoop's own command-line tools against the local cluster started by
# scripts/yarn/cluster.sh, with that cluster's config (see doc/local-yarn.md).
#
#   scripts/yarn/yarn.sh [--dir DIR] SUBCOMMAND [ARGS...]
#
# Subcommands (as in Hadoop's `yarn` and `hdfs` scripts):
#   application|app|applicationattempt|container ARGS   ApplicationCLI
#   node ARGS          NodeCLI          (e.g. node -list -all)
#   logs ARGS          LogsCLI          (e.g. logs -applicationId ID)
#   queue ARGS         QueueCLI
#   cluster ARGS       ClusterCLI       (e.g. cluster -lnl)
#   rmadmin ARGS       RMAdminCLI
#   dfs ARGS           FsShell          (e.g. dfs -ls /)
#   dfsadmin ARGS      DFSAdmin         (with --hdfs)
#   haadmin ARGS       DFSHAAdmin       (with --hdfs-ha, e.g. haadmin
#                      -getAllServiceState)
#   fetchdt ARGS       DelegationTokenFetcher (hdfs fetchdt: get, print,
#                      renew or cancel an HDFS delegation token)
#   dtutil ARGS        DtUtilShell (hadoop dtutil: print, get, append,
#                      renew token files)
#   distributedshell ARGS   DistributedShell client, its jar preset
#   version            Hadoop version
#   classpath          print the classpath
#   class NAME ARGS    any main class
#
# DIR defaults to $TONY_YARN_DIR, then /tmp/tony-yarn. On a cluster started
# with --secure the tools log in from the ticket cache in $KRB5CCNAME (see
# `cluster.sh env`) and read the realm from $KRB5_CONFIG, else from the
# cluster's krb5.conf; with HADOOP_TOKEN_FILE_LOCATION they use its tokens.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/yarn/lib.sh
source "$here/lib.sh"

usage() {
  sed -n '2,/^set -euo pipefail$/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
}

dir_arg=""
case "${1:-}" in
  --dir)
    [[ $# -ge 2 ]] || yarn_die "yarn.sh: --dir needs a directory"
    dir_arg=$2
    shift 2
    ;;
  --dir=*)
    dir_arg=${1#--dir=}
    shift
    ;;
esac
[[ $# -ge 1 ]] || {
  usage >&2
  exit 2
}
state=$(yarn_state_dir "$dir_arg")
conf="$state/conf"
classpath_file="$conf/hadoop-classpath.txt"
[[ -s "$classpath_file" ]] ||
  yarn_die "yarn.sh: no cluster config in $conf; start one with 'scripts/yarn/cluster.sh start${dir_arg:+ --dir $dir_arg}'"
classpath="$conf:$(<"$classpath_file")"

sub=$1
shift
declare -a pre=()
case "$sub" in
  application | app | applicationattempt | container)
    class=org.apache.hadoop.yarn.client.cli.ApplicationCLI
    # ApplicationCLI picks its mode from its first argument.
    [[ "$sub" == app ]] && sub=application
    pre=("$sub")
    ;;
  node) class=org.apache.hadoop.yarn.client.cli.NodeCLI ;;
  logs) class=org.apache.hadoop.yarn.client.cli.LogsCLI ;;
  queue) class=org.apache.hadoop.yarn.client.cli.QueueCLI ;;
  cluster) class=org.apache.hadoop.yarn.client.cli.ClusterCLI ;;
  rmadmin) class=org.apache.hadoop.yarn.client.cli.RMAdminCLI ;;
  dfs | fs) class=org.apache.hadoop.fs.FsShell ;;
  dfsadmin) class=org.apache.hadoop.hdfs.tools.DFSAdmin ;;
  haadmin) class=org.apache.hadoop.hdfs.tools.DFSHAAdmin ;;
  fetchdt) class=org.apache.hadoop.hdfs.tools.DelegationTokenFetcher ;;
  dtutil) class=org.apache.hadoop.security.token.DtUtilShell ;;
  distributedshell)
    class=org.apache.hadoop.yarn.applications.distributedshell.Client
    ds_jar=$(tr ':' '\n' <"$classpath_file" | grep '/hadoop-yarn-applications-distributedshell-[^/]*\.jar$' | head -n1)
    [[ -n "$ds_jar" ]] || yarn_die "yarn.sh: the DistributedShell jar is not on the classpath ($classpath_file)"
    pre=(-jar "$ds_jar")
    ;;
  version) class=org.apache.hadoop.util.VersionInfo ;;
  classpath)
    echo "$classpath"
    exit 0
    ;;
  class)
    [[ $# -ge 1 ]] || yarn_die "yarn.sh: 'class' needs a main class name"
    class=$1
    shift
    ;;
  -h | --help | help)
    usage
    exit 0
    ;;
  *) yarn_die "yarn.sh: unknown subcommand '$sub' (see yarn.sh --help)" ;;
esac

declare -a opts
mapfile -t opts < <(yarn_jvm_opts 256m)
opts+=("-Dhadoop.root.logger=${TONY_YARN_CLIENT_LOG:-WARN},console"
  "-Dlog4j.configuration=file:$here/client-log4j.properties"
  "-Dhadoop.home.dir=$state")
# Java reads no KRB5_CONFIG: hand it the file (the cluster's by default).
if [[ -s "$state/security" && $(<"$state/security") == kerberos ]]; then
  opts+=("-Djava.security.krb5.conf=${KRB5_CONFIG:-$state/krb5/krb5.conf}")
fi
export HADOOP_CONF_DIR="$conf"
# Client JVMs log only warnings, to stderr; the tools' answers go to stdout.
exec "$(yarn_java)" "${opts[@]}" -cp "$classpath" "$class" "${pre[@]}" "$@"
