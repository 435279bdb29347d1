"""tony on the shared secure cluster (fixture `secure`): jobs submitted as
the test user from its ticket cache and from its keytab alone, tasks that
read and write HDFS with the job's delegation tokens only, and the
refusals a user meets (doc/operations.md, "Secure clusters")."""

import json
import os
import re
import subprocess
import sys
import time
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import securelib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = securelib.ROOT
BIN = os.environ.get("TONY_BIN", os.path.join(ROOT, "build", "bin"))
SUBMIT = os.path.join(BIN, "tony-submit")
ENV_CHECK = os.path.join(ROOT, "tests", "integration", "env_check", "job.toml")
HDFS_JOB = os.path.join(HERE, "hdfs_job.toml")
APP_RE = re.compile(r"application_\d+_\d+")


def with_ca(env):
    """The cluster's HTTPS endpoints are signed by its test CA."""
    env = dict(env)
    env["TONY_CA_FILE"] = env["TONY_TEST_CA_FILE"]
    return env


def submit(args, env, timeout=300):
    proc = subprocess.run([SUBMIT, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout


def app_id_of(output):
    m = APP_RE.search(output)
    assert m, "no application id in:\n" + output
    return m.group(0)


def final_state(app, env):
    out = securelib.yarn_sh("application", "-status", app, env=env).stdout
    m = re.search(r"Final-State\s*:\s*(\w+)", out)
    assert m, out
    return m.group(1)


def dfs(*args, env, data=None):
    proc = subprocess.run([securelib.YARN_SH, "dfs", *args], input=data, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return proc.stdout


def hdfs_job_args(env, work, extra=""):
    """--set flags running hdfs_task.py on `work`/input.txt."""
    host = env["TONY_YARN_HOST"]
    return ["--set", f'code.command="python3 hdfs_task.py {work}/input.txt {work} {extra}"',
            "--set", f'env.TONY_TEST_ROOT="{ROOT}"',
            "--set", f'env.TONY_SECURE_YARN_DIR="{env["TONY_YARN_DIR"]}"',
            "--set", f'env.TONY_TEST_CA_FILE="{env["TONY_TEST_CA_FILE"]}"',
            "--set", f'env.TONY_TEST_WEBHDFS="https://{host}:9871"',
            "--set", f'env.TONY_TEST_NN_SERVICE="{host}:9000"',
            HDFS_JOB]


def user_input(env):
    """A directory of the user's on HDFS with input.txt in it."""
    work = f"/user/{os.environ.get('USER', 'root')}/secure-{uuid.uuid4().hex[:8]}"
    dfs("-mkdir", "-p", work, env=env)
    dfs("-put", "-", work + "/input.txt", env=env, data=b"written by the user\n")
    return work


def assert_task_wrote(work, env, other_fs=None):
    """The task's results in `work`, and its directory on `other_fs`."""
    for name in ("by-jars.txt", "by-webhdfs.txt"):
        assert dfs("-cat", f"{work}/{name}", env=env) == b"WRITTEN BY THE USER\n", name
    if other_fs:
        listing = dfs("-ls", other_fs + work, env=env).decode()
        assert other_fs + work + "/made-by-task" in listing, listing


def login(how, tmp_path):
    """(env, tony-submit flags) of a user logged in from its ticket cache
    (`kinit` done), or from its keytab with no ticket cache at all."""
    if how == "ticket-cache":
        return with_ca(securelib.client_env()), []
    env = with_ca(securelib.no_ticket_env(tmp_path))
    return env, ["--principal", env["TONY_TEST_PRINCIPAL"], "--keytab", env["TONY_TEST_KEYTAB"]]


# Each its own ctest entry (CMakeLists.txt reads the marker).
LOGINS = pytest.mark.parametrize("how", ["ticket-cache", "keytab"])


@LOGINS
def test_the_env_check_job_succeeds(how, tmp_path):
    env, flags = login(how, tmp_path)
    code, out = submit(["--backend", "yarn", *flags, ENV_CHECK], env)
    assert code == 0, out
    # The cached binaries on HDFS are checked (GETFILECHECKSUM with SPNEGO,
    # then the DataNode with the token the NameNode's redirect carries)
    # and used.
    assert "not using the cached" not in out, out
    app = app_id_of(out)
    assert final_state(app, securelib.client_env()) == "SUCCEEDED"
    if how == "ticket-cache":
        # No keytab: the user is told until when the job can run.
        assert "delegation tokens" in out and "can run until" in out, out
    else:
        assert "gets new ones with the keytab" in out, out
    assert_ended_job_readable(app, env, flags)
    if how == "keytab":
        assert not os.path.exists(env["KRB5CCNAME"]), "the keytab login wrote a ticket cache"


def assert_ended_job_readable(app, env, flags):
    """--status of an ended job: its AM is gone, so the tasks come from the
    event log the AM left in HDFS, read over WebHDFS with SPNEGO. --logs
    finds the task's container the same way and reads its files from the
    aggregated logs (doc/operations.md)."""
    code, status = submit(["--status", app, *flags], env, timeout=120)
    assert code == 0, status
    assert "state: FINISHED" in status and "final status: SUCCEEDED" in status, status
    for task in ("chief:0", "worker:0", "worker:1", "ps:0"):
        assert f"task {task}: SUCCEEDED" in status, status
    container = re.search(r"task worker:1: SUCCEEDED \S+ (container_\S+)", status)
    assert container, status
    code, logs = submit(["--logs", app, "--task", "worker:1", *flags], env, timeout=120)
    assert code == 0 and container.group(1) + "/" in logs, logs


def test_a_task_reads_and_writes_hdfs_with_the_job_tokens_only():
    """Also [security] file_systems naming the cluster's second NameNode:
    the job gets a token from each NameNode, and the task makes a directory
    on the second one (no DataNode there: namespace operations only) with
    the job's token file alone."""
    env = with_ca(securelib.client_env())
    other = env["TONY_YARN_NAMENODE2"]
    work = user_input(env)
    code, out = submit(["--backend", "yarn", "--set", f'security.file_systems=["{other}"]',
                        *hdfs_job_args(env, work, f"--other-fs {other}")], env)
    assert code == 0, out
    first = f"hdfs://{env['TONY_YARN_HOST']}:9000"
    assert f"HDFS delegation tokens for {first}, {other} " in out, out
    assert_task_wrote(work, env, other)


def test_a_keytab_login_with_no_ticket_cache_runs_a_job(tmp_path):
    """Also HADOOP_TOKEN_FILE_LOCATION as a workflow scheduler sets it
    (Oozie's launcher): alone it does not log tony-submit in (it needs a
    ticket or a keytab for the ResourceManager); with the keytab login its
    tokens go to the job, here the second NameNode's, which tony-submit
    does not get itself (no file_systems) and the task uses."""
    user_env = with_ca(securelib.client_env())
    other = user_env["TONY_YARN_NAMENODE2"]
    tokens = str(tmp_path / "forwarded.tokens")
    renewer = f"rm/{user_env['TONY_YARN_HOST']}@{user_env['TONY_TEST_REALM']}"
    fetched = securelib.yarn_sh("fetchdt", "-fs", other, "--renewer", renewer, tokens,
                                env=user_env)
    assert fetched.returncode == 0, fetched.stderr[-2000:]
    env, flags = login("keytab", tmp_path)
    env["HADOOP_TOKEN_FILE_LOCATION"] = tokens
    work = user_input(user_env)
    job = ["--backend", "yarn", *hdfs_job_args(env, work, f"--other-fs {other}")]
    code, out = submit(job, env, timeout=120)
    assert code == 3, out
    assert "no Kerberos credentials" in out and tokens in out and "keytab" in out, out
    assert not APP_RE.search(out), out
    code, out = submit([*flags, *job], env)
    assert code == 0, out
    first = f"hdfs://{env['TONY_YARN_HOST']}:9000"
    assert f"HDFS delegation tokens for {first} (renewer" in out, out
    assert_task_wrote(work, user_env, other)
    assert not os.path.exists(env["KRB5CCNAME"]), "the keytab login wrote a ticket cache"


def as_user(env, user):
    """Hadoop's own CLI acting for `user` (its HADOOP_PROXY_USER)."""
    env = dict(env)
    env["HADOOP_PROXY_USER"] = user
    return env


def test_a_proxy_user_job_runs_as_that_user(tmp_path):
    """Hadoop's proxy users (doc/operations.md "Proxy users"): the user's
    Kerberos login (a keytab, as a scheduler's) submits for the one user the
    cluster lets it act for. The application, its staging and its event log
    are that user's, and the AM records that user; the keytab is not the
    job's. Anyone else is refused with the cluster's own message, before
    anything is staged."""
    env = with_ca(securelib.client_env())
    guest = env["TONY_TEST_PROXIED_USER"]
    staging = f"/user/{guest}/.tony"
    keytab_env, flags = login("keytab", tmp_path)
    code, out = submit(["--backend", "yarn", *flags, "--proxy-user", guest, ENV_CHECK],
                       keytab_env)
    assert code == 0, out
    assert f"proxy user: submitting for {guest} as " in out, out
    # The job lives on the guest's tokens: the keytab stays with its owner.
    assert "can run until" in out and "gets new ones with the keytab" not in out, out
    app = app_id_of(out)
    status = securelib.yarn_sh("application", "-status", app, env=env)
    assert re.search(rf"\bUser\s*:\s*{guest}\s*$", status.stdout, re.M), status.stdout
    # Its event log, written by its AM into the user's history dir, is the
    # user's, and so is the staging root it was staged under.
    guest_env = as_user(env, guest)
    listing = dfs("-ls", f"{staging}/history/{app}.jsonl", env=guest_env).decode()
    assert f" {guest} " in listing, listing
    events = dfs("-cat", f"{staging}/history/{app}.jsonl", env=guest_env).decode()
    submitted = json.loads(events.splitlines()[0])
    assert submitted["submitted"]["user"] == guest, submitted
    root = dfs("-ls", "-d", staging, env=guest_env).decode()
    assert f" {guest} " in root, root
    # tony-submit --status acts for the user too (the RM answers either way;
    # the event log is the user's to read).
    code, shown = submit(["--status", app, "--proxy-user", guest], env, timeout=120)
    assert code == 0 and "task worker:1: SUCCEEDED" in shown, shown
    # Someone the cluster does not let it act for: refused by the RM.
    code, out = submit(["--backend", "yarn", "--proxy-user", "tonymallory", ENV_CHECK], env)
    assert code == 3, out
    assert "not allowed to impersonate tonymallory" in out, out
    assert not APP_RE.search(out), out
    # A name that is no user name is refused before any call.
    code, out = submit(["--backend", "yarn", "--proxy-user", "a&b=c", ENV_CHECK], env)
    assert code == 2 and "proxy user 'a&b=c'" in out, out


@LOGINS
def test_the_pytorch_example_trains(how, tmp_path):
    env, flags = login(how, tmp_path)
    code, out = submit(["--backend", "yarn", *flags,
                        os.path.join(ROOT, "examples", "pytorch", "job.toml")], env,
                       timeout=280)
    assert code == 0, out
    assert final_state(app_id_of(out), securelib.client_env()) == "SUCCEEDED"


@LOGINS
def test_a_failing_worker_fails_the_job_with_its_exit_code(how, tmp_path):
    env, flags = login(how, tmp_path)
    code, out = submit(["--backend", "yarn", *flags,
                        "--set", 'code.command="sleep 60"',
                        "--set", 'tasks.worker.command="if [ $TASK_INDEX = 1 ]; then '
                                 'echo dying >&2; exit 3; fi; sleep 60"', ENV_CHECK], env)
    assert code == 1, out
    assert "worker:1" in out, out
    assert final_state(app_id_of(out), securelib.client_env()) == "FAILED"


def test_no_ticket_is_refused_before_anything_is_submitted(tmp_path):
    env = with_ca(securelib.no_ticket_env(tmp_path))
    code, out = submit(["--backend", "yarn", ENV_CHECK], env, timeout=120)
    assert code == 3, out
    assert "no Kerberos credentials" in out and "kinit" in out, out
    assert not APP_RE.search(out), out


def test_a_simple_client_is_told_the_cluster_wants_kerberos(tmp_path):
    env = with_ca(securelib.client_env())
    conf = tmp_path / "conf"
    conf.mkdir()
    for name in os.listdir(env["HADOOP_CONF_DIR"]):
        src = os.path.join(env["HADOOP_CONF_DIR"], name)
        if os.path.isfile(src):
            text = open(src, errors="replace").read()
            if name == "core-site.xml":
                text = re.sub(r"(<name>hadoop.security.authentication</name>\s*<value>)"
                              r"kerberos", r"\1simple", text)
            (conf / name).write_text(text)
    env["HADOOP_CONF_DIR"] = str(conf)
    code, out = submit(["--backend", "yarn", ENV_CHECK], env, timeout=120)
    assert code == 3, out
    assert "requires Kerberos" in out and "hadoop.security.authentication" in out, out


def test_a_corrupt_token_file_is_named(tmp_path):
    env = with_ca(securelib.client_env())
    bad = tmp_path / "tokens"
    bad.write_bytes(b"HDTS\0\x05garbage")
    env["HADOOP_TOKEN_FILE_LOCATION"] = str(bad)
    code, out = submit(["--backend", "yarn", ENV_CHECK], env, timeout=120)
    assert code == 3, out
    assert str(bad) in out and "HADOOP_TOKEN_FILE_LOCATION" in out, out
    assert not APP_RE.search(out), out


def test_an_expired_ticket_is_refused_with_what_to_do(tmp_path):
    env = with_ca(securelib.client_env())
    cache = str(tmp_path / "short.ccache")
    subprocess.run(["kinit", "-l", "5s", "-kt", env["TONY_TEST_KEYTAB"], "-c", cache,
                    env["TONY_TEST_PRINCIPAL"]], env=env, check=True, timeout=60)
    env["KRB5CCNAME"] = cache
    time.sleep(7)
    code, out = submit(["--backend", "yarn", ENV_CHECK], env, timeout=120)
    assert code == 3, out
    assert "expired" in out and "kinit" in out, out


def test_an_unreachable_kdc_is_named(tmp_path):
    env = with_ca(securelib.no_ticket_env(tmp_path))
    conf = open(env["KRB5_CONFIG"]).read().replace(env["TONY_TEST_KDC"],
                                                   env["TONY_YARN_HOST"] + ":9")
    krb5 = tmp_path / "krb5.conf"
    krb5.write_text(conf)
    env["KRB5_CONFIG"] = str(krb5)
    code, out = submit(["--backend", "yarn", "--principal", env["TONY_TEST_PRINCIPAL"],
                        "--keytab", env["TONY_TEST_KEYTAB"], ENV_CHECK], env, timeout=120)
    assert code == 3, out
    assert "cannot reach a KDC" in out, out


def test_a_keytab_job_outlives_the_token_max_lifetime(tmp_path):
    """The fixture's tokens die 180 s after issue (renewed every 90 s at
    most): the AM gets new ones with the shipped keytab and hands them to
    the running task, which still reads and writes HDFS at its end."""
    env = with_ca(securelib.no_ticket_env(tmp_path))
    work = user_input(with_ca(securelib.client_env()))
    lifetime = int(env["TONY_TEST_TOKEN_MAX_LIFETIME"])
    rounds = 5
    every = lifetime / (rounds - 2)  # the last read is well past the max lifetime
    code, out = submit(["--backend", "yarn", "--principal", env["TONY_TEST_PRINCIPAL"],
                        "--keytab", env["TONY_TEST_KEYTAB"],
                        *hdfs_job_args(env, work, f"--repeat {rounds} --every {every}")],
                       env, timeout=lifetime * 3)
    assert code == 0, out
    assert "gets new ones with the keytab" in out, out
    assert_task_wrote(work, securelib.client_env())
    # The NodeManagers aggregate the logs after the application ends: wait
    # for them (bounded) before looking for the AM's renewals.
    deadline = time.monotonic() + 120
    while True:
        logs = securelib.yarn_sh("logs", "-applicationId", app_id_of(out),
                                 env=securelib.client_env())
        if "new HDFS delegation tokens (round 2)" in logs.stdout or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert "new HDFS delegation tokens (round 2)" in logs.stdout, logs.stdout[-3000:]
    assert "tokens of generation 2 written" in logs.stdout, logs.stdout[-3000:]


def curl(url, env, negotiate=True):
    """(HTTP status, body) of a GET, with SPNEGO from env's ticket cache."""
    args = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "30", url]
    if negotiate:
        args[1:1] = ["--negotiate", "-u", ":"]
    proc = subprocess.run(args, env=env, stdout=subprocess.PIPE, text=True, timeout=60)
    body, _, status = proc.stdout.rpartition("\n")
    return int(status or 0), body


def test_detach_status_logs_tracking_url_and_kill_on_the_secure_cluster():
    env = with_ca(securelib.client_env())
    code, out = submit(["--backend", "yarn", "--detach",
                        "--set", 'code.command="echo hello-$TASK_INDEX; sleep 300"', ENV_CHECK],
                       env)
    assert code == 0, out
    app = app_id_of(out)
    try:
        deadline = time.monotonic() + 120
        status = ""
        while time.monotonic() < deadline and "worker:1" not in status:
            code, status = submit(["--status", app], env, timeout=60)
            assert code == 0, status
            time.sleep(2)
        assert "state:" in status and "RUNNING" in status, status
        # The tracking URL through the RM's web proxy, which wants SPNEGO.
        proxy = f"http://{env['TONY_YARN_HOST']}:8088/proxy/{app}/"
        assert curl(proxy, env, negotiate=False)[0] == 401
        code, page = curl(proxy, env)
        assert code == 200 and app in page, (code, page[:2000])
        # --logs reads the NodeManager's web services with SPNEGO.
        deadline = time.monotonic() + 60
        logs = ""
        while time.monotonic() < deadline and "hello-1" not in logs:
            code, logs = submit(["--logs", app, "--task", "worker:1"], env, timeout=60)
            time.sleep(2)
        assert "hello-1" in logs, logs
        assert_no_token_leaks(app, env, out + status + logs)
    finally:
        code, killed = submit(["--kill", app], env, timeout=60)
    assert code == 0, killed
    assert final_state(app, env) == "KILLED"


def wait_running(app, env):
    """Waits (bounded) until --status of `app` shows worker:1 running."""
    deadline = time.monotonic() + 120
    status = ""
    while time.monotonic() < deadline and "worker:1" not in status:
        code, status = submit(["--status", app], env, timeout=60)
        assert code == 0, status
        time.sleep(2)
    assert "RUNNING" in status, status


def test_another_user_sees_what_the_jobs_acls_allow(tmp_path):
    """View ACLs (doc/operations.md "View ACLs"): another person of the
    realm, authenticated to the RM's web proxy with SPNEGO, gets 403 from a
    job's page, API and TensorBoard path, cannot read its staging, logs or
    kill it; a job whose [security] view_acl and modify_acl name them shows
    them its page and logs, and lets them kill it."""
    env = with_ca(securelib.client_env())
    other = with_ca(securelib.other_user_env(tmp_path))
    other_name = other["TONY_TEST_OTHER_PRINCIPAL"].split("@")[0]
    sleeper = ["--backend", "yarn", "--detach",
               "--set", 'code.command="echo hello-$TASK_INDEX; sleep 300"']
    code, out = submit([*sleeper, ENV_CHECK], env)
    assert code == 0, out
    private = app_id_of(out)
    staged = re.search(r"staged in (\S+)", out).group(1)
    code, out = submit([*sleeper, "--set", f'security.view_acl="{other_name}"',
                        "--set", f'security.modify_acl="{other_name}"', ENV_CHECK], env)
    assert code == 0, out
    shared = app_id_of(out)
    try:
        wait_running(private, env)
        wait_running(shared, env)
        base = f"http://{env['TONY_YARN_HOST']}:8088/proxy"
        for path in ["", "api/job", "tensorboard/"]:
            code, body = curl(f"{base}/{private}/{path}", other)
            assert code == 403, (path, code, body[:2000])
            assert f"user {other_name} may not view application {private}" in body, body
        code, body = curl(f"{base}/{private}/api/job", env)
        assert code == 200 and '"worker"' in body, (code, body[:2000])
        code, body = curl(f"{base}/{shared}/api/job", other)
        assert code == 200 and '"worker"' in body, (code, body[:2000])
        # Staging is the owner's alone (0700).
        proc = subprocess.run([securelib.YARN_SH, "dfs", "-cat", f"{staged}/job.json"],
                              env=other, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=120)
        assert proc.returncode != 0 and "Permission denied" in proc.stdout, proc.stdout
        # Logs: the NodeManagers apply each application's view ACL.
        code, logs = submit(["--logs", private, "--task", "worker:1"], other, timeout=60)
        assert code == 3 and "hello-1" not in logs, logs
        assert f"{other_name} is neither its owner" in logs, logs
        code, status = submit(["--status", private], other, timeout=60)
        assert code == 0 and "tasks: not shown: the ResourceManager shows" in status, status
        deadline = time.monotonic() + 60
        logs = ""
        while time.monotonic() < deadline and "hello-1" not in logs:
            code, logs = submit(["--logs", shared, "--task", "worker:1"], other, timeout=60)
            time.sleep(2)
        assert "hello-1" in logs, logs
        # Killing takes the application's MODIFY_APP ACL, which the RM checks.
        code, out = submit(["--kill", private], other, timeout=60)
        assert code == 3 and "MODIFY_APP" in out, out
        code, out = submit(["--kill", shared], other, timeout=60)
        assert code == 0, out
        assert final_state(shared, env) == "KILLED"
    finally:
        for app in (private, shared):
            submit(["--kill", app], env, timeout=60)
    assert final_state(private, env) == "KILLED"


TB_PROBE_JOB = """
name = "tensorboard-probe"
framework = "standalone"

[code]
command = "sleep 300"

[env]
PATH = "@VENV@/bin:/usr/local/bin:/usr/bin:/bin"

[tasks.worker]
instances = 1
memory = "256m"

[tensorboard]
enabled = true
log_dir = "@DIR@"
"""


def test_another_user_gets_403_at_a_tensorboard_sidecars_node_port(tmp_path):
    """A job's TensorBoard sidecar on the secure cluster (doc/tracking.md
    "TensorBoard"): another person of the realm who goes to its node port,
    around the RM's proxy and the job's view ACL, gets the guard's 403."""
    env = with_ca(securelib.client_env())
    other = with_ca(securelib.other_user_env(tmp_path))
    venv = os.environ.get("TONY_VENV", os.path.join(ROOT, ".venv"))
    job = tmp_path / "job.toml"
    job.write_text(TB_PROBE_JOB.replace("@VENV@", venv).replace("@DIR@", str(tmp_path)))
    code, out = submit(["--backend", "yarn", "--detach", str(job)], env)
    assert code == 0, out
    app = app_id_of(out)
    try:
        base = f"http://{env['TONY_YARN_HOST']}:8088/proxy/{app}"
        deadline = time.monotonic() + 240
        address, body = "", ""
        while time.monotonic() < deadline and not address:
            code, body = curl(f"{base}/api/job", env)
            if code == 200 and body.startswith("{"):
                address = json.loads(body).get("tensorboard", {}).get("address", "")
            time.sleep(0 if address else 2)
        assert address, f"no TensorBoard address in the job's status: {body[:2000]}"
        # TensorBoard answers the owner through the proxy once it is up.
        code = 0
        while time.monotonic() < deadline and code != 200:
            code, body = curl(f"{base}/tensorboard/data/runs", env)
            time.sleep(0 if code == 200 else 2)
        assert code == 200, (code, body[:2000])
        code, body = curl(f"http://{address}/data/runs", other, negotiate=False)
        assert code == 403 and "answers only through tony's proxy" in body, (code, body)
    finally:
        submit(["--kill", app], env, timeout=60)
    assert final_state(app, env) == "KILLED"


def test_tony_history_serve_takes_spnego_and_the_jobs_acls(tmp_path):
    """tony-history serve on the secure cluster (doc/tracking.md, "On a
    secure cluster"): it reads the user's HDFS history dir with the user's
    Kerberos login, asks every visitor for SPNEGO (the cluster's
    hadoop.http.authentication.* keys), and with yarn.acl.enable shows a job
    only to its owner, its view ACL and the admins, in the list as on its
    page, API and TensorBoard path."""
    env = with_ca(securelib.client_env())
    other = with_ca(securelib.other_user_env(tmp_path))
    other_name = other["TONY_TEST_OTHER_PRINCIPAL"].split("@")[0]
    quick = ["--backend", "yarn", "--set", 'code.command="echo hello"']
    runs = [subprocess.Popen([SUBMIT, *quick, *extra, ENV_CHECK], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for extra in ([], ["--set", f'security.view_acl="{other_name}"'])]
    outs = [r.communicate(timeout=300)[0] for r in runs]
    for r, out in zip(runs, outs):
        assert r.returncode == 0, out
    private, shared = (app_id_of(out) for out in outs)
    host = env["TONY_YARN_HOST"]
    user = env["TONY_TEST_PRINCIPAL"].split("@")[0]
    history = f"hdfs://{host}:9000/user/{user}/.tony/history"
    server = subprocess.Popen([os.path.join(BIN, "tony-history"), "--dir", history, "serve",
                               "--bind", host], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        said = server.stdout.readline()
        assert "serving at" in said, said + server.stdout.read(2000)
        said += server.stdout.readline()
        assert f"SPNEGO as HTTP/{host}@{env['TONY_TEST_REALM']}" in said, said
        assert "ACLs on (yarn.acl.enable)" in said, said
        base = re.search(r"serving at (http://\S+/)", said).group(1)
        # No ticket offered: asked for Negotiate, nothing shown.
        code, body = curl(base, env, negotiate=False)
        assert code == 401 and "curl --negotiate" in body, (code, body)
        assert private not in body
        # The owner sees both jobs.
        code, body = curl(base, env)
        assert code == 200 and private in body and shared in body, (code, body[:2000])
        code, body = curl(f"{base}jobs/{private}/api/job", env)
        assert code == 200 and '"worker"' in body, (code, body[:2000])
        # Another person of the realm: only the job whose view ACL names them.
        code, body = curl(base, other)
        assert code == 200 and shared in body and private not in body, (code, body[:2000])
        for path in ["", "api/job", "config", "tensorboard/"]:
            code, body = curl(f"{base}jobs/{private}/{path}", other)
            assert code == 403, (path, code, body[:2000])
            assert f"user {other_name} may not view application {private}" in body, body
        code, body = curl(f"{base}jobs/{shared}/api/job", other)
        assert code == 200 and '"worker"' in body, (code, body[:2000])
    finally:
        server.terminate()
        rest = server.communicate(timeout=30)[0]
    assert server.returncode == 0, rest


def fetch_tokens(tmp_path, env, name, *extra):
    """A token file as a workflow scheduler makes one for its actions: the
    user's RM and HDFS delegation tokens, renewer yarn, fetched with
    Hadoop's own client classes (java/FetchTokens.java)."""
    classes = tmp_path / "classes"
    if not (classes / "FetchTokens.class").exists():
        classes.mkdir(exist_ok=True)
        cp = securelib.yarn_sh("classpath", env=env).stdout.strip()
        subprocess.run(["javac", "-cp", cp, "-d", str(classes),
                        os.path.join(HERE, "java", "FetchTokens.java")],
                       check=True, timeout=180)
        (classes / "cp").write_text(cp)
    cp = (classes / "cp").read_text()
    path = tmp_path / name
    proc = subprocess.run(["java", f"-Djava.security.krb5.conf={env['KRB5_CONFIG']}",
                           "-cp", f"{cp}:{classes}", "FetchTokens", str(path), "yarn",
                           *extra],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return str(path)


def expired_rm_token_file(tmp_path, env):
    """A token file (Hadoop's Writable format) holding one RM delegation
    token of the user whose identifier's max date is 1970."""
    def text(b):
        assert len(b) < 128
        return bytes([len(b)]) + b
    owner = env["TONY_TEST_PRINCIPAL"].encode()
    # YARNDelegationTokenIdentifierProto: owner (1), renewer (2), maxDate (5).
    ident = b"\x0a" + text(owner) + b"\x12" + text(b"yarn") + b"\x28\xe8\x07"
    service = f"{env['TONY_YARN_HOST']}:8032".encode()
    token = text(ident) + text(b"0" * 20) + text(b"RM_DELEGATION_TOKEN") + text(service)
    path = tmp_path / "expired"
    path.write_bytes(b"HDTS\x00\x01" + text(service) + token + b"\x00")
    return str(path)


def test_a_job_submitted_from_a_token_file_alone_runs(tmp_path):
    """Workflow schedulers (doc/operations.md "Workflow schedulers"): an
    action started with the user's RM and HDFS delegation tokens in
    HADOOP_TOKEN_FILE_LOCATION and no Kerberos ticket submits, stages and
    follows its job with them; a cancelled RM token and a file without one
    are refused (exit 3) saying so, and nothing is submitted."""
    env = with_ca(securelib.client_env())
    tokens = fetch_tokens(tmp_path, env, "tokens")
    action = with_ca(securelib.no_ticket_env(tmp_path))
    action["HADOOP_TOKEN_FILE_LOCATION"] = tokens
    code, out = submit(["--backend", "yarn", ENV_CHECK], action)
    assert code == 0, out
    assert "no Kerberos login: using the tokens of HADOOP_TOKEN_FILE_LOCATION" in out, out
    app = app_id_of(out)
    assert final_state(app, env) == "SUCCEEDED"
    status = securelib.yarn_sh("application", "-status", app, env=env).stdout
    user = env["TONY_TEST_PRINCIPAL"].split("@")[0]
    assert re.search(rf"\bUser\s*:\s*{user}\s*$", status, re.M), status
    # --status works the same way.
    code, shown = submit(["--status", app], action, timeout=120)
    assert code == 0 and "task worker:1: SUCCEEDED" in shown, shown

    cancelled = fetch_tokens(tmp_path, env, "cancelled", "cancel-rm")
    action["HADOOP_TOKEN_FILE_LOCATION"] = cancelled
    code, out = submit(["--backend", "yarn", ENV_CHECK], action)
    assert code == 3, out
    assert "submitted application_" not in out, out
    assert "can't be found in cache" in out and f"token of HADOOP_TOKEN_FILE_LOCATION " \
        f"({cancelled}) is not valid: cancelled" in out, out

    # An expired RM token is refused before any call, saying when it ended.
    action["HADOOP_TOKEN_FILE_LOCATION"] = expired_rm_token_file(tmp_path, env)
    code, out = submit(["--backend", "yarn", ENV_CHECK], action)
    assert code == 3, out
    assert "has expired (its maximum lifetime ended" in out, out

    # An HDFS token alone (hdfs fetchdt) does not log tony-submit in.
    hdfs_only = str(tmp_path / "hdfs-only")
    got = securelib.yarn_sh("fetchdt", "--renewer", "yarn", hdfs_only, env=env)
    assert got.returncode == 0, got.stderr
    action["HADOOP_TOKEN_FILE_LOCATION"] = hdfs_only
    code, out = submit(["--backend", "yarn", ENV_CHECK], action)
    assert code == 3, out
    assert "holds no RM delegation token" in out, out


def hdfs_token_secrets(path):
    """(URL string, password) of the HDFS token in a Writable token file."""
    sys.path.insert(0, HERE)
    import hdfs_task
    data = open(path, "rb").read()
    url = hdfs_task.hdfs_token_url_string(path)
    count, at = hdfs_task.vint(data, 5)
    for _ in range(count):
        _, at = hdfs_task.text(data, at)
        _, at = hdfs_task.text(data, at)
        password, at = hdfs_task.text(data, at)
        kind, at = hdfs_task.text(data, at)
        _, at = hdfs_task.text(data, at)
        if kind == b"HDFS_DELEGATION_TOKEN":
            return url, password
    raise AssertionError("no HDFS token in " + path)


def assert_no_token_leaks(app, env, client_output):
    """The job's HDFS token is in each task's 0600 token file and nowhere
    a person or another user reads: not in tony-submit's output, the launch
    scripts, the containers' logs, command lines or environments."""
    app_dir = os.path.join(env["TONY_YARN_DIR"], "nm-local", "usercache")
    found = {}
    for d, _, names in os.walk(app_dir):
        if app in d:
            for name in names:
                found.setdefault(name, []).append(os.path.join(d, name))
    token_files = found.get(".tony-tokens", [])
    assert len(token_files) == 4, found.keys()
    url, password = hdfs_token_secrets(token_files[0])
    for path in token_files:
        assert os.stat(path).st_mode & 0o777 == 0o600, path
    assert url not in client_output and password.hex() not in client_output
    logs_dir = os.path.join(env["TONY_YARN_DIR"], "nm-logs", app)
    readable = found.get("launch_container.sh", [])
    for d, _, names in os.walk(logs_dir):
        readable += [os.path.join(d, n) for n in names]
    assert len(readable) >= 10, readable
    for path in readable:
        data = open(path, "rb").read()
        assert url.encode() not in data and password not in data, path
    stem = "container_" + app[len("application_"):]
    for pid in os.listdir("/proc"):
        try:
            environ = open(f"/proc/{pid}/environ", "rb").read()
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if stem.encode() in environ:
            for data in (environ, cmdline):
                assert url.encode() not in data and password not in data, pid
