# shellcheck shell=bash disable=SC2154 # host, state, conf, rpc_protection, nodes: cluster.sh's
# The Kerberos side of `cluster.sh start --secure`; sourced by cluster.sh
# after it set host, state, conf and rpc_protection; its functions also read
# the node addresses (nodes) and single_node. Never run.
#
# What a secure cluster adds to the state directory:
#   krb5/        kdc.conf, krb5.conf, the KDC database and its stash, the
#                user's ticket cache (user.ccache)
#   keytabs/     rm, nm, nn, dn, HTTP (SPNEGO) and the user's keytab
#   tls/         the test CA (ca.pem, ca.key), the daemons' keystore and
#                the truststore (PKCS12), with --hdfs only
#   logs/krb5kdc.log
#
# Principals (R = the realm, H = the cluster's address, an IP literal):
#   rm/H@R nm/H@R nn/H@R dn/H@R HTTP/H@R   services
#   nm/N@R HTTP/N@R                         with --nodes > 1, for each node
#                                           address N instead of nm/H (keytab
#                                           nm-N.keytab; HTTP.keytab holds all)
#   <OS user>@R                             the user (TONY_TEST_PRINCIPAL)
# The site files name rm, nn and HTTP as <service>/_HOST@R, as production
# does. nm and dn are written with H itself: Hadoop substitutes _HOST in
# them with the machine's canonical name (the NodeManager's login) or with
# the connection's source address (the NameNode checking a DataNode), and
# both are 127.0.0.1 / localhost here, whatever address the daemons bind.
# Several nodes: each NodeManager's own config names nm/N. The RM's names
# no NodeManager principal: the RM would check each NodeManager against it
# with _HOST replaced by the connection's source address, which is
# 127.0.0.1 (`localhost`) for every node (the IPC client binds the host of
# its principal only when an interface carries that address, and lo carries
# only 127.0.0.1). Instead the resource tracker's service ACL
# (hadoop-policy.xml) admits the user `yarn` only, which nm/* maps to.

readonly krb5_realm=TONY.TEST
readonly kdc_port=10088
# shellcheck disable=SC2034 # the NameNodes' HTTPS ports are cluster.sh's
readonly nn_https_port=9871 dn_https_port=9865 nn2_https_port=9881

krb5_dir="$state/krb5"
keytab_dir="$state/keytabs"
tls_dir="$state/tls"

# The principal of the user the containers run as (HDFS owner, YARN app
# user): the OS user's name, which auth_to_local maps back to that name.
secure_user_principal() {
  echo "$(id -un)@$krb5_realm"
}

# The user the user may submit for (Hadoop's proxy users), as a workflow
# scheduler's account submits for the people it serves; nobody else.
secure_proxied_user() {
  echo "tonyguest"
}

# Another person of the realm, who owns none of the user's jobs: what the
# cluster shows them of those jobs is what the jobs' ACLs allow (tests of
# doc/operations.md "View ACLs"). No OS account: no groups.
secure_other_user() {
  echo "tonyother"
}

# Prints the path of a Kerberos or TLS program: on PATH, else in
# $TONY_KRB5_SBIN (default /usr/sbin, where Debian keeps krb5kdc, kdb5_util
# and kadmin.local, and which a non-root PATH may lack). Fails when absent.
secure_tool() {
  if command -v "$1" >/dev/null; then
    command -v "$1"
  elif [[ -x "${TONY_KRB5_SBIN:-/usr/sbin}/$1" ]]; then
    echo "${TONY_KRB5_SBIN:-/usr/sbin}/$1"
  else
    return 1
  fi
}

