"""tony on an HA HDFS (fixture `hdfs_ha`: cluster.sh start --hdfs-ha,
fs.defaultFS = hdfs://tonyns of NameNodes nn1 and nn2, SIMPLE; fixture
`hdfs_ha_secure` with TONY_HDFS_HA_SECURE=1: the same with --secure, Kerberos
and HTTPS only, the job's delegation tokens filed under ha-hdfs:tonyns). A
job staged on hdfs://tonyns with `files` (one of them on hdfs://tonyns) and
a Python environment succeeds with the active NameNode killed (SIGKILL) as
it stages and again as it runs; --status and --logs of the ended job work;
with no NameNode answering, tony-submit fails in bounded time naming both.
HADOOP_CONF_DIR, TONY_YARN_DIR and TONY_BIN come from ctest."""

import getpass
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "yarn"))
import yarnlib as y  # noqa: E402

STATE = os.environ.get("TONY_YARN_DIR", "")
CLUSTER_SH = os.path.join(y.ROOT, "scripts", "yarn", "cluster.sh")
USER = getpass.getuser()
SECURE = os.environ.get("TONY_HDFS_HA_SECURE") == "1"


def _secure_env():
    """The secure cluster's variables (its krb5.conf, the user's ticket
    cache, its CA) for tony-submit and Hadoop's CLI, as a person sources
    `cluster.sh env`."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import securelib
    env = securelib.cluster_env(STATE)
    env["TONY_CA_FILE"] = env["TONY_TEST_CA_FILE"]
    return env


if SECURE:
    os.environ.update(_secure_env())


def http_get(url, timeout=10):
    """(status, body) of a GET; SPNEGO and the cluster's CA when secure."""
    if SECURE:
        proc = subprocess.run(["curl", "-s", "--negotiate", "-u", ":", "--cacert",
                               os.environ["TONY_TEST_CA_FILE"], "-o", "-", "-w",
                               "\n%{http_code}", "--max-time", str(timeout), url],
                              stdout=subprocess.PIPE, text=True, timeout=timeout + 10)
        body, _, status = proc.stdout.rpartition("\n")
        return int(status or 0), body
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError:
        return 0, ""


def cluster(*args):
    proc = subprocess.run([CLUSTER_SH, *args, "--dir", STATE], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=180)
    assert proc.returncode == 0, f"cluster.sh {' '.join(args)}: {proc.stdout}"
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


WEB_SCHEME, WEB_KEY = ("https", "https-address") if SECURE else ("http", "http-address")


def web_of(nn):
    return f"{WEB_SCHEME}://" + y.conf_value("hdfs-site.xml",
                                             f"dfs.namenode.{WEB_KEY}.tonyns.{nn}")


def nn_state(nn):
    """active, standby, or down (the NameNode's JMX)."""
    status, body = http_get(web_of(nn) + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus",
                            timeout=3)
    try:
        return json.loads(body)["beans"][0]["State"] if status == 200 else "down"
    except (ValueError, KeyError, IndexError):
        return "down"


def restart_as_standby(nn):
    cluster("nn-start", nn)
    assert y.wait_until(lambda: nn_state(nn) == "standby", 120, step=0.5), \
        f"{nn} did not come back as standby"


def kill_active():
    killed = cluster("nn-kill-active")
    assert killed in ("nn1", "nn2"), killed
    return killed


def exists_on_hdfs(path):
    """GETFILESTATUS of `path` at whichever NameNode is active."""
    for nn in ("nn1", "nn2"):
        if nn_state(nn) != "active":
            continue
        who = "" if SECURE else f"&user.name={USER}"
        status, _ = http_get(f"{web_of(nn)}/webhdfs/v1{path}?op=GETFILESTATUS{who}")
        assert status in (200, 404), f"GETFILESTATUS {path}: HTTP {status}"
        return status == 200
    raise AssertionError("no active NameNode")


