# shellcheck shell=bash
# Shared by cluster.sh, yarn.sh and jars.sh; sourced, never run.
#
# Everything a cluster owns lives under one state directory:
#   conf/       HADOOP_CONF_DIR (site files, log4j, resource types)
#   logs/       one log per daemon (stdout and stderr of its JVM)
#   pids/       one pid file per daemon
#   nm-local/   NodeManager local dirs (container working directories);
#               with --nodes N > 1, nm-local/<node address>/ for each node
#   nm-logs/    NodeManager container log dirs (likewise per node)
#   nodes/<address>/conf   with --nodes N > 1, each node's own config dir
#   node-addresses, hadoop-version, host, mode, security, rpc-protection
#               what `start` was asked for
#   app-logs/   aggregated application logs (what `yarn logs` reads)
#   hdfs/       NameNode and DataNode storage (with --hdfs)
#   tmp/        hadoop.tmp.dir
#   krb5/ keytabs/ tls/   the KDC, keytabs and TLS material (--secure;
#               see secure.sh)
# Every JVM of the cluster carries -Dtony.yarn.dir=<state dir> on its command
# line so that `stop` can find it even without its pid file.

# The Apache Hadoop release a cluster runs unless told otherwise
# (cluster.sh --hadoop-version, TONY_HADOOP_VERSION); pom.xml names it too.
readonly yarn_default_hadoop_version=3.4.2

# Exits 1 unless $1 looks like a Hadoop release (3.3.6, 3.4.2).
yarn_check_hadoop_version() {
  [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    yarn_die "the Hadoop version must be a release number like 3.4.2 or 3.3.6, not '$1'"
}

# The DistributedShell release that goes with Hadoop $1. Maven Central has
# a complete one (jar and parent pom) for fewer releases than the daemons:
# not for 3.3.6 (no jar) nor 3.3.5 (no parent pom), so the 3.3 line runs
# the 3.3.1 one. It is an application on the cluster, not a daemon; its
# Hadoop dependencies resolve to the cluster's release.
yarn_distributedshell_version() {
  case "$1" in
    3.3.6) echo 3.3.1 ;;
    *) echo "$1" ;;
  esac
}

yarn_die() {
  echo "$*" >&2
  exit 1
}

yarn_log() {
  echo "$*" >&2
}

yarn_script_dir() {
  cd "$(dirname "${BASH_SOURCE[0]}")" && pwd
}

# The state directory: --dir wins, then $TONY_YARN_DIR, then /tmp/tony-yarn.
# Made absolute because it ends up in config files and process markers.
yarn_state_dir() {
  local dir=${1:-${TONY_YARN_DIR:-/tmp/tony-yarn}}
  case "$dir" in
    /*) ;;
    *) dir="$PWD/$dir" ;;
  esac
  # Strip trailing slashes so the process marker compares exactly.
  while [[ "$dir" != / && "$dir" == */ ]]; do dir=${dir%/}; done
  [[ "$dir" == / ]] && yarn_die "refusing to use / as the YARN state directory"
  echo "$dir"
}

yarn_java() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    echo "$JAVA_HOME/bin/java"
  elif command -v java >/dev/null; then
    command -v java
  else
    yarn_die "java not found: install a JDK 17 (scripts/setup.sh does) or set JAVA_HOME"
  fi
}

# JAVA_HOME is passed to containers through the NodeManager's environment
# (it is on yarn.nodemanager.env-whitelist), so it must be set for the NM.
yarn_java_home() {
  local java
  java=$(readlink -f "$(yarn_java)")
  dirname "$(dirname "$java")"
}

# Hadoop 3.4 targets Java 8/11. On Java 17 Guice (RM/NM web apps), Hadoop's
# reflection on java.lang and netty/NIO internals fail with
# InaccessibleObjectException unless these packages are opened.
yarn_java17_opens() {
  local pkg
  for pkg in java.lang java.lang.reflect java.lang.invoke java.io java.net \
    java.nio java.util java.util.concurrent java.util.concurrent.atomic \
    java.util.regex java.text java.time sun.nio.ch sun.nio.cs \
    sun.security.action sun.util.calendar jdk.internal.ref; do
    echo "--add-opens=java.base/$pkg=ALL-UNNAMED"
  done
  echo "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED"
}

# Small, fast-starting JVMs: the machine has 2 cores and runs up to four
# daemons next to the containers under test.
yarn_jvm_opts() {
  local heap=$1
  echo "-Xmx$heap"
  # The initial heap would be 1/64 of the machine's memory (384 MB here),
  # which a serial young generation then cycles through; start small and
  # let it grow as the daemon needs.
  echo "-Xms32m"
  echo "-XX:+UseSerialGC"
  echo "-XX:TieredStopAtLevel=1"
  echo "-Xss512k"
  echo "-Djava.net.preferIPv4Stack=true"
  yarn_java17_opens
}

yarn_cache_dir() {
  echo "${TONY_YARN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tony-yarn}"
}

yarn_mvn_args() {
  if [[ -n "${TONY_MAVEN_REPO:-}" ]]; then
    echo "-Dmaven.repo.local=$TONY_MAVEN_REPO"
  fi
}

