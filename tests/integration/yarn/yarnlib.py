"""Helpers for the tests that run tony on the real local YARN (the ctest
fixture `yarn` starts it; HADOOP_CONF_DIR, TONY_YARN_DIR and TONY_BIN come
from ctest)."""

import os
import re
import signal
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.environ.get("TONY_BIN", os.path.join(ROOT, "build", "bin"))
SUBMIT = os.path.join(BIN, "tony-submit")
YARN_SH = os.path.join(ROOT, "scripts", "yarn", "yarn.sh")
APP_RE = re.compile(r"application_\d+_\d+")


def submit(args, timeout=300, env=None):
    """Runs tony-submit to its end; returns (exit code, stdout+stderr, seconds)."""
    start = time.monotonic()
    proc = subprocess.run([SUBMIT, "--backend", "yarn", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout,
                          env=env or os.environ.copy())
    return proc.returncode, proc.stdout, time.monotonic() - start


def app_id_of(output):
    m = APP_RE.search(output)
    assert m, "no application id in:\n" + output
    return m.group(0)


def yarn_cli(*args, timeout=120):
    """Hadoop's own CLI against the test cluster. `logs` of an ended
    application first waits (at most 60 s) for the RM to say its log
    aggregation is over: each call is a JVM of seconds of CPU, and the
    callers' polling loops would otherwise keep a core busy meanwhile."""
    if args[:2] == ("logs", "-applicationId") and len(args) > 2:
        _wait_for_aggregation(args[2], 60)
    proc = subprocess.run([YARN_SH, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    return proc.stdout


def app_status(app_id):
    """{'State': ..., 'Final-State': ..., 'Application-Type': ...} from
    `yarn application -status`."""
    out = yarn_cli("application", "-status", app_id)
    fields = {}
    for line in out.splitlines():
        m = re.match(r"\s*([A-Za-z-]+)\s*:\s*(.*)$", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
    assert "State" in fields, "unexpected `yarn application -status` output:\n" + out
    return fields


def job_processes(app_id):
    """Pids of processes that belong to the application's containers (their
    environment names one of its containers)."""
    stem = "container_" + app_id[len("application_"):]
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if stem.encode() in env:
            pids.append(int(pid))
    return pids


def commands_of(pids):
    """The program names (argv[0]) of `pids` that are still alive."""
    names = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0]:
            names.append(os.path.basename(argv[0].decode(errors="replace")))
    return names


def wait_until(pred, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def env_check_job():
    return os.path.join(ROOT, "tests", "integration", "env_check", "job.toml")


def start_submit(args):
    """tony-submit in the background, its output read line by line."""
    return subprocess.Popen([SUBMIT, "--backend", "yarn", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)


def read_until(proc, pattern, timeout):
    """Lines of proc's output until one matches; the lines read so far."""
    lines = []
    end = time.monotonic() + timeout
    rx = re.compile(pattern)
    os.set_blocking(proc.stdout.fileno(), False)
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line:
            lines.append(line)
            if rx.search(line):
                return lines
        else:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    raise AssertionError(f"no line matching {pattern!r} within {timeout} s:\n" + "".join(lines))


def interrupt(proc):
    proc.send_signal(signal.SIGINT)


def rm_web():
    """host:port of the ResourceManager's web endpoint, from HADOOP_CONF_DIR."""
    import xml.etree.ElementTree as ET
    conf = ET.parse(os.path.join(os.environ["HADOOP_CONF_DIR"], "yarn-site.xml"))
    for prop in conf.getroot().iter("property"):
        if prop.findtext("name") == "yarn.resourcemanager.webapp.address":
            return prop.findtext("value")
    raise AssertionError("yarn-site.xml names no yarn.resourcemanager.webapp.address")


def running_nodes():
    """The RUNNING nodes as the RM's REST API lists them (dicts)."""
    import json
    import urllib.request
    with urllib.request.urlopen(f"http://{rm_web()}/ws/v1/cluster/nodes?states=RUNNING",
                                timeout=10) as r:
        return (json.load(r).get("nodes") or {}).get("node") or []


def env_summaries(app, count, timeout=60):
    """The CHECK_ENV_SUMMARY objects of the application's tasks
    (tests/integration/env_check/check_env.py), from the aggregated logs
    once `count` of them are there."""
    import json
    found = []

    def aggregated():
        logs = yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")
        found[:] = [json.loads(line.split(" ", 1)[1]) for line in logs.splitlines()
                    if line.startswith("CHECK_ENV_SUMMARY ")]
        return len(found) >= count
    assert wait_until(aggregated, timeout, step=1), f"{len(found)} summaries of {count}"
    return found


def _wait_for_aggregation(app, timeout):
    """Until the RM's logAggregationStatus of an ended application is
    final; returns at once when the RM cannot say (an HA configuration
    without one web address, a secure one) or the application still runs."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            report = rm_app(app)
        except Exception:  # noqa: BLE001 - any doubt: let the CLI answer
            return
        if report.get("state") not in ("FINISHED", "FAILED", "KILLED"):
            return
        if report.get("logAggregationStatus") not in ("NOT_START", "RUNNING",
                                                      "RUNNING_WITH_FAILURE"):
            return
        time.sleep(0.5)


def rm_app(app):
    """The application as the RM's REST API reports it (/ws/v1/cluster/apps/<app>)."""
    import json
    import urllib.request
    with urllib.request.urlopen(f"http://{rm_web()}/ws/v1/cluster/apps/{app}",
                                timeout=10) as r:
        return json.load(r)["app"]


def conf_value(site, name):
    """A property of HADOOP_CONF_DIR/<site>, or None."""
    import xml.etree.ElementTree as ET
    path = os.path.join(os.environ["HADOOP_CONF_DIR"], site)
    if not os.path.exists(path):
        return None
    for prop in ET.parse(path).getroot().iter("property"):
        if prop.findtext("name") == name:
            return prop.findtext("value")
    return None


def staged_uri(output):
    """The staging dir tony-submit named ("staged in <uri>")."""
    m = re.search(r"staged in (\S+)", output)
    assert m, "no staging dir in:\n" + output
    return m.group(1)


def webhdfs(method, uri, op, extra=""):
    """A WebHDFS call on an hdfs:// URI as this user: (HTTP status, body)."""
    import getpass
    import urllib.error
    import urllib.request
    path = "/" + uri.split("://", 1)[1].split("/", 1)[1]
    nn = conf_value("hdfs-site.xml", "dfs.namenode.http-address")
    url = (f"http://{nn}/webhdfs/v1{path}?op={op}&user.name={getpass.getuser()}{extra}")
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def staged_exists(uri):
    """Whether the staging dir (hdfs:// or file://) is there."""
    if uri.startswith("file://"):
        return os.path.exists(uri[len("file://"):])
    status, _ = webhdfs("GET", uri, "GETFILESTATUS")
    assert status in (200, 404), f"GETFILESTATUS {uri}: HTTP {status}"
    return status == 200


def make_staged_dir(uri):
    """Creates a directory where staging dirs are (hdfs:// or file://)."""
    if uri.startswith("file://"):
        os.makedirs(uri[len("file://"):], exist_ok=True)
        return
    status, body = webhdfs("PUT", uri, "MKDIRS")
    assert status == 200, f"MKDIRS {uri}: HTTP {status} {body!r}"


def remove_staged(uri):
    if uri.startswith("file://"):
        import shutil
        shutil.rmtree(uri[len("file://"):], ignore_errors=True)
        return
    webhdfs("DELETE", uri, "DELETE", "&recursive=true")


def saved_state(uri):
    """The job state the AM last saved in staging dir `uri` (hdfs:// or
    file://, its am-state.json), or None while there is none (readable)."""
    import json
    try:
        if uri.startswith("file://"):
            with open(os.path.join(uri[len("file://"):], "am-state.json")) as f:
                text = f.read()
        else:
            status, body = webhdfs("GET", uri.rstrip("/") + "/am-state.json", "OPEN")
            if status != 200:
                return None
            text = body.decode()
        return json.loads(text).get("state")
    except (OSError, ValueError):
        return None


def wait_saved_running(output, timeout=60):
    """Waits until the AM of the job tony-submit printed `output` for has
    saved the job as RUNNING in its staging dir, and the ResourceManager
    counts every container of the job (its tasks and the AM) RUNNING. The
    AM saves at most every 250 ms, and on HDFS a write can take seconds on a
    loaded machine; an AM killed before it saved RUNNING leaves a next AM
    that starts the job over (rightly: it cannot know every task had the
    spec). And a failed attempt keeps only the containers its RM already
    knows as RUNNING (a NodeManager reports a launch at its next heartbeat):
    the others are killed with the attempt. So tests that want adoption
    kill the AM only after this."""
    uri = staged_uri(output)
    assert wait_until(lambda: saved_state(uri) == "RUNNING", timeout), \
        f"{uri}/am-state.json: not RUNNING within {timeout} s (last: {saved_state(uri)})"
    app = app_id_of(output)
    tasks = re.search(r"submitted application_\d+_\d+ \([^\n]*?, (\d+) tasks?\)", output)
    assert tasks, "no task count in tony-submit's first line:\n" + output
    want = int(tasks.group(1)) + 1
    seen = []

    def all_running():
        seen[:] = [running_containers(app)]
        return seen[0] >= want
    assert wait_until(all_running, timeout, step=1), \
        f"{app}: {seen} of {want} containers RUNNING at the RM within {timeout} s"


def running_containers(app):
    """How many containers of the application's current attempt the
    ResourceManager reports RUNNING (`yarn applicationattempt -list`,
    `yarn container -list`)."""
    attempts = re.findall(r"(appattempt_\d+_\d+_\d+)\s+RUNNING",
                          yarn_cli("applicationattempt", "-list", app))
    if not attempts:
        return 0
    rows = yarn_cli("container", "-list", attempts[-1]).splitlines()
    return sum(1 for row in rows
               if row.strip().startswith("container_") and "RUNNING" in row.split())


def am_pid(app):
    """The pid of the application's tony-am, from /proc."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(argv0) == b"tony-am" and any(
                re.match(rb"CONTAINER_ID=container_(e\d+_)?" +
                         app[len("application_"):].encode() + rb"_", v) for v in env):
            return int(pid)
    return None
