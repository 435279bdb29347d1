#!/usr/bin/env bash
# The world of tony's Kerberos tests: a real MIT KDC (realm TONY.TEST) and
# real Hadoop RPC servers (HadoopSaslServers.java: Hadoop's own ipc.Server,
# logged in from the KDC's keytab), both on this machine.
#
#   tests/integration/kerberos/fixture.sh start DIR
#   tests/integration/kerberos/fixture.sh stop DIR
#
# start writes DIR/env (NAME=VALUE lines the tests read: KRB5_CONFIG, the
# KDC address, principals, keytabs, server ports, token files) and returns
# once both servers answer; stop ends both and removes DIR. The KDC and the
# servers listen on ${TONY_YARN_HOST:-127.0.0.1}, the KDC on a free port.
#
# Principals: alice and bob (users with keytabs), brief (tickets live 3 s
# at most), gone (its keytab outlives the principal, deleted from the KDC),
# rm/<host name> (the servers' own).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
# shellcheck source=scripts/yarn/lib.sh
source "$root/scripts/yarn/lib.sh"

usage() {
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

(($# == 2)) || usage
cmd=$1
dir=$2
case "$dir" in
  /*) ;;
  *) dir="$PWD/$dir" ;;
esac
realm=TONY.TEST
host=${TONY_YARN_HOST:-127.0.0.1}
# The servers' principal names the host as Hadoop clients see it: the
# reverse name of the address when it has one (127.0.0.1 is localhost).
canon=$(getent hosts "$host" | awk '{print tolower($2); exit}' || true)
canon=${canon:-$host}

die() {
  echo "kerberos fixture: $*" >&2
  exit 1
}

stop_pid_file() {
  local file=$1 pid
  [[ -s "$file" ]] || return 0
  pid=$(<"$file")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  stop_pid_file "$dir/servers.pid"
  stop_pid_file "$dir/kdc.pid"
  rm -rf "$dir"
}

free_port() {
  python3 -c "import socket; s = socket.socket(); s.bind(('$host', 0)); print(s.getsockname()[1])"
}

write_configs() {
  local port=$1
  cat >"$dir/kdc.conf" <<EOF
[kdcdefaults]
  kdc_listen = $host:$port
  kdc_tcp_listen = $host:$port
[realms]
  $realm = {
    database_name = $dir/kdb/principal
    key_stash_file = $dir/kdb/stash
    acl_file = $dir/kdb/kadm5.acl
    max_life = 1h
    max_renewable_life = 0
    master_key_type = aes256-cts-hmac-sha1-96
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$dir/kdc.log
EOF
  # No DNS here: names are used as written. TCP only (udp_preference_limit
  # = 1): a dead KDC is then a refused connection, reported at once.
  cat >"$dir/krb5.conf" <<EOF
[libdefaults]
  default_realm = $realm
  dns_lookup_realm = false
  dns_lookup_kdc = false
  rdns = false
  dns_canonicalize_hostname = false
  udp_preference_limit = 1
  permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
  default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
  $realm = {
    kdc = $host:$port
  }
EOF
}

make_principals() {
  mkdir -p "$dir/kdb" "$dir/keytabs"
  : >"$dir/kdb/kadm5.acl"
  kdb5_util create -s -r "$realm" -P "tony-test-master-$$" >/dev/null ||
    die "kdb5_util create failed"
  local p
  for p in alice bob gone "rm/$canon"; do
    kadmin.local -q "addprinc -randkey $p@$realm" >/dev/null 2>&1 ||
      die "kadmin.local addprinc $p failed"
  done
  kadmin.local -q "addprinc -randkey -maxlife \"3 seconds\" brief@$realm" >/dev/null 2>&1 ||
    die "kadmin.local addprinc brief failed"
  for p in alice bob brief gone; do
    kadmin.local -q "ktadd -k $dir/keytabs/$p.keytab $p@$realm" >/dev/null 2>&1 ||
      die "kadmin.local ktadd $p failed"
  done
  kadmin.local -q "ktadd -k $dir/keytabs/rm.keytab rm/$canon@$realm" >/dev/null 2>&1 ||
    die "kadmin.local ktadd rm failed"
  kadmin.local -q "delprinc -force gone@$realm" >/dev/null 2>&1 ||
    die "kadmin.local delprinc gone failed"
}

start_kdc() {
  krb5kdc -n -P "$dir/kdc.pid" </dev/null >>"$dir/kdc.out" 2>&1 &
  local i
  for i in $(seq 1 100); do
    if kinit -kt "$dir/keytabs/alice.keytab" -c "FILE:$dir/probe.ccache" "alice@$realm" \
      2>/dev/null; then
      rm -f "$dir/probe.ccache"
      return 0
    fi
    sleep 0.1
  done
  cat "$dir/kdc.out" "$dir/kdc.log" >&2 2>/dev/null || true
  die "the KDC did not answer within 10 s"
}

# Compiles HadoopSaslServers.java once per source change, next to DIR.
compile_servers() {
  local classpath=$1 classes="$dir.classes"
  local src="$here/HadoopSaslServers.java"
  if [[ ! -s "$classes/HadoopSaslServers.class" || "$src" -nt "$classes/HadoopSaslServers.class" ]]; then
    rm -rf "$classes"
    mkdir -p "$classes"
    javac -nowarn -d "$classes" -cp "$classpath" "$src" >&2 || die "javac failed"
  fi
  echo "$classes"
}

start_servers() {
  local cpfile classpath classes java args
  cpfile=$(yarn_resolve_classpath 0 | tail -n1) || die "cannot resolve the Hadoop jars"
  classpath=$(<"$cpfile")
  classes=$(compile_servers "$classpath")
  java=$(yarn_java)
  args="$dir/jvm.args"
  {
    echo "-cp"
    echo "$classes:$classpath"
    yarn_jvm_opts 256m
    echo "-Djava.security.krb5.conf=$dir/krb5.conf"
    echo "-Dlog4j.configuration=file:$root/scripts/yarn/client-log4j.properties"
    echo "-Dtony.kerberos.fixture=$dir"
  } >"$args"
  (exec setsid "$java" "@$args" HadoopSaslServers --dir "$dir" --host "$host" \
    --principal "rm/$canon@$realm" --keytab "$dir/keytabs/rm.keytab" \
    </dev/null >"$dir/servers.log" 2>&1) &
  echo $! >"$dir/servers.pid"
  local i
  for i in $(seq 1 600); do
    grep -q '^READY$' "$dir/servers.log" 2>/dev/null && return 0
    kill -0 "$(<"$dir/servers.pid")" 2>/dev/null || break
    sleep 0.1
  done
  grep -v '^\s*at ' "$dir/servers.log" | tail -n 30 >&2 || true
  die "the Hadoop RPC servers did not start (log: $dir/servers.log)"
}

start() {
  local tool
  for tool in krb5kdc kdb5_util kadmin.local kinit java javac python3; do
    command -v "$tool" >/dev/null ||
      die "$tool not found: scripts/setup.sh installs krb5-kdc, krb5-admin-server, krb5-user and a JDK"
  done
  stop
  mkdir -p "$dir"
  local port
  port=$(free_port)
  write_configs "$port"
  export KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf"
  make_principals
  start_kdc
  start_servers
  {
    echo "KRB5_CONFIG=$dir/krb5.conf"
    echo "TONY_KDC=$host:$port"
    echo "TONY_REALM=$realm"
    echo "TONY_SERVER_HOST=$host"
    echo "TONY_SERVER_PRINCIPAL=rm/$canon@$realm"
    echo "TONY_KEYTABS=$dir/keytabs"
    cat "$dir/servers.env"
  } >"$dir/env"
  echo "kerberos fixture: KDC $host:$port (realm $realm), Hadoop RPC servers up; env in $dir/env"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
