# shellcheck shell=bash
# S3A for the local cluster (`cluster.sh start --s3a ENDPOINT`), sourced by
# cluster.sh: Hadoop's S3A connector (hadoop-aws from Maven Central, see
# s3a-pom.xml) on every daemon's classpath, core-site.xml pointing s3a:// at
# ENDPOINT (an S3-compatible server such as moto's, path-style access, fake
# credentials), YARN's aggregated logs in s3a://$TONY_YARN_S3A_BUCKET/logs,
# and a `hadoop` command in $state/bin (HADOOP_HOME=$state, which the
# NodeManagers hand to containers) that runs `hadoop fs` on the cluster's
# jars: the cluster's own Hadoop client, as tony expects to find on a node.
#
# Knobs: TONY_YARN_S3A_BUCKET (default tony), created on ENDPOINT when
# missing (an unauthenticated PUT: this is for a local test server).

s3a_bucket() {
  echo "${TONY_YARN_S3A_BUCKET:-tony}"
}

# True when the cluster in $state runs with --s3a.
state_has_s3a() {
  [[ -s "$state/s3a-endpoint" ]]
}

# The classpath of hadoop-aws and its AWS SDK bundle, resolved once per
# Hadoop release into the tony-yarn cache.
s3a_classpath() {
  local version=$1 cache file log
  cache=$(yarn_cache_dir)
  mkdir -p "$cache"
  file="$cache/s3a-classpath-$version.txt"
  if yarn_classpath_ok "$file"; then
    cat "$file"
    return 0
  fi
  log="$cache/s3a-mvn-$version.log"
  local -a args
  mapfile -t args < <(yarn_mvn_args)
  args+=(-B -f "$here/s3a-pom.xml" dependency:build-classpath "-Dhadoop.version=$version"
    -Dmdep.includeScope=runtime "-Dmdep.outputFile=$file.tmp")
  if ! mvn -o -q "${args[@]}" >"$log" 2>&1 && ! mvn -q "${args[@]}" >"$log" 2>&1; then
    yarn_die "cluster.sh: resolving hadoop-aws $version with Maven failed (log: $log)"
  fi
  mv "$file.tmp" "$file"
  cat "$file"
}

# Adds the S3A properties before </configuration> of a config file.
s3a_add_props() {
  local file=$1 endpoint=$2 props
  props=$(
    prop fs.s3a.endpoint "$endpoint"
    prop fs.s3a.endpoint.region us-east-1
    prop fs.s3a.path.style.access true
    prop fs.s3a.connection.ssl.enabled false
    prop fs.s3a.access.key tony-test
    prop fs.s3a.secret.key tony-test-secret
    prop fs.s3a.aws.credentials.provider \
      org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider
    # Few, short retries: a test server is up or it is not.
    prop fs.s3a.attempts.maximum 2
    prop fs.s3a.retry.limit 2
  )
  python3 - "$file" "$props" <<'PY'
import sys
path, props = sys.argv[1], sys.argv[2]
text = open(path).read()
open(path, "w").write(text.replace("</configuration>", props + "\n</configuration>", 1))
PY
}

# Called by start_cluster after the config directories are written.
s3a_configure() {
  local endpoint=$1 version=$2 bucket classpath java dir
  bucket=$(s3a_bucket)
  [[ "$version" == 3.4.* ]] ||
    yarn_die "cluster.sh: --s3a runs with Hadoop 3.4 (its S3A uses the AWS SDK v2 of s3a-pom.xml), not $version"
  curl -sf -o /dev/null "$endpoint/" ||
    yarn_die "cluster.sh: --s3a: no S3 server answers at $endpoint (start it first, e.g. moto_server -H ${endpoint#http://})"
  curl -sf -o /dev/null -X PUT "$endpoint/$bucket" ||
    curl -sf -o /dev/null -I "$endpoint/$bucket" ||
    yarn_die "cluster.sh: --s3a: cannot create bucket $bucket at $endpoint"
  classpath=$(s3a_classpath "$version")
  # Every daemon's -cp reads this file (write_jvm_args).
  local base
  base=$(tr -d '\n' <"$conf/hadoop-classpath.txt")
  printf '%s:%s\n' "$base" "$classpath" >"$conf/hadoop-classpath.txt"
  for dir in "$conf" $(single_node || for n in "${nodes[@]}"; do node_conf_dir "$n"; done); do
    s3a_add_props "$dir/core-site.xml" "$endpoint"
    sed -i "s#<value>\(file://$state/app-logs\|hdfs://$host:$nn_port/tmp/logs\)</value>#<value>s3a://$bucket/logs</value>#" \
      "$dir/yarn-site.xml"
  done
  echo "$endpoint" >"$state/s3a-endpoint"
  echo "$bucket" >"$state/s3a-bucket"
  java=$(yarn_java)
  mkdir -p "$state/bin"
  cat >"$state/bin/hadoop" <<SH
#!/bin/sh
# Written by scripts/yarn/s3a.sh: \`hadoop fs\` (Hadoop's FsShell) on this
# cluster's jars and configuration (or HADOOP_CONF_DIR's).
if [ "\$1" != fs ]; then
  echo "hadoop: this cluster's client runs 'hadoop fs ...' only" >&2
  exit 2
fi
shift
exec "$java" -Xmx256m -Xms32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \\
  -Djava.net.preferIPv4Stack=true -Dhadoop.root.logger=WARN,console \\
  -Dlog4j.configuration=file:$here/client-log4j.properties \\
  -cp "\${HADOOP_CONF_DIR:-$conf}:\$(cat "$conf/hadoop-classpath.txt")" \\
  org.apache.hadoop.fs.FsShell "\$@"
SH
  chmod 755 "$state/bin/hadoop"
}

# `cluster.sh env` lines of an --s3a cluster.
s3a_env_lines() {
  printf 'export %s=%q\n' HADOOP_HOME "$state" TONY_YARN_S3A_ENDPOINT \
    "$(<"$state/s3a-endpoint")" TONY_YARN_S3A_BUCKET "$(<"$state/s3a-bucket")"
}
