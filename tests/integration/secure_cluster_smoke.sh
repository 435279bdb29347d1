#!/usr/bin/env bash
# Smoke test of the kerberized local cluster (scripts/yarn/cluster.sh start
# --secure --hdfs) with Hadoop's own clients only, so that the cluster is
# known good before tony speaks to it: the user's ticket from `cluster.sh
# env` lists the node, runs DistributedShell and reads and writes HDFS; curl
# reads WebHDFS with SPNEGO over HTTPS with the test CA; an HDFS delegation
# token works with no ticket at all; clients without credentials are
# refused at once; application ACLs and HDFS permissions hold; the RM's web
# proxy serves an authenticated client. Then stop leaves nothing behind.
#
#   tests/integration/secure_cluster_smoke.sh [--rpc-protection P]
#
# With --rpc-protection integrity or privacy (hadoop.rpc.protection and
# dfs.data.transfer.protection) only the core runs: DistributedShell and an
# HDFS round trip, whose RPCs and block transfers are then wrapped, and with
# TONY_BIN set tony's env-check job.
#
# Exits 0 when every check passes, 1 on a failed check (with the daemons'
# logs), 77 when java or mvn is missing. Runs on $TONY_YARN_HOST with the
# fixed ports of cluster.sh; the cluster is stopped on every exit path.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/scripts/yarn/cluster.sh"
yarn="$root/scripts/yarn/yarn.sh"
host=${TONY_YARN_HOST:-127.0.0.1}

protection=authentication
case "${1:-}" in
  "") ;;
  --rpc-protection) protection=${2:?--rpc-protection needs a value} ;;
  *)
    echo "usage: $0 [--rpc-protection authentication|integrity|privacy]" >&2
    exit 2
    ;;
esac

for tool in java mvn curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "secure_cluster_smoke: skipped, $tool not found (scripts/setup.sh installs it)"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/tony-secure-smoke.XXXXXX")
state="$work/cluster"
# shellcheck source=tests/integration/smoke_lib.sh
source "$here/smoke_lib.sh"
smoke_init

# Token lifetimes the test can recognise in a token it fetches.
export TONY_YARN_TOKEN_MAX_LIFETIME=900 TONY_YARN_TOKEN_RENEW_INTERVAL=300

# -- start ---------------------------------------------------------------------

t0=$(now)
conf=$("$cluster" start --secure --hdfs --rpc-protection "$protection" --dir "$state") ||
  fail "cluster.sh start --secure --hdfs exited non-zero"
t1=$(now)
[[ "$conf" == "$state/conf" ]] || fail "start printed '$conf', expected $state/conf"
pass "secure cluster ($protection) started in $(elapsed "$t0" "$t1")s"

# A second start renews the user's ticket, which a long-lived cluster
# outlives.
kdestroy -q -c "$state/krb5/user.ccache" || fail "kdestroy of the user's ticket cache failed"
again=$("$cluster" start --secure --hdfs --rpc-protection "$protection" --dir "$state" 2>/dev/null) ||
  fail "a second start --secure of the running cluster exited non-zero"
[[ "$again" == "$conf" ]] || fail "a second start printed '$again', expected '$conf'"
klist -s -c "$state/krb5/user.ccache" || fail "a second start did not renew the user's ticket"
out=$("$cluster" start --hdfs --rpc-protection "$protection" --dir "$state" 2>&1) &&
  fail "start without --secure on the running secure cluster succeeded"
grep -q 'a different or partial cluster runs' <<<"$out" ||
  fail "start without --secure was refused with: $out"
status=$("$cluster" status --dir "$state") || fail "status says the secure cluster is not up"
grep -q "^secure:  Kerberos realm TONY.TEST, KDC $host:10088, user $(id -un)@TONY.TEST, rpc protection $protection$" <<<"$status" ||
  fail "status does not report secure mode: $status"
pass "start is idempotent and renews the ticket, refuses a SIMPLE start on the secure cluster; status reports secure mode"

env_lines=$("$cluster" env --dir "$state") || fail "cluster.sh env exited non-zero"
eval "$env_lines"
for var in HADOOP_CONF_DIR KRB5_CONFIG KRB5CCNAME TONY_TEST_PRINCIPAL TONY_TEST_KEYTAB \
  TONY_TEST_CA_FILE; do
  [[ -n "${!var:-}" ]] || fail "cluster.sh env does not set $var: $env_lines"
done
[[ -s "$KRB5_CONFIG" && -s "$TONY_TEST_KEYTAB" && -s "$TONY_TEST_CA_FILE" ]] ||
  fail "cluster.sh env names missing files: $env_lines"