def ha_job(tmp, ctl):
    src = os.path.join(tmp, "src")
    os.makedirs(src)
    with open(os.path.join(src, "task.py"), "w") as f:
        f.write(f'''import os, time
print("FILES", open("local.txt").read().strip(), open("shared.txt").read().strip(), flush=True)
end = time.time() + 240
while not os.path.exists({os.path.join(ctl, "go")!r}) and time.time() < end:
    time.sleep(0.2)
print("TASK_DONE", flush=True)
''')
    # A Python environment (python_venv): staged on hdfs://tonyns beside the
    # code and unpacked by the NodeManager as ./venv, whose interpreter the
    # task's `python3` runs: here one that says so and runs the system's.
    env = os.path.join(tmp, "env")
    os.makedirs(os.path.join(env, "bin"))
    with open(os.path.join(env, "bin", "python3"), "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = ok ]; then echo "HA venv python ok"; exit 0; fi\n'
                'exec /usr/bin/python3 "$@"\n')
    os.chmod(os.path.join(env, "bin", "python3"), 0o755)
    venv = os.path.join(tmp, "env.tgz")
    subprocess.run(["tar", "-czf", venv, "-C", env, "."], check=True)
    with open(os.path.join(tmp, "local.txt"), "w") as f:
        f.write("local-marker\n")
    with open(os.path.join(tmp, "shared.txt"), "w") as f:
        f.write("shared-marker\n")
    shared = f"hdfs://tonyns/user/{USER}/hdfsha-files/shared.txt"
    out = y.yarn_cli("dfs", "-mkdir", "-p", f"hdfs://tonyns/user/{USER}/hdfsha-files")
    out += y.yarn_cli("dfs", "-put", "-f", os.path.join(tmp, "shared.txt"), shared)
    assert "rror" not in out, out
    path = os.path.join(tmp, "job.toml")
    with open(path, "w") as f:
        f.write(f'''name = "hdfs-ha"
framework = "tensorflow"

[code]
src_dir = "{src}"
python_venv = "{venv}"
command = "python3 ok && exec python3 task.py"
files = ["{os.path.join(tmp, "local.txt")}", "{shared}"]

[tasks.worker]
instances = 1
memory = "256m"
''')
    return path


def test_a_job_on_the_nameservice_succeeds_across_two_namenode_kills():
    tmp = tempfile.mkdtemp(prefix="tony-hdfsha-")
    ctl = os.path.join(tmp, "ctl")
    os.makedirs(ctl)
    job = ha_job(tmp, ctl)
    killed = []
    try:
        # Killed as tony-submit starts: staging meets a dead NameNode and
        # then a standby until the ZKFCs made the other one active.
        killed.append(kill_active())
        proc = y.start_submit([job])
        lines = y.read_until(proc, r"worker:0 RUNNING", 240)
        out = "".join(lines)
        app = y.app_id_of(out)
        staged = y.staged_uri(out)
        assert staged.startswith("hdfs://tonyns/"), staged
        restart_as_standby(killed[0])
        # Killed as it runs: the AM's state file, its event log's copy to
        # the history dir and the staging dir's removal go to the other.
        killed.append(kill_active())
        assert killed[1] != killed[0]
        with open(os.path.join(ctl, "go"), "w"):
            pass
        rest, _ = proc.communicate(timeout=240)
        out += rest
        assert proc.returncode == 0, out
        assert y.app_status(app)["Final-State"] == "SUCCEEDED", out
        def am_log():
            return y.yarn_cli("logs", "-applicationId", app, "-log_files", "am.log")[-6000:]
        # The AM's last calls (the event log's copy, then the staging dir's
        # removal) run after YARN has the job's end, and may meet the
        # failover still going on: each call's rounds (about 13 s), then up
        # to 60 s more (doc/operations.md "HDFS HA").
        path = staged.split("hdfs://tonyns", 1)[1]
        if not y.wait_until(lambda: not exists_on_hdfs(path), 90):
            raise AssertionError(f"{staged} is left behind; the AM's log:\n{am_log()}")
        # The AM copied its event log to the history dir after the kill.
        if not exists_on_hdfs(f"/user/{USER}/.tony/history/{app}.jsonl"):
            raise AssertionError(f"no event log of {app} in hdfs://tonyns/user/{USER}/"
                                 f".tony/history; the AM's log:\n{am_log()}")

        status = subprocess.run([y.SUBMIT, "--status", app], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=120)
        assert status.returncode == 0, status.stdout
        assert "SUCCEEDED" in status.stdout and "worker:0" in status.stdout, status.stdout
        logs = subprocess.run([y.SUBMIT, "--logs", app], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=180)
        assert logs.returncode == 0, logs.stdout
        assert "FILES local-marker shared-marker" in logs.stdout, logs.stdout
        assert "HA venv python ok" in logs.stdout, logs.stdout
    finally:
        with open(os.path.join(ctl, "go"), "w"):
            pass
        for nn in killed:
            if nn_state(nn) == "down":
                restart_as_standby(nn)
        shutil.rmtree(tmp, ignore_errors=True)


