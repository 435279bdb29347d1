"""The shared secure cluster (fixture `secure`) as later tests use it
through securelib: the user's ticket, a keytab login, and no credentials."""

import os
import pwd
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import securelib  # noqa: E402


def test_the_user_ticket_reaches_yarn_and_hdfs():
    env = securelib.client_env()
    nodes = securelib.yarn_sh("node", "-list", env=env)
    assert nodes.returncode == 0, nodes.stderr
    assert f"{env['TONY_YARN_HOST']}:45454" in nodes.stdout and "RUNNING" in nodes.stdout
    user = pwd.getpwuid(os.getuid()).pw_name
    home = securelib.yarn_sh("dfs", "-ls", "-d", f"/user/{user}", env=env)
    assert home.returncode == 0, home.stderr
    assert f" {user} " in home.stdout, home.stdout  # owned by the user


def test_a_keytab_login_needs_no_shared_cache(tmp_path):
    env = securelib.keytab_env(tmp_path)
    klist = subprocess.run(["klist", "-c", env["KRB5CCNAME"]], env=env, text=True,
                           stdout=subprocess.PIPE, timeout=30, check=True)
    assert f"Default principal: {env['TONY_TEST_PRINCIPAL']}" in klist.stdout
    listing = securelib.yarn_sh("dfs", "-ls", "/", env=env)
    assert listing.returncode == 0, listing.stderr
    assert "/user" in listing.stdout


def test_no_ticket_is_refused_at_once(tmp_path):
    env = securelib.no_ticket_env(tmp_path)
    listing = securelib.yarn_sh("dfs", "-ls", "/", env=env, timeout=60)
    assert listing.returncode != 0
    assert "Client cannot authenticate via:[TOKEN, KERBEROS]" in listing.stderr


def test_the_env_names_the_token_lifetimes_of_the_fixture():
    env = securelib.cluster_env()
    assert env["TONY_TEST_TOKEN_MAX_LIFETIME"] == os.environ["TONY_YARN_TOKEN_MAX_LIFETIME"]
    assert env["TONY_TEST_TOKEN_RENEW_INTERVAL"] == os.environ["TONY_YARN_TOKEN_RENEW_INTERVAL"]