klist -s -c "$KRB5CCNAME" || fail "no valid ticket in $KRB5CCNAME after start"
[[ "$(klist -c "$KRB5CCNAME" | sed -n 's/^Default principal: //p')" == "$TONY_TEST_PRINCIPAL" ]] ||
  fail "the ticket cache is not $TONY_TEST_PRINCIPAL's: $(klist -c "$KRB5CCNAME")"
pass "cluster.sh env: a ticket cache for $TONY_TEST_PRINCIPAL, a keytab, krb5.conf and the CA"

# A cache with no ticket, for the clients that must be refused or must
# work from a token alone.
no_ticket="$work/no-ticket.ccache"

nodes=$("$yarn" node -list 2>/dev/null) || fail "yarn node -list failed with the user's ticket"
grep -qE "^ *$host:45454[[:space:]]+RUNNING" <<<"$nodes" ||
  fail "yarn node -list shows no RUNNING node: $nodes"
pass "yarn node -list (Kerberos) shows the RUNNING node"

# -- DistributedShell and HDFS --------------------------------------------------

app=$(run_dshell -shell_command "exit 0" -num_containers 1 -container_memory 128) ||
  fail "DistributedShell 'exit 0' failed"
[[ "$(app_field "$app" State)/$(app_field "$app" Final-State)" == FINISHED/SUCCEEDED ]] ||
  fail "$app did not end FINISHED/SUCCEEDED"
pass "DistributedShell 'exit 0' ($app) is FINISHED/SUCCEEDED with rpc protection $protection"

echo "secure smoke" >"$work/file.txt"
"$yarn" dfs -put -f "$work/file.txt" "/user/$(id -un)/smoke.txt" 2>/dev/null ||
  fail "hdfs dfs -put to the user's home failed"
got=$("$yarn" dfs -cat "/user/$(id -un)/smoke.txt" 2>/dev/null) || fail "hdfs dfs -cat failed"
[[ "$got" == "secure smoke" ]] || fail "hdfs dfs -cat returned '$got'"
pass "hdfs dfs -put and -cat (Kerberos, data transfer protection $protection)"