# A classpath file is still good when every entry exists.
yarn_classpath_ok() {
  local file=$1 entry
  [[ -s "$file" ]] || return 1
  local -a entries
  IFS=: read -r -a entries <"$file"
  ((${#entries[@]} > 0)) || return 1
  for entry in "${entries[@]}"; do
    [[ -e "$entry" ]] || return 1
  done
}

# Hadoop's native library (libhadoop.so), which the Apache jars on Maven
# Central lack. A secure NodeManager needs it: it reads container logs
# (log aggregation, the log pages) through SecureIOUtils, which refuses to
# work in secure mode without it ("Secure IO is not possible without native
# code extensions") and takes the NodeManager down. Trino publishes a build
# of Hadoop's native code on Maven Central, inside its hadoop-apache jar;
# only the .so is taken from it (its classes never go on a classpath).
readonly yarn_native_artifact=io.trino.hadoop:hadoop-apache:3.4.3-1

# Prints the directory holding libhadoop.so for this machine (resolved with
# Maven, extracted once into the cache), for -Djava.library.path.
yarn_resolve_native() {
  local arch
  case "$(uname -m)" in
    x86_64) arch=Linux-amd64 ;;
    aarch64) arch=Linux-aarch64 ;;
    ppc64le) arch=Linux-ppc64le ;;
    *) yarn_die "jars.sh: no Hadoop native library for $(uname -m) (needed by --secure)" ;;
  esac
  command -v mvn >/dev/null ||
    yarn_die "mvn not found: install Maven (scripts/setup.sh does) to resolve Hadoop's native library"
  local dir
  dir="$(yarn_cache_dir)/native-${yarn_native_artifact##*:}"
  if [[ -s "$dir/libhadoop.so" ]]; then
    echo "$dir"
    return 0
  fi
  mkdir -p "$dir"
  local tmp log="$dir/mvn.log" jar
  tmp=$(mktemp -d "$dir/fetch.XXXXXX")
  local -a args
  mapfile -t args < <(yarn_mvn_args)
  args+=(-B dependency:copy "-Dartifact=$yarn_native_artifact:jar" "-DoutputDirectory=$tmp")
  if ! mvn -o -q "${args[@]}" >"$log" 2>&1 && ! mvn -q "${args[@]}" >"$log" 2>&1; then
    rm -rf "$tmp"
    tail -n 20 "$log" >&2
    yarn_die "jars.sh: Maven could not resolve $yarn_native_artifact (Hadoop's native library; log: $log)"
  fi
  jar=$(echo "$tmp"/*.jar)
  if ! unzip -q -o -j "$jar" "nativelib/$arch/libhadoop.so" -d "$tmp" >>"$log" 2>&1; then
    rm -rf "$tmp"
    yarn_die "jars.sh: $jar holds no nativelib/$arch/libhadoop.so"
  fi
  mv -f "$tmp/libhadoop.so" "$dir/libhadoop.so"
  rm -rf "$tmp"
  echo "$dir"
}

# Resolves the jars of pom.xml with Maven and prints the classpath file path
# on stdout. Arg 1: 1 to ignore a cached classpath file; arg 2: the Hadoop
# release (default: pom.xml's).
yarn_resolve_classpath() {
  local refresh=${1:-0} version=${2:-$yarn_default_hadoop_version}
  local here pom sum cache file tmp
  here=$(yarn_script_dir)
  pom="$here/pom.xml"
  command -v mvn >/dev/null ||
    yarn_die "mvn not found: install Maven (scripts/setup.sh does) to resolve the Hadoop jars"
  sum=$( (cat "$pom"; echo "${TONY_MAVEN_REPO:-}"; echo "$version") | sha256sum | cut -c1-12)
  cache=$(yarn_cache_dir)
  file="$cache/classpath-$sum.txt"
  if ((refresh == 0)) && yarn_classpath_ok "$file"; then
    echo "$file"
    return 0
  fi
  mkdir -p "$cache"
  tmp=$(mktemp "$cache/classpath.XXXXXX")
  local log="$cache/mvn-$sum.log"
  local -a args
  mapfile -t args < <(yarn_mvn_args)
  args+=(-B -f "$pom" dependency:build-classpath "-Dhadoop.version=$version"
    "-Ddistributedshell.version=$(yarn_distributedshell_version "$version")"
    -Dmdep.outputFile="$tmp" -Dmdep.includeScope=runtime)
  # Offline first: with a warm ~/.m2 this avoids every network round trip.
  if ! mvn -o -q "${args[@]}" >"$log" 2>&1; then
    yarn_log "jars.sh: resolving the Hadoop $version jars with Maven (a first run downloads about 120 MB)..."
    if ! mvn -q "${args[@]}" >"$log" 2>&1; then
      rm -f "$tmp"
      tail -n 30 "$log" >&2
      yarn_die "jars.sh: Maven could not resolve the jars of Hadoop $version ($pom; full log: $log)"
    fi
  fi
  # build-classpath lists the dependencies, not the (empty) pom project.
  if ! yarn_classpath_ok "$tmp"; then
    rm -f "$tmp"
    yarn_die "jars.sh: Maven wrote no usable classpath (log: $log)"
  fi
  mv -f "$tmp" "$file"
  echo "$file"
}