def test_no_namenode_answering_is_a_clear_error_in_bounded_time():
    """The client configuration's nameservice with both NameNodes' WebHDFS
    ports dead (nothing listens there): tony-submit tries each in turn,
    gives up after its bounded rounds and names both."""
    conf = tempfile.mkdtemp(prefix="tony-hdfsha-conf-")
    try:
        shutil.copytree(os.environ["HADOOP_CONF_DIR"], conf, dirs_exist_ok=True)
        site = os.path.join(conf, "hdfs-site.xml")
        with open(site) as f:
            text = f.read()
        dead = {}
        for nn, port in (("nn1", 1), ("nn2", 2)):
            key = f"dfs.namenode.{WEB_KEY}.tonyns.{nn}"
            text, n = re.subn(r"(<name>" + re.escape(key) + r"</name>\s*<value>)[^<]*",
                              r"\g<1>127.0.0.1:" + str(port), text)
            assert n == 1, key
            dead[nn] = f"127.0.0.1:{port}"
        with open(site, "w") as f:
            f.write(text)
        code, out, secs = y.submit(["--hadoop-conf", conf, y.env_check_job()], timeout=180)
    finally:
        shutil.rmtree(conf, ignore_errors=True)
    assert code == 3, out
    # One call waits out its rounds (about 13 s); the calls after it try
    # each NameNode once.
    assert secs < 40, f"{secs:.1f} s"
    assert "no NameNode answered as active" in out, out
    for address in dead.values():
        assert f"{WEB_SCHEME}://{address}" in out, out


def rm_app_count():
    status, body = http_get(f"http://{y.rm_web()}/ws/v1/cluster/apps")
    assert status == 200, f"the RM's apps: HTTP {status}"
    return len((json.loads(body).get("apps") or {}).get("app") or [])


def test_both_namenodes_really_down_is_a_clear_error_and_leaves_nothing():
    """Both NameNodes of hdfs://tonyns killed with -9 (the active one, then
    the one that took over; their ZKFCs keep running): tony-submit fails
    with exit 3 in bounded time naming both, submits no application and
    leaves no scratch directory. Both started again, the nameservice has an
    active NameNode again for the tests after."""
    first = kill_active()
    other = "nn2" if first == "nn1" else "nn1"
    try:
        assert y.wait_until(lambda: nn_state(other) == "active", 90, step=0.5), \
            f"{other} did not take over"
        assert kill_active() == other
        apps = rm_app_count()
        # tony-submit's scratch goes under $TMPDIR: its own here, as tests
        # running beside this one make theirs in the shared /tmp.
        scratch = tempfile.mkdtemp(prefix="tony-ha-tmp-")
        env = os.environ.copy()
        env["TMPDIR"] = scratch
        code, out, secs = y.submit([y.env_check_job()], timeout=180, env=env)
        assert code == 3, out
        assert secs < 60, f"{secs:.1f} s"
        assert "no NameNode answered as active" in out, out
        # Secure: the job's delegation tokens are asked for first, over RPC.
        for nn in ("nn1", "nn2"):
            named = (y.conf_value("hdfs-site.xml", f"dfs.namenode.rpc-address.tonyns.{nn}")
                     if SECURE else web_of(nn))
            assert named in out, out
        assert "submitted application_" not in out, out
        assert rm_app_count() == apps
        left = os.listdir(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        assert not left, left
    finally:
        for nn in ("nn1", "nn2"):
            if nn_state(nn) == "down":
                cluster("nn-start", nn)
        cluster("nn-wait-active")