# Exits 1 with what to install when a program of the secure cluster is
# missing.
secure_check_tools() {
  local tool missing=()
  for tool in krb5kdc kdb5_util kadmin.local kinit klist kdestroy openssl; do
    secure_tool "$tool" >/dev/null || missing+=("$tool")
  done
  [[ -x "$(keytool_path)" ]] || missing+=("keytool (beside $(yarn_java))")
  ((${#missing[@]} == 0)) ||
    yarn_die "cluster.sh: --secure needs MIT Kerberos and OpenSSL; not found: ${missing[*]} (scripts/setup.sh installs them: apt-get install krb5-kdc krb5-admin-server krb5-user openssl)"
}

# The JDK's keytool, beside the java the daemons run on.
keytool_path() {
  echo "$(dirname "$(readlink -f "$(yarn_java)")")/keytool"
}

# -- the KDC -------------------------------------------------------------------

# AES only: Java 17 rejects DES, RC4 and the other weak enctypes. No DNS:
# host names are used as written, IP literals included.
write_krb5_conf() {
  local enctypes="aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96"
  local node node_realms=""
  if ! single_node; then
    for node in "${nodes[@]}"; do
      node_realms+="  $node = $krb5_realm"$'\n'
    done
  fi
  mkdir -p "$krb5_dir" "$keytab_dir"
  cat >"$krb5_dir/krb5.conf" <<EOF
# Written by scripts/yarn/cluster.sh --secure: the client side of realm
# $krb5_realm (KRB5_CONFIG for MIT tools and libraries,
# -Djava.security.krb5.conf for JVMs).
[libdefaults]
  default_realm = $krb5_realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  # TCP only: one transport for the KDC, and no UDP size fallbacks.
  udp_preference_limit = 1
  default_tkt_enctypes = $enctypes
  default_tgs_enctypes = $enctypes
  permitted_enctypes = $enctypes
  ticket_lifetime = 24h
  renew_lifetime = 7d
  forwardable = true

[realms]
  $krb5_realm = {
    kdc = $host:$kdc_port
  }

[domain_realm]
  $host = $krb5_realm
${node_realms%$'\n'}
EOF
  cat >"$krb5_dir/kdc.conf" <<EOF
# Written by scripts/yarn/cluster.sh --secure: the KDC of realm
# $krb5_realm (KRB5_KDC_PROFILE), listening on $host only.
[kdcdefaults]
  kdc_listen = $host:$kdc_port
  kdc_tcp_listen = $host:$kdc_port

[realms]
  $krb5_realm = {
    database_name = $krb5_dir/principal
    key_stash_file = $krb5_dir/stash
    acl_file = $krb5_dir/kadm5.acl
    max_life = 24h
    max_renewable_life = 7d
    master_key_type = aes256-cts-hmac-sha1-96
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    default_principal_flags = +preauth
  }

[logging]
  kdc = FILE:$state/logs/krb5kdc.log

[plugins]
  # SPAKE needs groups configured; without this the KDC logs an error.
  kdcpreauth = {
    disable = spake
  }
EOF
  : >"$krb5_dir/kadm5.acl"
  (
    umask 077
    head -c 32 /dev/urandom | base64 >"$krb5_dir/http-signature.secret"
  )
}

# Runs a kadmin.local script on the cluster's database (no kadmind: the
# tests and cluster.sh edit the database directly).
kadmin_local() {
  KRB5_CONFIG="$krb5_dir/krb5.conf" KRB5_KDC_PROFILE="$krb5_dir/kdc.conf" \
    "$(secure_tool kadmin.local)" -r "$krb5_realm" >>"$state/logs/kadmin.log" 2>&1
}

# Creates the realm's database, the principals and one keytab each.
create_realm() {
  local master
  master=$(head -c 24 /dev/urandom | base64)
  KRB5_CONFIG="$krb5_dir/krb5.conf" KRB5_KDC_PROFILE="$krb5_dir/kdc.conf" \
    "$(secure_tool kdb5_util)" create -s -r "$krb5_realm" -P "$master" \
    >"$state/logs/kdb5_util.log" 2>&1 ||
    {
      cat "$state/logs/kdb5_util.log" >&2
      yarn_die "cluster.sh: creating the Kerberos database in $krb5_dir failed"
    }
  local service user keytab node
  local -a keytabs=(rm nn dn HTTP user other) services=(rm nn dn HTTP)
  # --hdfs-ha: the JournalNodes' principal.
  if ((hdfs_ha)); then
    keytabs+=(jn)
    services+=(jn)
  fi
  user=$(secure_user_principal)
  {
    for service in "${services[@]}"; do
      echo "addprinc -randkey $service/$host"
      echo "ktadd -k $keytab_dir/$service.keytab $service/$host"
    done
    if single_node; then
      echo "addprinc -randkey nm/$host"
      echo "ktadd -k $keytab_dir/nm.keytab nm/$host"
    else
      # A NodeManager's web pages answer SPNEGO as HTTP/<its address>.
      for node in "${nodes[@]}"; do
        echo "addprinc -randkey nm/$node"
        echo "ktadd -k $keytab_dir/nm-$node.keytab nm/$node"
        echo "addprinc -randkey HTTP/$node"
        echo "ktadd -k $keytab_dir/HTTP.keytab HTTP/$node"
      done
    fi
    echo "addprinc -randkey $user"
    echo "ktadd -k $keytab_dir/user.keytab $user"
    echo "addprinc -randkey $(secure_other_user)@$krb5_realm"
    echo "ktadd -k $keytab_dir/other.keytab $(secure_other_user)@$krb5_realm"
  } | kadmin_local || true
  if single_node; then
    keytabs+=(nm)
  else
    for node in "${nodes[@]}"; do
      keytabs+=("nm-$node")
    done
  fi
  # kadmin.local reading a script exits 0 whatever failed: check its work.
  for keytab in "${keytabs[@]}"; do
    [[ -s "$keytab_dir/$keytab.keytab" ]] || {
      tail -n 20 "$state/logs/kadmin.log" >&2
      yarn_die "cluster.sh: making the keytab of $keytab failed (log: $state/logs/kadmin.log)"
    }
  done
  chmod 600 "$keytab_dir"/*.keytab
}

# Starts the KDC in its own session and waits until it issues the user's
# ticket (krb5/user.ccache). Shows the KDC's log and exits 1 when it dies
# or does not answer.
start_kdc() {
  mkdir -p "$state/pids" "$state/logs"
  (
    export KRB5_CONFIG="$krb5_dir/krb5.conf" KRB5_KDC_PROFILE="$krb5_dir/kdc.conf"
    exec setsid "$(secure_tool krb5kdc)" -n -r "$krb5_realm" -P "$state/pids/krb5kdc.pid" \
      </dev/null >>"$state/logs/krb5kdc.log" 2>&1
  ) &
  local pid=$! deadline=$((SECONDS + 20)) err
  echo "$pid" >"$state/pids/krb5kdc.pid"
  while :; do
    wait_exec "$pid" ||
      fail_start "the KDC (krb5kdc) exited during start (log: $state/logs/krb5kdc.log)"
    if err=$(kinit_user 2>&1); then
      return 0
    fi
    ((SECONDS < deadline)) ||
      fail_start "the KDC on $host:$kdc_port gave no ticket after 20s: $err"
    sleep 0.2
  done
}

# kinit for the user from its keytab, into the cluster's user ticket cache.
kinit_user() {
  KRB5_CONFIG="$krb5_dir/krb5.conf" kinit -kt "$keytab_dir/user.keytab" \
    -c "$krb5_dir/user.ccache" "$(secure_user_principal)"
}

# -- TLS -----------------------------------------------------------------------

# A test CA and a server certificate for the cluster's address (subject
# alternative name IP:<host>, so Java's and curl's host checks pass), made
# with openssl (milliseconds) rather than keytool, whose JVMs take seconds
# each on a busy machine. Java reads the PKCS12 keystore as it is; the
# truststore needs keytool, as Java only trusts PKCS12 certificates that
# carry its own trust attribute.
make_tls() {
  local pass
  pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  mkdir -p "$tls_dir"
  (
    cd "$tls_dir"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 \
      -subj "/CN=tony test CA $host" -addext basicConstraints=critical,CA:true \
      -addext keyUsage=critical,keyCertSign,cRLSign \
      -keyout ca.key -out ca.pem &&
      openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=$host" \
        -keyout server.key -out server.csr &&
      printf 'subjectAltName=IP:%s\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' \
        "$host" >server.ext &&
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
        -days 3650 -sha256 -extfile server.ext -out server.pem &&
      openssl pkcs12 -export -name server -inkey server.key -in server.pem \
        -certfile ca.pem -passout "pass:$pass" -out keystore.p12 &&
      "$(keytool_path)" -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -importcert -noprompt \
        -alias tony-test-ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 \
        -storepass "$pass" &&
      chmod 644 ca.pem
  ) >"$state/logs/tls.log" 2>&1 || {
    cat "$state/logs/tls.log" >&2
    yarn_die "cluster.sh: making the TLS keystore in $tls_dir failed"
  }
  write_ssl_conf "$pass"
}

# ssl-server.xml (the HTTPS servers of the NameNode and DataNode) and
# ssl-client.xml (Java clients of swebhdfs://), on the classpath via conf/.
write_ssl_conf() {
  local pass=$1
  {
    xml_begin
    prop ssl.server.keystore.type pkcs12
    prop ssl.server.keystore.location "$tls_dir/keystore.p12"
    prop ssl.server.keystore.password "$pass"
    prop ssl.server.keystore.keypassword "$pass"
    prop ssl.server.truststore.type pkcs12
    prop ssl.server.truststore.location "$tls_dir/truststore.p12"
    prop ssl.server.truststore.password "$pass"
    xml_end
  } >"$conf/ssl-server.xml"
  {
    xml_begin
    prop ssl.client.truststore.type pkcs12
    prop ssl.client.truststore.location "$tls_dir/truststore.p12"
    prop ssl.client.truststore.password "$pass"
    xml_end
  } >"$conf/ssl-client.xml"
  chmod 600 "$conf/ssl-server.xml"
}

# -- site files ----------------------------------------------------------------

# The delegation-token knobs in milliseconds; defaults are Hadoop's.
token_max_lifetime_ms() {
  echo $((${TONY_YARN_TOKEN_MAX_LIFETIME:-604800} * 1000))
}

token_renew_interval_ms() {
  echo $((${TONY_YARN_TOKEN_RENEW_INTERVAL:-86400} * 1000))
}

# Keeps the lifetimes (seconds) for `env`.
save_token_lifetimes() {
  mkdir -p "$state/token-lifetimes"
  echo $(($(token_max_lifetime_ms) / 1000)) >"$state/token-lifetimes/max"
  echo $(($(token_renew_interval_ms) / 1000)) >"$state/token-lifetimes/renew"
}

secure_core_props() {
  prop hadoop.security.authentication kerberos
  prop hadoop.security.authorization true
  # Services map to the accounts a production cluster runs them as (hdfs,
  # yarn), so the user is neither the HDFS superuser nor a YARN admin. Any
  # other principal of the realm maps to its first component, written out
  # rather than left to DEFAULT: DEFAULT needs the JVM to know the default
  # realm, and a Java AM in a container reads /etc/krb5.conf, not ours.
  local realm_re=${krb5_realm//./\\.}
  prop hadoop.security.auth_to_local "$(
    printf '%s\n' \
      "RULE:[2:\$1@\$0](nn@$realm_re)s/.*/hdfs/" \
      "RULE:[2:\$1@\$0](dn@$realm_re)s/.*/hdfs/" \
      "RULE:[2:\$1@\$0](jn@$realm_re)s/.*/hdfs/" \
      "RULE:[2:\$1@\$0](rm@$realm_re)s/.*/yarn/" \
      "RULE:[2:\$1@\$0](nm@$realm_re)s/.*/yarn/" \
      "RULE:[1:\$1@\$0](.*@$realm_re)s/@.*//" \
      "RULE:[2:\$1@\$0](.*@$realm_re)s/@.*//" \
      "DEFAULT"
  )"
  # SPNEGO on every web endpoint (the RM swaps in its own filter, which
  # also takes RM delegation tokens).
  prop hadoop.http.filter.initializers org.apache.hadoop.security.AuthenticationFilterInitializer
  prop hadoop.http.authentication.type kerberos
  prop hadoop.http.authentication.simple.anonymous.allowed false
  prop hadoop.http.authentication.kerberos.principal "HTTP/_HOST@$krb5_realm"
  prop hadoop.http.authentication.kerberos.keytab "$keytab_dir/HTTP.keytab"
  # One secret signs the auth cookies of every daemon (else each logs that
  # it falls back to a random one).
  prop hadoop.http.authentication.signature.secret.file "$krb5_dir/http-signature.secret"
  # Proxy users: the user may act for one other user, from any host.
  prop "hadoop.proxyuser.$(id -un).hosts" "*"
  prop "hadoop.proxyuser.$(id -un).users" "$(secure_proxied_user)"
}

# Arg 1: the node whose NodeManager reads the file, or empty for the RM's
# copy of a cluster of several nodes.
secure_yarn_props() {
  local node=$1
  prop yarn.resourcemanager.principal "rm/_HOST@$krb5_realm"
  prop yarn.resourcemanager.keytab "$keytab_dir/rm.keytab"
  prop yarn.resourcemanager.webapp.spnego-principal "HTTP/_HOST@$krb5_realm"
  prop yarn.resourcemanager.webapp.spnego-keytab-file "$keytab_dir/HTTP.keytab"
  if single_node; then
    prop yarn.nodemanager.principal "nm/$host@$krb5_realm"
    prop yarn.nodemanager.keytab "$keytab_dir/nm.keytab"
  elif [[ -n "$node" ]]; then
    prop yarn.nodemanager.principal "nm/$node@$krb5_realm"
    prop yarn.nodemanager.keytab "$keytab_dir/nm-$node.keytab"
  fi
  prop yarn.nodemanager.webapp.spnego-principal "HTTP/_HOST@$krb5_realm"
  prop yarn.nodemanager.webapp.spnego-keytab-file "$keytab_dir/HTTP.keytab"
  # Application ACLs: only the owner (and the yarn admins) may view or
  # kill an application, through RPC, the web UI and the web proxy.
  prop yarn.acl.enable true
  prop yarn.admin.acl yarn
  prop yarn.resourcemanager.delegation.token.max-lifetime "$(token_max_lifetime_ms)"
  prop yarn.resourcemanager.delegation.token.renew-interval "$(token_renew_interval_ms)"
}

# hadoop-policy.xml of a cluster of several nodes (see the note on
# principals above): only `yarn` may heartbeat as a NodeManager.
write_policy() {
  single_node && return 0
  {
    xml_begin
    prop security.resourcetracker.protocol.acl yarn
    xml_end
  } >"$conf/hadoop-policy.xml"
}

# Arg 1: the NameNode's HTTPS port (the second NameNode's is its own;
# empty with --hdfs-ha, whose NameNodes' addresses are hdfsha.sh's).
secure_hdfs_props() {
  local https_port=$1
  prop dfs.block.access.token.enable true
  # --hdfs-ha: written with H, as dn is: a JournalNode (and the other
  # NameNode) checks a NameNode against it with _HOST replaced by the
  # connection's source address, 127.0.0.1 (`localhost`) here.
  if ((hdfs_ha)); then
    prop dfs.namenode.kerberos.principal "nn/$host@$krb5_realm"
  else
    prop dfs.namenode.kerberos.principal "nn/_HOST@$krb5_realm"
  fi
  prop dfs.namenode.keytab.file "$keytab_dir/nn.keytab"
  prop dfs.namenode.kerberos.internal.spnego.principal "HTTP/_HOST@$krb5_realm"
  prop dfs.datanode.kerberos.principal "dn/$host@$krb5_realm"
  prop dfs.datanode.keytab.file "$keytab_dir/dn.keytab"
  prop dfs.web.authentication.kerberos.principal "HTTP/_HOST@$krb5_realm"
  prop dfs.web.authentication.kerberos.keytab "$keytab_dir/HTTP.keytab"
  # A secure DataNode on unprivileged ports: SASL on data transfer plus
  # HTTPS only (DataNode.checkSecureConfig refuses anything else).
  prop dfs.data.transfer.protection "$rpc_protection"
  prop dfs.http.policy HTTPS_ONLY
  [[ -z "$https_port" ]] || prop dfs.namenode.https-address "$host:$https_port"
  prop dfs.datanode.https.address "$host:$dn_https_port"
  prop dfs.permissions.enabled true
  prop dfs.namenode.delegation.token.max-lifetime "$(token_max_lifetime_ms)"
  prop dfs.namenode.delegation.token.renew-interval "$(token_renew_interval_ms)"
}

# -- HTTP from the script --------------------------------------------------------

# curl as the user (SPNEGO) trusting the test CA: the secure cluster's
# REST and JMX endpoints refuse anonymous requests.
secure_curl() {
  KRB5_CONFIG="$krb5_dir/krb5.conf" KRB5CCNAME="$krb5_dir/user.ccache" \
    curl --negotiate -u : --cacert "$tls_dir/ca.pem" "$@"
}

# Makes /tmp (1777) and the home directories of the user and of the user it
# may act for (each owned by its user) as the HDFS superuser, as an
# administrator of a new cluster would: with permissions on, the user may
# not write to / (owned by hdfs). Arg 1: the
# (active) NameNode's HTTPS endpoint, https://host:port.
bootstrap_hdfs_dirs() {
  local cache="$krb5_dir/hdfs.ccache" user guest base out
  user=$(id -un)
  guest=$(secure_proxied_user)
  base="$1/webhdfs/v1"
  KRB5_CONFIG="$krb5_dir/krb5.conf" kinit -kt "$keytab_dir/nn.keytab" -c "$cache" "nn/$host" ||
    fail_start "kinit as nn/$host failed"
  if ! out=$(
    hdfs_admin_put() {
      KRB5_CONFIG="$krb5_dir/krb5.conf" KRB5CCNAME="$cache" \
        curl -sS -f -m 30 --negotiate -u : --cacert "$tls_dir/ca.pem" -X PUT "$base$1" 2>&1
    }
    hdfs_admin_put "/tmp?op=MKDIRS&permission=1777" &&
      hdfs_admin_put "/tmp?op=SETPERMISSION&permission=1777" &&
      hdfs_admin_put "/user/$user?op=MKDIRS&permission=755" &&
      hdfs_admin_put "/user/$user?op=SETOWNER&owner=$user" &&
      hdfs_admin_put "/user/$guest?op=MKDIRS&permission=755" &&
      hdfs_admin_put "/user/$guest?op=SETOWNER&owner=$guest"
  ); then
    fail_start "making /tmp, /user/$user and /user/$guest in HDFS failed: $out"
  fi
  KRB5_CONFIG="$krb5_dir/krb5.conf" kdestroy -q -c "$cache" || true
}

# -- env -----------------------------------------------------------------------

# The variables a client of the secure cluster needs, as `export` lines;
# $1 is the address the cluster runs on.
secure_env_lines() {
  local addr=$1
  printf 'export %s=%q\n' \
    KRB5_CONFIG "$krb5_dir/krb5.conf" \
    KRB5CCNAME "$krb5_dir/user.ccache" \
    KRB5_KDC_PROFILE "$krb5_dir/kdc.conf" \
    TONY_TEST_REALM "$krb5_realm" \
    TONY_TEST_KDC "$addr:$kdc_port" \
    TONY_TEST_PRINCIPAL "$(secure_user_principal)" \
    TONY_TEST_PROXIED_USER "$(secure_proxied_user)" \
    TONY_TEST_OTHER_PRINCIPAL "$(secure_other_user)@$krb5_realm" \
    TONY_TEST_OTHER_KEYTAB "$keytab_dir/other.keytab" \
    TONY_TEST_KEYTAB "$keytab_dir/user.keytab" \
    TONY_TEST_TOKEN_MAX_LIFETIME "$(cat "$state/token-lifetimes/max" 2>/dev/null)" \
    TONY_TEST_TOKEN_RENEW_INTERVAL "$(cat "$state/token-lifetimes/renew" 2>/dev/null)"
  if [[ -s "$tls_dir/ca.pem" ]]; then
    printf 'export %s=%q\n' TONY_TEST_CA_FILE "$tls_dir/ca.pem"
  fi
}
