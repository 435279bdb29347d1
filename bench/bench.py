#!/usr/bin/env python3
"""tony beside TonY and tf-yarn on one YARN: launch latency, footprint,
failure detection; and tony's local backend against a plain shell.

    bench.py launch   --frameworks tony,tonyj,tfyarn --runs 5
    bench.py footprint --frameworks tony,tonyj,tfyarn
    bench.py failure  --frameworks tony,tonyj --kill command,executor --runs 3
    bench.py scale    --sizes 8,32,64 --frameworks floor,tony,tonyj,tfyarn --runs 3
    bench.py pyenv    --tasks 16 --frameworks tony,tonyj --venv DIR
    bench.py local    --runs 5

Every framework runs the same trivial job: 2 workers and 1 ps (scale: N-1
workers and 1 ps; pyenv: the same with a Python environment), each running

    echo "$(date +%s.%N) $$ $JOB_NAME:$TASK_INDEX" >> STAMPS; exec sleep 1

so "all tasks running" is the latest of those stamps, whatever the framework
(a task's command starts only once it has the cluster spec). Phases are timed
against the wall clock of this machine, from just before the submit command
starts:

    am_running     the RM reports the application RUNNING (AM registered);
                   the RM REST API is polled every 50 ms
    am_launched    the RM's launchTime (AM container launched)
    tasks_running  the last task's stamp
    finished       the RM's finishedTime
    client_exit    the submit command returned

`floor` is YARN's own floor: tony-submit with `[cluster] install_dir`
naming a directory whose `tony-am` is tony-bench-floor-am (bench/floor_am.cpp),
a no-op AM that asks for the containers and starts the commands itself.

Results are JSON lines appended to bench/out/<kind>.jsonl ($TONY_BENCH_OUT);
report.py turns them into RESULTS.md. bench/run.sh sets everything up and
calls this. --check (every part): exit 1 unless every run succeeded (what
CI's smoke runs assert; never a time).
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "peers"))
from tfyarn_job import litter as tfyarn_litter  # noqa: E402
from tfyarn_job import remove_litter as remove_tfyarn_litter  # noqa: E402
OUT = os.environ.get("TONY_BENCH_OUT", os.path.join(HERE, "out"))
STAMPS = "/tmp/tony-bench-stamps"

# -- environment (set by run.sh) ------------------------------------------------

BIN = os.environ.get("TONY_BENCH_BIN", os.path.join(ROOT, "build-bench", "bin"))
STATE = os.environ.get("TONY_BENCH_YARN_DIR", "/tmp/tony-yarn-bench")
CONF = os.path.join(STATE, "conf")
TONY_JAVA = os.environ.get("TONY_BENCH_TONY_JARS", os.path.join(HERE, ".cache", "tony-java"))
BENCH_VENV = os.environ.get("TONY_BENCH_VENV", os.path.join(HERE, ".venv"))
HADOOP2_CP = os.environ.get("TONY_BENCH_HADOOP2_CP",
                            os.path.join(HERE, ".cache", "hadoop2-classpath.txt"))
FLOOR_AM = os.environ.get("TONY_BENCH_FLOOR_AM", os.path.join(BIN, "tony-bench-floor-am"))
CACHE = os.environ.get("TONY_BENCH_CACHE", os.path.join(HERE, ".cache"))


def site_value(name, key, default=None):
    """A property of the cluster's CONF/<name> (Hadoop XML), or default."""
    try:
        import xml.etree.ElementTree as ET
        for prop in ET.parse(os.path.join(CONF, name)).getroot().iter("property"):
            if prop.findtext("name") == key:
                return prop.findtext("value")
    except (OSError, Exception):
        pass
    return default


# The RM's web address: the cluster's own (TONY_YARN_HOST puts it on
# another loopback address than 127.0.0.1).
RM = "http://" + site_value("yarn-site.xml", "yarn.resourcemanager.webapp.address",
                            os.environ.get("TONY_YARN_HOST", "127.0.0.1") + ":8088")


class Job:
    """The benchmark job's shape: `workers` workers and `ps` ps tasks of
    `memory` each, optionally with a Python environment (`venv`, an
    archive in the format the framework takes)."""

    def __init__(self, workers=2, ps=1, memory="1g", venv=None):
        self.workers = workers
        self.ps = ps
        self.memory = memory
        self.venv = venv

    @property
    def tasks(self):
        return self.workers + self.ps

    def memory_mb(self):
        m = self.memory.lower()
        return int(m[:-1]) * 1024 if m.endswith("g") else int(m.rstrip("m"))


def sized(n, memory="512m", venv=None):
    """A job of n tasks: n-1 workers and 1 ps."""
    return Job(workers=max(n - 1, 1), ps=1 if n > 1 else 0, memory=memory, venv=venv)


def log(*args):
    print("[bench]", *args, file=sys.stderr, flush=True)


def task_command(stamps, seconds, venv_check=False):
    # With a Python environment the command first checks that it is there,
    # unpacked (venv/pyvenv.cfg), so a stamp means "running in it".
    check = "test -f venv/pyvenv.cfg || exit 3; " if venv_check else ""
    return (check + 'echo "$(date +%s.%N) $$ ${JOB_NAME:-?}:${TASK_INDEX:-?} ${NM_HOST:-?}" >> ' + stamps
            + "; exec sleep " + str(seconds))


