"""The secure (Kerberos) test cluster, for tests registered with
FIXTURES_REQUIRED secure (tests/integration/CMakeLists.txt). ctest gives
them TONY_SECURE_YARN_DIR, the cluster's state directory; everything else
comes from `scripts/yarn/cluster.sh env`, as a person would get it.

    sys.path.insert(0, <tests/integration>)
    import securelib
    env = securelib.client_env()            # the user's ticket cache (kinit'ed by start)
    env = securelib.keytab_env(tmp_path)    # a fresh cache of our own, from the keytab
    env = securelib.no_ticket_env(tmp_path) # no Kerberos credentials at all
    securelib.yarn_sh("dfs", "-ls", "/", env=env)

The variables (doc/local-yarn.md): HADOOP_CONF_DIR, TONY_YARN_DIR,
TONY_YARN_HOST, KRB5_CONFIG, KRB5CCNAME, KRB5_KDC_PROFILE (kadmin.local
works on the cluster's KDC), TONY_TEST_REALM, TONY_TEST_KDC,
TONY_TEST_PRINCIPAL, TONY_TEST_PROXIED_USER (whom the user may act for),
TONY_TEST_OTHER_PRINCIPAL and TONY_TEST_OTHER_KEYTAB (another person, who
owns none of the user's jobs), TONY_TEST_KEYTAB, TONY_TEST_TOKEN_MAX_LIFETIME,
TONY_TEST_TOKEN_RENEW_INTERVAL and TONY_TEST_CA_FILE."""

import os
import shlex
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER_SH = os.path.join(ROOT, "scripts", "yarn", "cluster.sh")
YARN_SH = os.path.join(ROOT, "scripts", "yarn", "yarn.sh")


def state_dir():
    """The secure cluster's state directory, from ctest."""
    state = os.environ.get("TONY_SECURE_YARN_DIR")
    if not state:
        raise RuntimeError(
            "TONY_SECURE_YARN_DIR is not set: run this test through ctest (fixture "
            "'secure'), or start a cluster with 'scripts/yarn/cluster.sh start --secure "
            "--hdfs --dir DIR' and set TONY_SECURE_YARN_DIR=DIR")
    return state


def cluster_env(state=None):
    """The `export` lines of `cluster.sh env` as a dict."""
    state = state or state_dir()
    proc = subprocess.run([CLUSTER_SH, "env", "--dir", state], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"cluster.sh env --dir {state} failed: {proc.stderr.strip()}")
    env = {}
    for line in proc.stdout.splitlines():
        words = shlex.split(line)
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            name, value = words[1].split("=", 1)
            env[name] = value
    if "TONY_TEST_PRINCIPAL" not in env:
        raise RuntimeError(f"the cluster in {state} is not a secure one (no --secure)")
    return env


def client_env(base=None):
    """A copy of `base` (default os.environ) with the cluster's variables."""
    env = dict(os.environ if base is None else base)
    env.update(cluster_env())
    return env


def keytab_env(tmp_dir, base=None):
    """client_env with a ticket cache of its own in tmp_dir, filled from the
    user's keytab (so a test can destroy or expire it freely)."""
    env = client_env(base)
    cache = os.path.join(str(tmp_dir), "keytab.ccache")
    subprocess.run(["kinit", "-kt", env["TONY_TEST_KEYTAB"], "-c", cache,
                    env["TONY_TEST_PRINCIPAL"]], env=env, check=True, timeout=60)
    env["KRB5CCNAME"] = cache
    return env


def other_user_env(tmp_dir, base=None):
    """client_env logged in as another person of the realm (a ticket cache
    of its own in tmp_dir, from TONY_TEST_OTHER_KEYTAB)."""
    env = client_env(base)
    cache = os.path.join(str(tmp_dir), "other.ccache")
    subprocess.run(["kinit", "-kt", env["TONY_TEST_OTHER_KEYTAB"], "-c", cache,
                    env["TONY_TEST_OTHER_PRINCIPAL"]], env=env, check=True, timeout=60)
    env["KRB5CCNAME"] = cache
    return env


def no_ticket_env(tmp_dir, base=None):
    """client_env whose ticket cache does not exist: no credentials."""
    env = client_env(base)
    env["KRB5CCNAME"] = os.path.join(str(tmp_dir), "no-ticket.ccache")
    return env


def yarn_sh(*args, env, timeout=120):
    """Hadoop's own CLI (scripts/yarn/yarn.sh) against the secure cluster."""
    return subprocess.run([YARN_SH, *args], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)