if [[ "$protection" != authentication ]]; then
  grep -q "<name>hadoop.rpc.protection</name><value>$protection</value>" "$conf/core-site.xml" ||
    fail "core-site.xml lacks hadoop.rpc.protection=$protection"
  # tony on this cluster (ctest gives TONY_BIN): tony-submit's GSSAPI to the
  # RM and the NameNode, the AM's and executors' token connections, all
  # wrapped at this protection; staging over WebHDFS with SPNEGO and HTTPS.
  # The binaries are used where they are (install_dir): uploading and
  # localizing sanitizer builds through encrypted block transfers takes
  # minutes on a small machine.
  if [[ -n "${TONY_BIN:-}" && -x "$TONY_BIN/tony-submit" ]]; then
    out=$(TONY_CA_FILE="$TONY_TEST_CA_FILE" timeout 300 "$TONY_BIN/tony-submit" --backend yarn \
      --set "cluster.install_dir=\"$TONY_BIN\"" \
      "$root/tests/integration/env_check/job.toml" 2>&1) ||
      fail "tony's env-check job failed on the $protection cluster: $(tail -n 20 <<<"$out")"
    pass "tony's env-check job SUCCEEDED on the secure cluster with rpc protection $protection"
  fi
  # Without pid files, stop finds the JVMs by their marker and the KDC by
  # its command line.
  rm -f "$state"/pids/*.pid
  "$cluster" stop --dir "$state" >/dev/null 2>&1 || fail "cluster.sh stop exited non-zero"
  left=$(pgrep -fa -- "-Dtony[.]yarn[.]dir=${state//./[.]}( |$)|${state//./[.]}/pids/krb5kdc[.]pid" || true)
  [[ -z "$left" ]] || fail "without pid files, daemons or the KDC survive stop: $left"
  [[ ! -e "$state" ]] || fail "stop left $state"
  pass "stop without pid files leaves no daemon, no KDC and no state directory"
  echo "smoke: $passed passed, $failed failed"
  exit 0
fi

owner=$("$yarn" dfs -stat %u "/user/$(id -un)/smoke.txt" 2>/dev/null)
[[ "$owner" == "$(id -un)" ]] ||
  fail "the file belongs to '$owner', expected $(id -un) (auth_to_local of $TONY_TEST_PRINCIPAL)"
if out=$("$yarn" dfs -put -f "$work/file.txt" /smoke.txt 2>&1); then
  fail "the user could write to / (owned by hdfs): permissions are off"
fi
grep -q 'Permission denied' <<<"$out" || fail "writing to / failed for another reason: $out"
pass "files belong to $(id -un); / refuses the user (HDFS permissions on)"

tokens=$("$yarn" logs -applicationId "$app" -log_files AppMaster.stderr 2>&1) ||
  fail "yarn logs -applicationId $app failed: $tokens"
grep -q 'Kind: HDFS_DELEGATION_TOKEN' <<<"$tokens" ||
  fail "the AM of $app got no HDFS delegation token: $(grep -i token <<<"$tokens" | head -5)"
pass "the AM got the client's HDFS delegation token; yarn logs reads aggregated logs"

# -- WebHDFS over HTTPS with SPNEGO -----------------------------------------------

url="https://$host:9871/webhdfs/v1/user/$(id -un)/smoke.txt?op=OPEN"
got=$(curl -sS -f -L -m 30 --negotiate -u : --cacert "$TONY_TEST_CA_FILE" "$url") ||
  fail "curl --negotiate could not read $url"
[[ "$got" == "secure smoke" ]] || fail "WebHDFS returned '$got'"
code=$(curl -s -o /dev/null -m 30 -w '%{http_code}' --cacert "$TONY_TEST_CA_FILE" "$url")
[[ "$code" == 401 ]] || fail "WebHDFS without SPNEGO answered $code, expected 401"
curl -s -o /dev/null -m 30 --negotiate -u : "$url"
rc=$?
[[ $rc == 60 ]] || fail "curl without the test CA exited $rc, expected 60 (certificate not trusted)"
for port in 9870 9864; do
  if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
    fail "plain HTTP port $host:$port is open on a secure cluster (dfs.http.policy=HTTPS_ONLY)"
  fi
done
pass "WebHDFS: SPNEGO over HTTPS reads the file; 401 without a ticket; the CA is needed; no plain HTTP"

# -- a delegation token, and no credentials ---------------------------------------

rm_principal="rm/$host@$TONY_TEST_REALM"
"$yarn" fetchdt --renewer "$rm_principal" "$work/hdfs.token" >/dev/null 2>&1 ||
  fail "hdfs fetchdt --renewer $rm_principal failed"
printed=$("$yarn" dtutil print "$work/hdfs.token" 2>/dev/null)
line=$(grep '^HDFS_DELEGATION_TOKEN' <<<"$printed") || fail "no HDFS token in: $printed"
read -r _ service renewer _ <<<"$line"
[[ "$service" == "$host:9000" && "$renewer" == yarn ]] ||
  fail "token for '$service' renewable by '$renewer', expected $host:9000 and yarn: $line"
# The identifier's maxDate - issueDate is the NameNode's max lifetime.
lifetime=$(python3 - "${line##* }" <<'PY'
import base64, sys

def vlong(b, i):
    first = b[i] - 256 if b[i] > 127 else b[i]
    if first >= -112:
        return first, i + 1
    size = -119 - first if first < -120 else -111 - first
    value = int.from_bytes(b[i + 1:i + size], "big")
    return (~value if first < -120 else value), i + size

def text(b, i):
    n, i = vlong(b, i)
    return b[i:i + n], i + n

token = sys.argv[1]
raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
ident, _ = text(raw, 0)
i = 1  # version byte, then owner, renewer, real user
for _ in range(3):
    _, i = text(ident, i)
issue, i = vlong(ident, i)
max_date, i = vlong(ident, i)
print((max_date - issue) // 1000)
PY
)
[[ "$lifetime" == "$TONY_YARN_TOKEN_MAX_LIFETIME" && "$lifetime" == "$TONY_TEST_TOKEN_MAX_LIFETIME" ]] ||
  fail "the token lives ${lifetime}s, expected TONY_YARN_TOKEN_MAX_LIFETIME=$TONY_YARN_TOKEN_MAX_LIFETIME (env says ${TONY_TEST_TOKEN_MAX_LIFETIME:-nothing})"
got=$(HADOOP_TOKEN_FILE_LOCATION="$work/hdfs.token" KRB5CCNAME="$no_ticket" \
  "$yarn" dfs -cat "/user/$(id -un)/smoke.txt" 2>&1) ||
  fail "hdfs dfs -cat with the token and no ticket failed: $got"
[[ "$got" == "secure smoke" ]] || fail "with the token, -cat returned '$got'"
pass "hdfs fetchdt: a token renewable by yarn, living ${lifetime}s, reads HDFS with no ticket"

t0=$(now)
out=$(KRB5CCNAME="$no_ticket" timeout 60 "$yarn" dfs -ls / 2>&1) &&
  fail "hdfs dfs -ls without a ticket succeeded"
grep -q 'Client cannot authenticate via:\[TOKEN, KERBEROS\]' <<<"$out" ||
  fail "hdfs dfs -ls without a ticket failed without the Kerberos error: $(tail -n 3 <<<"$out")"
# The RM client retries for yarn.resourcemanager.connect.max-wait.ms; a
# short one shows the refusal itself.
out=$(KRB5CCNAME="$no_ticket" timeout 60 "$yarn" node \
  -Dyarn.resourcemanager.connect.max-wait.ms=1000 -list 2>&1) &&
  fail "yarn node -list without a ticket succeeded"
grep -q 'Client cannot authenticate via:\[TOKEN, KERBEROS\]' <<<"$out" ||
  fail "yarn node -list without a ticket failed without the Kerberos error: $(tail -n 3 <<<"$out")"
pass "clients without a ticket are refused with 'Client cannot authenticate via:[TOKEN, KERBEROS]' ($(elapsed "$t0" "$(now)")s for both)"

# -- ACLs and the web proxy, on a running application --------------------------------

TONY_YARN_CLIENT_LOG=WARN "$yarn" distributedshell -master_memory 512 -timeout 300000 \
  -shell_command "sleep 300" -num_containers 1 -container_memory 128 >"$work/long.log" 2>&1 &
client=$!
long_app=""
for _ in $(seq 1 120); do
  long_app=$("$yarn" application -list -appStates RUNNING 2>/dev/null | grep -o '^application_[0-9_]*' | head -n1)
  [[ -n "$long_app" ]] && break
  sleep 0.5
done
[[ -n "$long_app" ]] || fail "the long-running DistributedShell application is not RUNNING"

other_cache="$work/other.ccache"
kadmin=$(command -v kadmin.local || echo /usr/sbin/kadmin.local)
if ! { "$kadmin" -q "addprinc -randkey other" >/dev/null 2>&1 &&
  "$kadmin" -q "ktadd -k $work/other.keytab other" >/dev/null 2>&1 &&
  kinit -kt "$work/other.keytab" -c "$other_cache" other; }; then
  fail "could not make a second user principal with kadmin.local (KRB5_KDC_PROFILE)"
fi
out=$(KRB5CCNAME="$other_cache" "$yarn" application -kill "$long_app" 2>&1) &&
  fail "another user killed $long_app"
grep -q 'cannot perform operation MODIFY_APP' <<<"$out" ||
  fail "another user's kill failed without the ACL error: $(tail -n 3 <<<"$out")"
pass "application ACLs: other@$TONY_TEST_REALM may not kill $long_app"

proxy="http://$host:8088/proxy/$long_app/"
code=$(curl -s -o /dev/null -m 30 -w '%{http_code}' "$proxy")
[[ "$code" == 401 ]] || fail "the RM proxy answered $code to an anonymous client, expected 401"
headers=$(curl -sS -m 30 --negotiate -u : -o /dev/null -D - "$proxy") ||
  fail "the RM proxy failed for an authenticated client"
grep -qE "^HTTP/1.1 (200|302)" <<<"$headers" || fail "the RM proxy answered: $headers"
# An AM without a web UI (DistributedShell's) is sent to its RM page.
page=$(curl -sS -f -m 30 --negotiate -u : "http://$host:8088/cluster/app/$long_app") ||
  fail "the RM's page of $long_app failed for an authenticated client"
grep -q "$long_app" <<<"$page" || fail "the RM's page does not name $long_app"
pass "RM web proxy: 401 anonymous, $(head -n1 <<<"$headers" | tr -d '\r') to the owner with SPNEGO, app page served"

"$yarn" application -kill "$long_app" >/dev/null 2>&1 || fail "the owner could not kill $long_app"
[[ "$(app_field "$long_app" State)" == KILLED ]] || fail "$long_app is not KILLED after the owner's kill"
kill "$client" 2>/dev/null
wait "$client" 2>/dev/null
pass "the owner killed $long_app"

# -- stop ----------------------------------------------------------------------------

"$cluster" stop --dir "$state" >/dev/null 2>&1 || fail "cluster.sh stop exited non-zero"
left=$(pgrep -fa -- "-Dtony[.]yarn[.]dir=${state//./[.]}( |$)|${state//./[.]}/pids/krb5kdc[.]pid" || true)
[[ -z "$left" ]] || fail "daemons or the KDC survive stop: $left"
[[ ! -e "$state" ]] || fail "stop left the state directory $state"
code=0
(exec 3<>"/dev/tcp/$host/10088") 2>/dev/null && code=1
((code == 0)) || fail "the KDC port $host:10088 still answers after stop"
pass "stop leaves no daemon, no KDC and no state directory"

echo "smoke: $passed passed, $failed failed"