def read_stamps(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    rows.append((float(parts[0]), int(parts[1]), parts[2]) + tuple(parts[3:4]))
    except FileNotFoundError:
        pass
    return rows


def rm_get(path):
    with urllib.request.urlopen(RM + path, timeout=5) as r:
        return json.load(r)


def rm_kill(app):
    req = urllib.request.Request(RM + "/ws/v1/cluster/apps/%s/state" % app, method="PUT",
                                 data=b'{"state":"KILLED"}',
                                 headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=10).read()
    except Exception as e:
        log("could not kill %s: %s" % (app, e))


def rm_apps_since(ms):
    data = rm_get("/ws/v1/cluster/apps?startedTimeBegin=%d" % ms)
    return (data.get("apps") or {}).get("app") or []


class rm_watch(threading.Thread):
    """Polls the RM for the first application started after `t0`."""

    def __init__(self, t0, period=0.05):
        super().__init__(daemon=True)
        self.t0 = t0
        self.period = period
        self.app = None
        self.running_at = None
        self.final_at = None
        self.report = None
        self.stop = False

    def run(self):
        since = int(self.t0 * 1000) - 1000
        while not self.stop:
            try:
                apps = rm_apps_since(since)
            except Exception:
                apps = []
            now = time.time()
            # Every framework names the application "bench"; others on the
            # same cluster (CI's shared one) are not ours.
            mine = [a for a in apps if a.get("name") == "bench" and (self.app is None or a["id"] == self.app)]
            if mine:
                a = min(mine, key=lambda a: a["startedTime"])
                self.app = a["id"]
                self.report = a
                if a["state"] == "RUNNING" and self.running_at is None:
                    self.running_at = now
                if a["state"] in ("FINISHED", "FAILED", "KILLED"):
                    if self.running_at is None:
                        self.running_at = now
                    self.final_at = now
                    return
            time.sleep(self.period)


def wait_idle_cluster(timeout=120):
    """Waits until no application of ours ("bench") is running (a previous
    run's end)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            data = rm_get("/ws/v1/cluster/apps?states=NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING")
            if not [a for a in (data.get("apps") or {}).get("app") or [] if a.get("name") == "bench"]:
                return
        except Exception:
            pass
        time.sleep(0.5)
    log("the cluster still runs applications after %d s" % timeout)


# -- container processes ------------------------------------------------------------


def proc_env(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        k, _, v = item.partition(b"=")
        if k:
            env[k.decode(errors="replace")] = v.decode(errors="replace")
    return env


def proc_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def proc_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def proc_ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def app_suffix(app_id):
    # application_1700000000000_0007 -> _1700000000000_0007_
    return "_" + app_id.split("_", 1)[1] + "_"


def container_pids(app_id):
    """Every process of the application's containers, by CONTAINER_ID."""
    suffix = app_suffix(app_id)
    result = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        cid = proc_env(pid).get("CONTAINER_ID", "")
        if suffix in cid:
            result.append(pid)
    return result


def proc_pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def describe_cmd(cmd):
    """The command line, with a JVM's main class brought to the front."""
    line = " ".join(cmd)
    if cmd and os.path.basename(cmd[0]) == "java":
        mains = [a for a in cmd[1:] if re.match(r"^[a-z]+(\.[A-Za-z0-9_]+){2,}$", a)]
        if mains:
            return "java " + mains[0]
    return line[:200]


def classify(framework, cmd):
    """'yarn' (YARN's launch wrapper), 'user' (the job's command) or
    'framework' (everything else in the container: AM, executor, wrappers)."""
    line = " ".join(cmd)
    exe = os.path.basename(cmd[0]) if cmd else ""
    if exe in ("bash", "sh") and ("launch_container.sh" in line or "default_container_executor" in line):
        return "yarn"
    if exe == "sleep" or STAMPS in line:
        return "user"
    return "framework"


class sampler(threading.Thread):
    """Samples the memory of the application's processes every `period` s:
    per container and role, the peak of the summed RSS and PSS, and per
    process its peak RSS."""

    def __init__(self, framework, watch, period=0.2):
        super().__init__(daemon=True)
        self.framework = framework
        self.watch = watch
        self.period = period
        self.stop = False
        self.peak = {}   # (container, role) -> [rss kB, pss kB]
        self.procs = {}  # pid -> (container, role, peak rss kB, cmd)

    def run(self):
        while not self.stop:
            if self.watch.app:
                sums = {}
                suffix = app_suffix(self.watch.app)
                for name in os.listdir("/proc"):
                    if not name.isdigit():
                        continue
                    pid = int(name)
                    cid = proc_env(pid).get("CONTAINER_ID", "")
                    if suffix not in cid:
                        continue
                    cmd = proc_cmdline(pid)
                    role = classify(self.framework, cmd)
                    rss, pss = proc_rss_kb(pid), proc_pss_kb(pid)
                    acc = sums.setdefault((cid, role), [0, 0])
                    acc[0] += rss
                    acc[1] += pss
                    old = self.procs.get(pid, (cid, role, 0, cmd))
                    self.procs[pid] = (cid, role, max(old[2], rss), cmd)
                for key, (rss, pss) in sums.items():
                    best = self.peak.setdefault(key, [0, 0])
                    best[0] = max(best[0], rss)
                    best[1] = max(best[1], pss)
            time.sleep(self.period)


# -- the frameworks ---------------------------------------------------------------


def java_opens():
    out = subprocess.run(["bash", "-c", "source %s/scripts/yarn/lib.sh; yarn_java17_opens" % ROOT],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def hadoop_classpath():
    with open(os.path.join(CONF, "hadoop-classpath.txt")) as f:
        return CONF + ":" + f.read().strip()


class tony:
    name = "tony"
    title = "tony (C++, CAF)"
    install_dir = None
    # Each task type's `placement` in job.toml; None: the default (spread).
    placement = None
    # Each task type's `max_per_node`: its share of the nodes, rounded up
    # (TONY_BENCH_NODES), when True; None: not set.
    capped = None
    # Where its tony-submit (and the AM and executor beside it) is.
    bin_dir = BIN

    def submit(self, run_dir, command, fail_fast=False, job=None):
        job = job or Job()
        path = os.path.join(run_dir, "job.toml")
        src = os.path.join(run_dir, "src")
        os.makedirs(src, exist_ok=True)
        with open(path, "w") as f:
            f.write('name = "bench"\nframework = "tensorflow"\n\n[code]\nsrc_dir = "src"\n')
            f.write("command = %s\n" % json.dumps(command))
            if job.venv:
                f.write("python_venv = %s\n" % json.dumps(job.venv))
            f.write("\n")
            if job.venv:
                # The registration clock (default 2 m) starts at allocation,
                # so it includes the environment's localization: minutes for
                # hundreds of MB on a busy node (bench/notes.md).
                f.write('[policy]\nregistration_timeout = "15m"\n\n')
            if self.install_dir:
                f.write("[cluster]\ninstall_dir = %s\n\n" % json.dumps(self.install_dir))
            placed = 'placement = "%s"\n' % self.placement if self.placement else ""
            nodes = int(os.environ.get("TONY_BENCH_NODES", "1"))

            def cap(n):
                return "max_per_node = %d\n" % -(-n // nodes) if self.capped else ""
            f.write('[tasks.worker]\ninstances = %d\nmemory = "%s"\nvcores = 1\n%s%s\n' % (
                job.workers, job.memory, placed, cap(job.workers)))
            if job.ps:
                f.write('[tasks.ps]\ninstances = %d\nmemory = "%s"\nvcores = 1\n%s%s' % (
                    job.ps, job.memory, placed, cap(job.ps)))
        argv = [os.path.join(self.bin_dir, "tony-submit"), "--backend", "yarn", "--hadoop-conf", CONF,
                path]
        return argv, dict(os.environ)


class tonypack(tony):
    """tony with every task type packed (placement = "pack"): each node is
    asked for all of a type's tasks, so the scheduler fills the first node
    that heartbeats; tony's placement before spread became the default
    (doc/architecture.md "Spread placement")."""
    name = "tonypack"
    title = "tony, packed"
    placement = "pack"


class tonycap(tony):
    """tony spread with each type capped at its share of the nodes
    (`max_per_node`): by a SchedulingRequest where the ResourceManager's
    placement-constraints handler is not disabled (the placement
    processor places it when the AM asks, not on a node heartbeat), by
    strict node lists elsewhere (doc/architecture.md "Spread placement")."""
    name = "tonycap"
    title = "tony, capped per node"
    capped = True


class tonybase(tony):
    """tony as an earlier commit built it (TONY_BENCH_BASE_BIN: the
    stripped binaries of, e.g., the commit a round's issues were filed
    against), with its own defaults: the packed placement that tony had
    before spread (5678bef), to compare today's spread with."""
    name = "tonybase"
    title = "tony, an earlier commit"

    def __init__(self):
        self.bin_dir = os.environ.get("TONY_BENCH_BASE_BIN", "")
        if not os.access(os.path.join(self.bin_dir, "tony-submit"), os.X_OK):
            raise SystemExit("bench.py: no tony-submit in TONY_BENCH_BASE_BIN (%r): build the "
                             "earlier commit and point it at its binaries" % self.bin_dir)


class floor(tony):
    """YARN's floor: tony-submit, then a no-op AM (tony-bench-floor-am)
    that starts the commands itself; see bench/floor_am.cpp."""
    name = "floor"
    title = "YARN floor (no-op AM)"

    def __init__(self):
        if not os.access(FLOOR_AM, os.X_OK):
            raise SystemExit("bench.py: no floor AM at %s (build tony-bench-floor-am, or set "
                             "TONY_BENCH_FLOOR_AM)" % FLOOR_AM)
        # tony-submit runs <install_dir>/tony-am as the AM.
        self.install_dir = os.path.join(OUT, "floor-am")
        os.makedirs(self.install_dir, exist_ok=True)
        link = os.path.join(self.install_dir, "tony-am")
        if os.path.realpath(link) != os.path.realpath(FLOOR_AM):
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(os.path.abspath(FLOOR_AM), link)


class tonyj:
    name = "tonyj"
    title = "TonY 0.4.7 (Java)"

    def __init__(self):
        # Hadoop 2.10's SecurityUtil resolves hosts with the JDK's
        # sun.net.dns and sun.net.util when use_ip is false (tonyj_conf).
        self.opens = java_opens() + ["--add-exports=java.base/sun.net.dns=ALL-UNNAMED",
                                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED"]
        self.conf = tonyj_conf()

    def jars(self):
        return sorted(os.path.join(TONY_JAVA, j) for j in os.listdir(TONY_JAVA) if j.endswith(".jar"))

    def hadoop2(self):
        with open(HADOOP2_CP) as f:
            return [j for j in f.read().strip().split(":") if j]

    def submit(self, run_dir, command, fail_fast=False, job=None):
        job = job or Job()
        jars = self.jars()
        hadoop2 = self.hadoop2()
        fast = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        jvm = " ".join(self.opens + fast)
        confs = {
            "tony.application.name": "bench",
            "tony.application.framework": "tensorflow",
            "tony.worker.instances": str(job.workers),
            "tony.worker.memory": job.memory,
            "tony.ps.instances": str(job.ps),
            "tony.ps.memory": job.memory,
            "tony.am.memory": "1g",
            "tony.application.security.enabled": "false",
            "tony.history.location": "file://" + os.path.join(run_dir, "history"),
            "tony.history.intermediate": "file://" + os.path.join(run_dir, "history", "intermediate"),
            "tony.history.finished": "file://" + os.path.join(run_dir, "history", "finished"),
            # TonY ships its own jar (and what Hadoop 3.4 lacks) to every container.
            "tony.containers.resources": ",".join(jars),
            # ... and runs them on the Hadoop 2.10 jars it was built against
            # (instead of yarn.application.classpath, the cluster's 3.4.2).
            "tony.application.hadoop.classpath": ",".join([self.conf] + hadoop2),
            "tony.task.am.jvm.opts": jvm,
            "tony.task.executor.jvm.opts": "-Xmx%dm " % min(512, job.memory_mb() // 2) + jvm,
            "tony.application.fail-on-worker-failure-enabled": "true" if fail_fast else "false",
        }
        argv = ["java", "-Xmx512m"] + self.opens + fast + [
            "-cp", ":".join([self.conf] + jars + hadoop2),
            "com.linkedin.tony.TonyClient",
            "--executes", command,
            # TonY prefixes task commands with `hadoop classpath`; there is no
            # Hadoop install tree on this cluster (doc/local-yarn.md).
            "--container_env", "SKIP_HADOOP_PATH=true",
        ]
        if job.venv:
            # Uploaded with the job, unzipped by every TaskExecutor (TonY's way).
            argv += ["--python_venv", job.venv]
        for k, v in confs.items():
            argv += ["--conf", "%s=%s" % (k, v)]
        env = dict(os.environ)
        env["HADOOP_CONF_DIR"] = self.conf
        return argv, env


def tonyj_conf():
    """The cluster's configuration for TonY, with
    hadoop.security.token.service.use_ip=false. With the default (true)
    TonY's AM looks NM_HOST up among this machine's interface addresses
    (Utils.getHostNameOrIpFromTokenConf, NetUtils.getLocalInetAddress) and
    fails with "Can't resolve the ip of 127.0.0.3" where a NodeManager is a
    loopback address other than 127.0.0.1, as on the bench's multi-node
    cluster; on a real cluster NM_HOST is an interface's address. Without
    Kerberos no token carries the service name this changes."""
    conf = os.path.join(OUT, "tonyj-conf")
    os.makedirs(conf, exist_ok=True)
    for name in os.listdir(CONF):
        src = os.path.join(CONF, name)
        if os.path.isfile(src):
            shutil.copy(src, os.path.join(conf, name))
    path = os.path.join(conf, "core-site.xml")
    with open(path) as f:
        xml = f.read()
    key = "hadoop.security.token.service.use_ip"
    if key not in xml:
        xml = xml.replace("</configuration>", "  <property><name>%s</name><value>false</value></property>\n"
                          "</configuration>" % key)
        with open(path, "w") as f:
            f.write(xml)
    return conf


class tfyarn:
    name = "tfyarn"
    title = "tf-yarn 0.7.0 (Python, skein)"

    def submit(self, run_dir, command, fail_fast=False, job=None):
        job = job or Job()
        py = os.path.join(BENCH_VENV, "bin", "python")
        pex = job.venv or os.environ.get("TONY_BENCH_TFYARN_PYENV",
                                         os.path.join(HERE, ".cache", "envs", "bench.pex"))
        argv = [py, os.path.join(HERE, "peers", "tfyarn_job.py"), "--command", command, "--pyenv", pex,
                "--workers", str(job.workers), "--ps", str(job.ps), "--memory-mb", str(job.memory_mb())]
        env = dict(os.environ)
        env["HADOOP_CONF_DIR"] = CONF
        env["PATH"] = os.path.join(HERE, "peers", "bin") + ":" + os.path.join(BENCH_VENV, "bin") + ":" + env["PATH"]
        env["TONY_BENCH_YARN_DIR"] = STATE
        env["SKEIN_DRIVER_JAVA_OPTIONS"] = " ".join(java_opens())
        return argv, env


FRAMEWORKS = {"tony": tony, "tonypack": tonypack, "tonycap": tonycap, "tonybase": tonybase, "floor": floor, "tonyj": tonyj, "tfyarn": tfyarn}


# -- one run ------------------------------------------------------------------------


def one_run(fw, kind, seconds=1, on_running=None, sample=False, timeout=300, job=None, extra=None,
            client_grace=None):
    job = job or Job()
    if client_grace is None:
        # The launch parts measure when the client returns; the others do
        # not wait for a client that lingers (tf-yarn's ~50 s of log fetching).
        client_grace = 120 if kind.startswith("launch") else 5
    run_id = "%s-%s-%d" % (kind, fw.name, int(time.time() * 1000))
    run_dir = os.path.join(OUT, "runs", run_id)
    os.makedirs(run_dir, exist_ok=True)
    os.makedirs(STAMPS, exist_ok=True)
    stamps = os.path.join(STAMPS, run_id)
    command = task_command(stamps, seconds, venv_check=bool(job.venv) and fw.name != "tfyarn")
    argv, env = fw.submit(run_dir, command, fail_fast=kind == "failure", job=job)
    wait_idle_cluster()
    lines = []
    t0 = time.time()
    watch = rm_watch(t0)
    watch.start()
    smp = None
    if sample:
        smp = sampler(fw.name, watch)
        smp.start()
    litter = tfyarn_litter() if fw.name == "tfyarn" else None
    proc = subprocess.Popen(argv, env=env, cwd=run_dir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def reader():
        for line in proc.stdout:
            lines.append((time.time(), line.rstrip("\n")))

    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    result = {"framework": fw.name, "kind": kind, "run": run_id, "load1": os.getloadavg()[0],
              "nodes": int(os.environ.get("TONY_BENCH_NODES", "1")), "tasks": job.tasks}
    result.update(extra or {})
    fired = False
    client_gone = time.time()
    deadline = t0 + timeout
    while True:
        rows = read_stamps(stamps)
        if on_running and not fired and len(rows) >= job.tasks:
            fired = True
            on_running(watch, rows, result)
        if proc.poll() is not None and (watch.final_at or time.time() > deadline
                                        or (watch.app is None and time.time() > client_gone + 5)):
            break
        if proc.poll() is None:
            client_gone = time.time()
            # A client may linger long after its application ended (tf-yarn
            # retries fetching aggregated logs for ~50 s): not past this.
            if watch.final_at and time.time() > watch.final_at + client_grace:
                log("%s: the client is still there %d s after the application ended; killing it" % (
                    run_id, client_grace))
                os.killpg(proc.pid, signal.SIGKILL)
                result["client_killed"] = True
                proc.wait()
                break
        if time.time() > deadline:
            log("%s: no end after %d s, killing the client and %s" % (run_id, timeout, watch.app))
            os.killpg(proc.pid, signal.SIGKILL)
            if watch.app:
                rm_kill(watch.app)
            result["error"] = "timeout"
            break
        time.sleep(0.02)
    client_exit = time.time()
    rt.join(timeout=5)
    # The RM may lag the client by a poll or two.
    end = time.time() + 30
    while watch.final_at is None and time.time() < end and watch.app:
        time.sleep(0.05)
    watch.stop = True
    if smp:
        smp.stop = True
        smp.join()
    rows = read_stamps(stamps)
    if litter is not None:
        remove_tfyarn_litter(litter)
    with open(os.path.join(run_dir, "client.log"), "w") as f:
        for t, line in lines:
            f.write("%.3f %s\n" % (t - t0, line))
    rep = watch.report or {}
    result.update({
        "app": watch.app,
        "exit_code": proc.returncode,
        "final_status": rep.get("finalStatus"),
        "state": rep.get("state"),
        "tasks_started": len(rows),
        "am_launched": (rep["launchTime"] / 1000.0 - t0) if rep.get("launchTime") else None,
        "am_running": (watch.running_at - t0) if watch.running_at else None,
        "submitted": (rep["startedTime"] / 1000.0 - t0) if rep.get("startedTime") else None,
        "tasks_running": (max(r[0] for r in rows) - t0) if len(rows) >= job.tasks else None,
        "hosts": len(set(r[3] for r in rows if len(r) > 3)) or None,
        "first_task": (min(r[0] for r in rows) - t0) if rows else None,
        "finished": (rep["finishedTime"] / 1000.0 - t0) if rep.get("finishedTime") else None,
        "client_exit": client_exit - t0,
        "t0_abs": t0,
        "diagnostics": (rep.get("diagnostics") or "")[:500],
    })
    if smp:
        containers = {}
        for (cid, role), (rss, pss) in smp.peak.items():
            c = containers.setdefault(cid, {"am": cid.endswith("_000001")})
            c[role] = {"rss_kb": rss, "pss_kb": pss}
        result["containers"] = containers
        result["processes"] = [{"container": cid, "role": role, "rss_kb": rss, "cmd": describe_cmd(cmd)}
                               for pid, (cid, role, rss, cmd) in sorted(smp.procs.items())]
    if not rows or (kind.startswith("launch") and len(rows) < job.tasks) or rep.get("finalStatus") != "SUCCEEDED":
        if kind != "failure":
            tail = "\n".join(l for _, l in lines[-15:])
            log("%s: %s/%s, %d stamps; client output ends:\n%s" % (
                run_id, rep.get("state"), rep.get("finalStatus"), len(rows), tail))
    return result


def append(kind, result):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, kind + ".jsonl"), "a") as f:
        f.write(json.dumps(result) + "\n")


def summarize(values):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    return "median %.2f  min %.2f  max %.2f  (n=%d)" % (
        statistics.median(values), min(values), max(values), len(values))


def set_scheduler(key, value):
    """Sets a CapacityScheduler property of the bench cluster and refreshes
    the queues (`rmadmin -refreshQueues`)."""
    path = os.path.join(CONF, "capacity-scheduler.xml")
    with open(path) as f:
        xml = f.read()
    xml = re.sub(r"\s*<property><name>%s</name><value>[^<]*</value></property>" % re.escape(key), "", xml)
    xml = xml.replace("</configuration>",
                      "  <property><name>%s</name><value>%s</value></property>\n</configuration>" % (key, value))
    with open(path, "w") as f:
        f.write(xml)
    subprocess.run([os.path.join(ROOT, "scripts", "yarn", "yarn.sh"), "--dir", STATE, "rmadmin",
                    "-refreshQueues"], check=True)


def set_max_offswitch(n):
    """Lets the CapacityScheduler hand out `n` off-switch containers per node
    heartbeat (default 1) on the bench cluster, to show what YARN's own pace
    costs each framework."""
    set_scheduler("yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments", n)


def cmd_launch(args):
    kind = "launch"
    if args.max_offswitch:
        set_max_offswitch(args.max_offswitch)
        kind = "launch-offswitch"
    fws = [FRAMEWORKS[n]() for n in args.frameworks.split(",")]
    results = {fw.name: [] for fw in fws}
    ok = {fw.name: 0 for fw in fws}
    # Rounds alternate the frameworks; a framework whose run failed gets up
    # to `--retries` more rounds to reach `--runs` successful runs (the
    # failures are kept and reported).
    for i in range(args.runs + args.retries):
        todo = [fw for fw in fws if ok[fw.name] < args.runs and len(results[fw.name]) < args.runs + args.retries]
        if not todo:
            break
        for fw in todo:
            r = one_run(fw, kind)
            append(kind, r)
            note_result(r)
            results[fw.name].append(r)
            if r.get("final_status") == "SUCCEEDED" and r.get("tasks_running") is not None:
                ok[fw.name] += 1
            log("%s run %d: AM running %s, tasks running %s, finished %s (%s)" % (
                fw.name, i + 1, fmt(r["am_running"]), fmt(r["tasks_running"]),
                fmt(r["finished"]), r["final_status"]))
    for name, rs in results.items():
        log(name, "tasks running:", summarize([r["tasks_running"] for r in rs]))


def fmt(x):
    return "-" if x is None else "%.2fs" % x


def cmd_footprint(args):
    for name in args.frameworks.split(","):
        fw = FRAMEWORKS[name]()
        r = one_run(fw, "footprint", seconds=args.seconds, sample=True)
        append("footprint", r)
        note_result(r)
        for cid, c in sorted((r.get("containers") or {}).items()):
            log(name, cid[-6:], "AM" if c["am"] else "task",
                {k: v for k, v in c.items() if k != "am"})


def kill_target(mode):
    def act(watch, rows, result):
        workers = [r for r in rows if r[2].startswith("worker:")] or rows
        # The stamp's pid is the command's main process (exec sleep).
        pid = workers[0][1]
        if mode == "executor":
            pid = proc_ppid(pid)
        result["killed_pid"] = pid
        result["killed_cmd"] = " ".join(proc_cmdline(pid))[:200]
        result["killed_at_abs"] = time.time()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            result["error"] = "target already gone"
        watch.period = 0.01

        def clean():
            # The last processes seen before all were gone: what an outlier
            # waited for (bench/notes.md, failure).
            last = []
            while True:
                pids = container_pids(watch.app) if watch.app else None
                if watch.app and not pids:
                    result["clean_at_abs"] = time.time()
                    result["last_gone"] = last
                    return
                if pids:
                    seen = time.time() - result["killed_at_abs"]
                    last = [{"pid": p, "cmd": describe_cmd(proc_cmdline(p))[:120],
                             "seen_at": round(seen, 3)} for p in pids]
                if time.time() - result["killed_at_abs"] > 120:
                    return
                time.sleep(0.02)

        t = threading.Thread(target=clean, daemon=True)
        t.start()
        result["_cleaner"] = t
    return act


def cmd_failure(args):
    for i in range(args.runs):
        for name in args.frameworks.split(","):
            fw = FRAMEWORKS[name]()
            for mode in args.kill.split(","):
                r = one_run(fw, "failure", seconds=120, on_running=kill_target(mode), timeout=240)
                cleaner = r.pop("_cleaner", None)
                if cleaner:
                    cleaner.join(timeout=130)
                r["mode"] = mode
                t_kill = r.get("killed_at_abs")
                if t_kill:
                    if r.get("finished") is not None:
                        r["kill_to_final"] = r["t0_abs"] + r["finished"] - t_kill
                    r["kill_to_clean"] = (r["clean_at_abs"] - t_kill) if r.get("clean_at_abs") else None
                append("failure", r)
                if r.get("final_status") != "FAILED" or r.get("kill_to_clean") is None:
                    FAILED.append(r.get("run"))
                log("%s kill %s: final %s, clean %s, %s" % (
                    name, mode, fmt(r.get("kill_to_final")), fmt(r.get("kill_to_clean")),
                    r.get("final_status")))


# -- launch at scale ----------------------------------------------------------------

FAILED = []  # runs that did not succeed (--check)


def succeeded(r):
    return (r.get("final_status") == "SUCCEEDED" and r.get("tasks_running") is not None
            and not r.get("error"))


def note_result(r):
    if not succeeded(r):
        FAILED.append(r.get("run"))


def parse_limits(text):
    """'tfyarn=32,tonyj=64' -> {'tfyarn': 32, 'tonyj': 64}"""
    out = {}
    for item in filter(None, (text or "").split(",")):
        k, _, v = item.partition("=")
        out[k.strip()] = int(v)
    return out


def cmd_scale(args):
    """Jobs of each size (N-1 workers, 1 ps) on every framework: submit to
    every task running with its cluster spec; the floor beside them."""
    names = args.frameworks.split(",")
    limits = parse_limits(args.max_size)
    fws = {}
    for n in names:
        fws[n] = FRAMEWORKS[n]()
    for size in [int(x) for x in args.sizes.split(",")]:
        job = sized(size, memory=args.memory)
        todo = []
        for n in names:
            if n in limits and size > limits[n]:
                r = {"framework": n, "kind": "scale", "tasks": size,
                     "skipped": args.why or "not run above %d tasks (--max-size)" % limits[n],
                     "nodes": int(os.environ.get("TONY_BENCH_NODES", "1")), "load1": os.getloadavg()[0]}
                append("scale", r)
                log("%s at %d tasks: skipped (%s)" % (n, size, r["skipped"]))
                continue
            todo.append(n)
        runs = {n: (args.peer_runs if n in ("tonyj", "tfyarn") and args.peer_runs else args.runs)
                for n in todo}
        done = {n: [] for n in todo}
        ok = {n: 0 for n in todo}
        for i in range(max(runs.values() or [0]) + args.retries):
            left = [n for n in todo if ok[n] < runs[n] and len(done[n]) < runs[n] + args.retries]
            if not left:
                break
            for n in left:
                r = one_run(fws[n], "scale", job=job, timeout=300 + 15 * size)
                append("scale", r)
                note_result(r)
                done[n].append(r)
                if succeeded(r):
                    ok[n] += 1
                log("%d tasks, %s run %d: AM running %s, tasks running %s on %s hosts (%s), load %.1f" % (
                    size, n, i + 1, fmt(r["am_running"]), fmt(r["tasks_running"]), r.get("hosts"),
                    r["final_status"], r["load1"]))
        for n, rs in done.items():
            log("%d tasks, %s: tasks running %s" % (size, n, summarize([r["tasks_running"] for r in rs])))


# -- a real Python environment -------------------------------------------------------

def nm_local_roots():
    """(node address, its NodeManager's local dir) of the bench cluster."""
    base = os.path.join(STATE, "nm-local")
    nodes = []
    try:
        with open(os.path.join(STATE, "node-addresses")) as f:
            nodes = [l.strip() for l in f if l.strip()]
    except OSError:
        pass
    if len(nodes) > 1:
        return [(n, os.path.join(base, n)) for n in nodes]
    return [(nodes[0] if nodes else "127.0.0.1", base)]


def venv_copies():
    """Unpacked copies of a Python environment (a directory holding
    pyvenv.cfg) on each node: in the NodeManager's caches (filecache: one
    per localization) and in the containers' own directories (what a
    framework unpacks itself)."""
    out = {}
    for node, root in nm_local_roots():
        copies = []
        for d, dirs, files in os.walk(root, followlinks=False):
            if "pyvenv.cfg" in files:
                copies.append(os.path.relpath(d, root))
                dirs[:] = []
        out[node] = copies
    return out


def webhdfs_list(path):
    """[(path, modificationTime ms)] of the files under `path` (two levels),
    through the cluster's WebHDFS; [] when there is none."""
    nn = site_value("hdfs-site.xml", "dfs.namenode.http-address")
    if not nn:
        return []
    import getpass
    user = getpass.getuser()
    found = []

    def ls(p, depth):
        url = "http://%s/webhdfs/v1%s?op=LISTSTATUS&user.name=%s" % (nn, p, user)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                entries = json.load(r)["FileStatuses"]["FileStatus"]
        except Exception:
            return
        for e in entries:
            child = p.rstrip("/") + "/" + e["pathSuffix"]
            if e["type"] == "DIRECTORY" and depth > 0:
                ls(child, depth - 1)
            elif e["type"] == "FILE":
                found.append((child, e["modificationTime"], e["length"]))

    ls(path, 1)
    return found


def tony_env_store():
    """Where tony-submit keeps environments once per content on the bench
    cluster's HDFS (<staging root>/envs, doc/operations.md)."""
    import getpass
    return "/user/%s/.tony/envs" % getpass.getuser()


def pack_tony(python, venv, cache_dir):
    """tony.pack_env(venv) with `python` (which has venv-pack), into
    cache_dir: the archive's path and the seconds it took."""
    env = dict(os.environ)
    env["TONY_CACHE_DIR"] = cache_dir
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t = time.time()
    p = subprocess.run([python, "-c", "import sys, tony; print(tony.pack_env(sys.argv[1]))", venv],
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("bench.py: tony.pack_env(%s) failed:\n%s" % (venv, p.stderr[-3000:]))
    return p.stdout.strip().splitlines()[-1], time.time() - t


def zip_of(archive):
    """The environment of the tar.gz `archive` as the zip TonY takes
    (--python_venv: unzipped by every TaskExecutor), made once and kept in
    the bench's cache; links to files become the files (TonY's unzip does
    not make links), links to directories are left out. Returns (zip path,
    seconds it took to make, made now)."""
    out = os.path.join(CACHE, "pyenv", os.path.basename(archive).replace(".tar.gz", "") + ".zip")
    meta = out + ".json"
    if os.path.exists(out) and os.path.exists(meta):
        with open(meta) as f:
            return out, json.load(f)["seconds"], False
    os.makedirs(os.path.dirname(out), exist_ok=True)
    import tempfile
    t = time.time()
    tmp = tempfile.mkdtemp(prefix="tony-bench-zip-", dir=os.path.dirname(out))
    try:
        subprocess.run(["tar", "-xzf", archive, "-C", tmp], check=True)
        # A link to a file becomes the file (bin/python); a link to a
        # directory (a venv's lib64 -> lib) goes: zip would copy the whole
        # tree again, and TonY's unzip does not make links.
        for d, dirs, files in os.walk(tmp):
            for name in dirs + files:
                path = os.path.join(d, name)
                if not os.path.islink(path):
                    continue
                target = os.path.realpath(path)
                os.unlink(path)
                if os.path.isfile(target):
                    shutil.copy2(target, path)
        if os.path.exists(out + ".part"):
            os.unlink(out + ".part")
        subprocess.run(["zip", "-q", "-r", out + ".part", "."], cwd=tmp, check=True)
        os.replace(out + ".part", out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seconds = time.time() - t
    with open(meta, "w") as f:
        json.dump({"seconds": seconds, "from": archive}, f)
    return out, seconds, True


def cmd_pyenv(args):
    """A job of --tasks tasks with the environment at --venv, packed: first
    submit, unchanged resubmits, the same job without any environment;
    tony beside TonY (and tf-yarn where given a pex of it)."""
    if args.venv == "tiny":
        # A small virtualenv made here (CI's smoke run): the same path, in seconds.
        venv = os.path.join(OUT, "tiny-venv")
        if not os.path.exists(os.path.join(venv, "pyvenv.cfg")):
            subprocess.run([args.python or sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    else:
        venv = os.path.abspath(args.venv)
    python = args.python or os.path.join(venv, "bin", "python")
    nodes = int(os.environ.get("TONY_BENCH_NODES", "1"))
    names = args.frameworks.split(",")
    cache_dir = args.pack_cache or os.path.join(OUT, "pyenv-cache-%d" % int(time.time()))
    archive, pack_s = pack_tony(python, venv, cache_dir)
    again, again_s = pack_tony(python, venv, cache_dir)
    pack = {"framework": "tony", "kind": "pyenv-pack", "venv": venv, "archive": archive,
            "archive_bytes": os.path.getsize(archive), "pack_s": pack_s, "pack_again_s": again_s,
            "same_archive": again == archive, "load1": os.getloadavg()[0]}
    du = subprocess.run(["du", "-sb", venv], capture_output=True, text=True).stdout.split()
    pack["venv_bytes"] = int(du[0]) if du else None
    append("pyenv", pack)
    log("tony.pack_env: %s, %.0f MiB, %.1f s; again (unchanged) %.2f s, same archive: %s" % (
        archive, pack["archive_bytes"] / 2 ** 20, pack_s, again_s, again == archive))
    if again != archive:
        FAILED.append("pack_env returned another archive for an unchanged environment")

    def run(fw, mode, job, extra):
        before = {p: m for p, m, _ in webhdfs_list(tony_env_store())} if fw.name == "tony" else {}
        had = venv_copies()
        seen = {}

        def look(watch, rows, result):
            seen.update(venv_copies())

        r = one_run(fw, "pyenv", job=job, on_running=look, timeout=args.timeout,
                    extra=dict(extra, mode=mode, memory=job.memory))
        # Unpacked copies of the environment this job made, per node: in the
        # NodeManagers' caches or in its containers' directories.
        made = {node: sorted(set(c) - set(had.get(node, []))) for node, c in seen.items()}
        r["venv_copies"] = {node: len(c) for node, c in made.items()}
        r["venv_copies_total"] = sum(r["venv_copies"].values()) if seen else None
        r["venv_copies_where"] = sorted(set(c.split("/")[0] + "/" + c.split("/")[2]
                                            for cs in made.values() for c in cs if c.count("/") >= 2))
        if fw.name == "tony" and job.venv:
            after = webhdfs_list(tony_env_store())
            r["env_uploaded"] = any(before.get(p) != m for p, m, _ in after)
            r["env_store_files"] = len(after)
        append("pyenv", r)
        note_result(r)
        log("pyenv %s %s: submitted %s, AM running %s, tasks running %s on %s hosts; copies made %s%s (%s)" % (
            fw.name, mode, fmt(r.get("submitted")), fmt(r["am_running"]), fmt(r["tasks_running"]),
            r.get("hosts"), r["venv_copies"],
            "" if "env_uploaded" not in r else ", uploaded: %s" % r["env_uploaded"], r["final_status"]))
        # The cluster keeps finished containers' directories for an hour
        # (yarn.nodemanager.delete.debug-delay-sec): a framework that unpacks
        # the environment in every container would fill the disk.
        if r.get("app"):
            for node, root in nm_local_roots():
                for app_dir in glob.glob(os.path.join(root, "usercache", "*", "appcache", r["app"])):
                    shutil.rmtree(app_dir, ignore_errors=True)
        return r

    tasks = args.tasks
    memory = args.memory
    if memory == "spread":
        # Tasks larger than 1/(k+1) of a node, k = tasks per node if spread
        # evenly: the scheduler fills a node per heartbeat, so this puts
        # them on every node. Their sum exceeds the queue's share of one
        # user (70 %), so that limit is lifted for this part.
        nm_mb = int(site_value("yarn-site.xml", "yarn.nodemanager.resource.memory-mb", "16384"))
        per_node = -(-tasks // max(nodes, 1))
        memory = "%dm" % (nm_mb // per_node // 128 * 128)
        set_scheduler("yarn.scheduler.capacity.root.default.user-limit-factor", 10)
    noenv = sized(tasks, memory=memory)
    withenv = sized(tasks, memory=memory, venv=archive)
    if "tony" in names:
        t = FRAMEWORKS["tony"]()
        run(t, "no-env", noenv, {})
        run(t, "first", withenv, {"pack_s": pack_s})
        for i in range(args.runs):
            run(t, "again", withenv, {"pack_s": again_s})
            run(t, "no-env", noenv, {})
    if "tonyj" in names:
        z, zip_s, made = zip_of(archive)
        log("TonY's venv zip: %s, %.0f MiB, made in %.1f s%s" % (
            z, os.path.getsize(z) / 2 ** 20, zip_s, "" if made else " (earlier; kept)"))
        j = FRAMEWORKS["tonyj"]()
        for i in range(args.peer_runs):
            run(j, "every", sized(tasks, memory=memory, venv=z),
                {"pack_s": zip_s, "zip_made_now": made, "archive_bytes": os.path.getsize(z)})
    if "tfyarn" in names:
        if not args.tfyarn_pex:
            append("pyenv", {"framework": "tfyarn", "kind": "pyenv", "skipped": args.tfyarn_skip,
                             "tasks": tasks, "nodes": nodes})
            log("pyenv tfyarn: skipped (%s)" % args.tfyarn_skip)
        else:
            f = FRAMEWORKS["tfyarn"]()
            for i in range(args.peer_runs):
                run(f, "every", sized(tasks, memory=memory, venv=args.tfyarn_pex), {})
    if args.memory == "spread":
        set_scheduler("yarn.scheduler.capacity.root.default.user-limit-factor", 1)


# -- local backend ----------------------------------------------------------------


def cmd_local(args):
    for i in range(args.runs):
        for mode in ("tony-local", "shell"):
            run_id = "local-%s-%d" % (mode, int(time.time() * 1000))
            run_dir = os.path.join(OUT, "runs", run_id)
            os.makedirs(run_dir, exist_ok=True)
            os.makedirs(STAMPS, exist_ok=True)
            stamps = os.path.join(STAMPS, run_id)
            command = task_command(stamps, 1)
            if mode == "tony-local":
                tony().submit(run_dir, command)
                argv = [os.path.join(BIN, "tony-submit"), os.path.join(run_dir, "job.toml")]
            else:
                script = os.path.join(run_dir, "floor.sh")
                with open(script, "w") as f:
                    f.write("#!/bin/sh\n")
                    for t in ("worker:0", "worker:1", "ps:0"):
                        job, idx = t.split(":")
                        f.write("JOB_NAME=%s TASK_INDEX=%s sh -c %s &\n" % (job, idx, shlex.quote(command)))
                    f.write("wait\n")
                argv = ["sh", script]
            t0 = time.time()
            p = subprocess.run(argv, cwd=run_dir, capture_output=True, text=True)
            t_exit = time.time()
            rows = read_stamps(stamps)
            r = {"framework": mode, "kind": "local", "run": run_id, "exit_code": p.returncode,
                 "load1": os.getloadavg()[0],
                 "tasks_started": len(rows),
                 "first_task": (min(x[0] for x in rows) - t0) if rows else None,
                 "tasks_running": (max(x[0] for x in rows) - t0) if len(rows) >= 3 else None,
                 "client_exit": t_exit - t0}
            if p.returncode != 0 or r["tasks_running"] is None:
                log(mode, "failed:", (p.stdout + p.stderr)[-2000:])
                FAILED.append(run_id)
            append("local", r)
            log("%s run %d: tasks running %s, exit %s" % (mode, i + 1, fmt(r["tasks_running"]),
                                                          fmt(r["client_exit"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("launch")
    p.add_argument("--frameworks", default="tony,tonyj,tfyarn")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--retries", type=int, default=3,
                   help="extra runs allowed per framework to replace failed ones")
    p.add_argument("--max-offswitch", type=int, default=0,
                   help="first set the scheduler's off-switch assignments per node heartbeat")
    p = sub.add_parser("footprint")
    p.add_argument("--frameworks", default="tony,tonyj,tfyarn")
    p.add_argument("--seconds", type=int, default=8)
    p = sub.add_parser("failure")
    p.add_argument("--frameworks", default="tony,tonyj")
    p.add_argument("--kill", default="command,executor")
    p.add_argument("--runs", type=int, default=3)
    p = sub.add_parser("scale")
    p.add_argument("--sizes", default="8,32,64", help="tasks per job (N-1 workers and 1 ps)")
    p.add_argument("--frameworks", default="floor,tony,tonypack,tonyj,tfyarn")
    p.add_argument("--runs", type=int, default=3, help="runs per framework and size")
    p.add_argument("--peer-runs", type=int, default=0,
                   help="runs of TonY and tf-yarn per size, when fewer (0: --runs)")
    p.add_argument("--retries", type=int, default=1)
    p.add_argument("--memory", default="512m", help="each task's container")
    p.add_argument("--max-size", default="",
                   help="FW=N,...: run FW only up to N tasks (a record says it was skipped)")
    p.add_argument("--why", default="", help="the reason recorded for what --max-size skips")
    p = sub.add_parser("pyenv")
    p.add_argument("--venv", required=True,
                   help="the environment to pack (a virtualenv); 'tiny': make a small one in out/")
    p.add_argument("--python", help="a Python with venv-pack (default: the venv's)")
    p.add_argument("--tasks", type=int, default=16)
    p.add_argument("--frameworks", default="tony,tonyj,tfyarn")
    p.add_argument("--runs", type=int, default=2,
                   help="unchanged resubmits of tony, each followed by a run without environment")
    p.add_argument("--peer-runs", type=int, default=1)
    p.add_argument("--memory", default="spread",
                   help="each task's container; 'spread': sized so the tasks go to every node")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--pack-cache", help="tony.pack_env's cache (default: a fresh one in out/)")
    p.add_argument("--tfyarn-pex", help="the environment as tf-yarn takes it (a .pex)")
    p.add_argument("--tfyarn-skip", default="no .pex of the environment given (--tfyarn-pex)")
    p = sub.add_parser("local")
    p.add_argument("--runs", type=int, default=5)
    for p in sub.choices.values():
        p.add_argument("--check", action="store_true",
                       help="exit 1 unless every run succeeded (CI's smoke runs)")
    args = ap.parse_args()
    {"launch": cmd_launch, "footprint": cmd_footprint, "failure": cmd_failure, "scale": cmd_scale,
     "pyenv": cmd_pyenv, "local": cmd_local}[args.cmd](args)
    if args.check and FAILED:
        log("failed runs: %s" % ", ".join(str(x) for x in FAILED))
        sys.exit(1)


if __name__ == "__main__":
    main()
