"""tony-submit on a Kerberos "cluster": the ResourceManager is Hadoop's own
RPC server from tests/integration/kerberos (ctest fixture `kerberos`,
directory in TONY_KERBEROS_FIXTURE), requiring KERBEROS and privacy. The
tests check what the user sees: the login from a ticket cache, from a
keytab given by flags or by job.toml, a submitted job followed to its end,
and each refusal with its message and exit code (doc/operations.md)."""

import os
import subprocess
import tempfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.environ.get("TONY_BIN", os.path.join(ROOT, "build", "bin"))
SUBMIT = os.path.join(BIN, "tony-submit")
APP = "application_1700000000000_0001"


def fixture():
    d = os.environ.get("TONY_KERBEROS_FIXTURE")
    if not d:
        pytest.skip("TONY_KERBEROS_FIXTURE is not set (fixture.sh start DIR)")
    env = {}
    with open(os.path.join(d, "env")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            env[k] = v
    return env


@pytest.fixture
def world(tmp_path):
    env = fixture()
    env["scratch"] = str(tmp_path)
    return env


def conf_dir(w, port_key="SASL_KERBEROS_PRIVACY_PORT", authentication="kerberos",
             principal="rm/_HOST@TONY.TEST"):
    d = tempfile.mkdtemp(dir=w["scratch"])
    prop = "<property><name>{}</name><value>{}</value></property>"
    with open(os.path.join(d, "core-site.xml"), "w") as f:
        f.write("<configuration>" + prop.format("hadoop.security.authentication",
                                                authentication) + "</configuration>")
    with open(os.path.join(d, "yarn-site.xml"), "w") as f:
        f.write("<configuration>" +
                prop.format("yarn.resourcemanager.address",
                            w["TONY_SERVER_HOST"] + ":" + w[port_key]) +
                prop.format("yarn.resourcemanager.principal", principal) +
                "</configuration>")
    return d


def submit(w, args, ccache=None):
    env = os.environ.copy()
    env["KRB5_CONFIG"] = w["KRB5_CONFIG"]
    env["KRB5CCNAME"] = "FILE:" + (ccache or os.path.join(w["scratch"], "no-such-ccache"))
    env["HOME"] = w["scratch"]
    env.pop("HADOOP_CONF_DIR", None)
    proc = subprocess.run([SUBMIT, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=180, env=env)
    return proc.returncode, proc.stdout


def kinit(w, who="alice"):
    ccache = os.path.join(w["scratch"], "ccache")
    subprocess.run(["kinit", "-kt", keytab(w, who), "-c", "FILE:" + ccache,
                    who + "@TONY.TEST"], check=True,
                   env=dict(os.environ, KRB5_CONFIG=w["KRB5_CONFIG"]))
    return ccache


def keytab(w, who):
    return os.path.join(w["TONY_KEYTABS"], who + ".keytab")


def test_status_over_kerberos_from_the_ticket_cache(world):
    code, out = submit(world, ["--status", APP, "--hadoop-conf", conf_dir(world)],
                       ccache=kinit(world))
    assert code == 0, out
    assert "state: FINISHED" in out, out
    assert "user=alice@TONY.TEST auth=KERBEROS" in out, out


def test_status_with_principal_and_keytab_flags_needs_no_ticket_cache(world):
    code, out = submit(world, ["--status", APP, "--hadoop-conf", conf_dir(world),
                               "--principal", "alice@TONY.TEST",
                               "--keytab", keytab(world, "alice")])
    assert code == 0, out
    assert "user=alice@TONY.TEST auth=KERBEROS" in out, out
    assert not os.path.exists(os.path.join(world["scratch"], "no-such-ccache"))


def test_no_credentials_exit_3_and_say_to_kinit(world):
    code, out = submit(world, ["--status", APP, "--hadoop-conf", conf_dir(world)])
    assert code == 3, out
    assert "tony-submit: no Kerberos credentials: run kinit" in out, out
    assert "or set [security] keytab" in out, out


def test_a_job_is_submitted_and_followed_over_kerberos_with_privacy(world):
    job = os.path.join(world["scratch"], "job.toml")
    with open(job, "w") as f:
        f.write(f"""
name = "krb-job"
framework = "tensorflow"
[code]
command = "true"
[tasks.worker]
instances = 1
memory = "256m"
[cluster]
backend = "yarn"
staging_dir = "{world['scratch']}/staging"
[security]
principal = "alice@TONY.TEST"
keytab = "{keytab(world, 'alice')}"
""")
    code, out = submit(world, ["--hadoop-conf", conf_dir(world), job])
    assert code == 0, out
    assert "Kerberos: alice@TONY.TEST from keytab" in out, out
    # The server saw the submission from alice, over Kerberos.
    assert "submitted: user=alice@TONY.TEST auth=KERBEROS name=krb-job" in out, out
    assert "FINISHED/SUCCEEDED" in out, out


def test_a_simple_client_against_a_kerberos_rm_exits_3_and_names_the_setting(world):
    code, out = submit(world, ["--status", APP, "--hadoop-conf",
                               conf_dir(world, authentication="simple")])
    assert code == 3, out
    assert "SIMPLE authentication is not enabled" in out, out
    assert "hadoop.security.authentication=kerberos" in out, out


def test_an_rm_with_another_principal_is_refused_with_exit_3(world):
    code, out = submit(world, ["--status", APP, "--hadoop-conf",
                               conf_dir(world, principal="rm/other.example.com@TONY.TEST")],
                       ccache=kinit(world))
    assert code == 3, out
    assert "possible impersonation" in out, out


def test_a_keytab_without_the_principal_exits_3_naming_both(world):
    code, out = submit(world, ["--status", APP, "--hadoop-conf", conf_dir(world),
                               "--principal", "bob@TONY.TEST",
                               "--keytab", keytab(world, "alice")])
    assert code == 3, out
    assert "holds no key for bob@TONY.TEST" in out, out


def test_a_missing_keytab_in_job_toml_is_a_usage_error(world):
    job = os.path.join(world["scratch"], "job.toml")
    with open(job, "w") as f:
        f.write("""
[code]
command = "true"
[tasks.worker]
instances = 1
[security]
principal = "alice@TONY.TEST"
keytab = "missing.keytab"
""")
    code, out = submit(world, ["--backend", "yarn", "--hadoop-conf", conf_dir(world), job])
    assert code == 2, out
    assert "job.toml:" in out and "'keytab' \"missing.keytab\" is not a file" in out, out
