#!/usr/bin/env python3
"""tony beside TonY and tf-yarn on one YARN: launch latency, footprint,
failure detection; and tony's local backend against a plain shell.

    bench.py launch   --frameworks tony,tonyj,tfyarn --runs 5
    bench.py footprint --frameworks tony,tonyj,tfyarn
    bench.py failure  --frameworks tony,tonyj --kill command,executor --runs 3
    bench.py local    --runs 5

Every framework runs the same trivial job: 2 workers and 1 ps, each running

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

Results are JSON lines appended to bench/out/<kind>.jsonl; report.py turns
them into RESULTS.md. bench/run.sh sets everything up and calls this.
"""

import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
RM = "http://127.0.0.1:8088"
STAMPS = "/tmp/tony-bench-stamps"

# -- environment (set by run.sh) ------------------------------------------------

BIN = os.environ.get("TONY_BENCH_BIN", os.path.join(ROOT, "build-bench", "bin"))
STATE = os.environ.get("TONY_BENCH_YARN_DIR", "/tmp/tony-yarn-bench")
CONF = os.path.join(STATE, "conf")
TONY_JAVA = os.environ.get("TONY_BENCH_TONY_JARS", os.path.join(HERE, ".cache", "tony-java"))
BENCH_VENV = os.environ.get("TONY_BENCH_VENV", os.path.join(HERE, ".venv"))
HADOOP2_CP = os.environ.get("TONY_BENCH_HADOOP2_CP",
                            os.path.join(HERE, ".cache", "hadoop2-classpath.txt"))


def log(*args):
    print("[bench]", *args, file=sys.stderr, flush=True)


def task_command(stamps, seconds):
    return ('echo "$(date +%s.%N) $$ ${JOB_NAME:-?}:${TASK_INDEX:-?}" >> ' + stamps
            + "; exec sleep " + str(seconds))


def read_stamps(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    rows.append((float(parts[0]), int(parts[1]), parts[2]))
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
            mine = [a for a in apps if self.app is None or a["id"] == self.app]
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
    """Waits until no application of ours is running (a previous run's end)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            data = rm_get("/ws/v1/cluster/apps?states=NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING")
            if not (data.get("apps") or {}).get("app"):
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

    def submit(self, run_dir, command, fail_fast=False):
        job = os.path.join(run_dir, "job.toml")
        src = os.path.join(run_dir, "src")
        os.makedirs(src, exist_ok=True)
        with open(job, "w") as f:
            f.write('name = "bench"\nframework = "tensorflow"\n\n[code]\nsrc_dir = "src"\n')
            f.write("command = %s\n\n" % json.dumps(command))
            f.write('[tasks.worker]\ninstances = 2\nmemory = "1g"\nvcores = 1\n\n')
            f.write('[tasks.ps]\ninstances = 1\nmemory = "1g"\nvcores = 1\n')
        argv = [os.path.join(BIN, "tony-submit"), "--backend", "yarn", "--hadoop-conf", CONF, job]
        return argv, dict(os.environ)


class tonyj:
    name = "tonyj"
    title = "TonY 0.4.7 (Java)"

    def __init__(self):
        self.opens = java_opens()

    def jars(self):
        return sorted(os.path.join(TONY_JAVA, j) for j in os.listdir(TONY_JAVA) if j.endswith(".jar"))

    def hadoop2(self):
        with open(HADOOP2_CP) as f:
            return [j for j in f.read().strip().split(":") if j]

    def submit(self, run_dir, command, fail_fast=False):
        jars = self.jars()
        hadoop2 = self.hadoop2()
        fast = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        jvm = " ".join(self.opens + fast)
        confs = {
            "tony.application.name": "bench",
            "tony.application.framework": "tensorflow",
            "tony.worker.instances": "2",
            "tony.worker.memory": "1g",
            "tony.ps.instances": "1",
            "tony.ps.memory": "1g",
            "tony.am.memory": "1g",
            "tony.application.security.enabled": "false",
            "tony.history.location": "file://" + os.path.join(run_dir, "history"),
            "tony.history.intermediate": "file://" + os.path.join(run_dir, "history", "intermediate"),
            "tony.history.finished": "file://" + os.path.join(run_dir, "history", "finished"),
            # TonY ships its own jar (and what Hadoop 3.4 lacks) to every container.
            "tony.containers.resources": ",".join(jars),
            # ... and runs them on the Hadoop 2.10 jars it was built against
            # (instead of yarn.application.classpath, the cluster's 3.4.2).
            "tony.application.hadoop.classpath": ",".join([CONF] + hadoop2),
            "tony.task.am.jvm.opts": jvm,
            "tony.task.executor.jvm.opts": "-Xmx512m " + jvm,
            "tony.application.fail-on-worker-failure-enabled": "true" if fail_fast else "false",
        }
        argv = ["java", "-Xmx512m"] + self.opens + fast + [
            "-cp", ":".join([CONF] + jars + hadoop2),
            "com.linkedin.tony.TonyClient",
            "--executes", command,
            # TonY prefixes task commands with `hadoop classpath`; there is no
            # Hadoop install tree on this cluster (doc/local-yarn.md).
            "--container_env", "SKIP_HADOOP_PATH=true",
        ]
        for k, v in confs.items():
            argv += ["--conf", "%s=%s" % (k, v)]
        env = dict(os.environ)
        env["HADOOP_CONF_DIR"] = CONF
        return argv, env


class tfyarn:
    name = "tfyarn"
    title = "tf-yarn 0.7.0 (Python, skein)"

    def submit(self, run_dir, command, fail_fast=False):
        py = os.path.join(BENCH_VENV, "bin", "python")
        pex = os.environ.get("TONY_BENCH_TFYARN_PYENV", os.path.join(HERE, ".cache", "envs", "bench.pex"))
        argv = [py, os.path.join(HERE, "peers", "tfyarn_job.py"), "--command", command, "--pyenv", pex]
        env = dict(os.environ)
        env["HADOOP_CONF_DIR"] = CONF
        env["PATH"] = os.path.join(HERE, "peers", "bin") + ":" + os.path.join(BENCH_VENV, "bin") + ":" + env["PATH"]
        env["TONY_BENCH_YARN_DIR"] = STATE
        env["SKEIN_DRIVER_JAVA_OPTIONS"] = " ".join(java_opens())
        return argv, env


FRAMEWORKS = {"tony": tony, "tonyj": tonyj, "tfyarn": tfyarn}


# -- one run ------------------------------------------------------------------------


def one_run(fw, kind, seconds=1, on_running=None, sample=False, timeout=300):
    run_id = "%s-%s-%d" % (kind, fw.name, int(time.time() * 1000))
    run_dir = os.path.join(OUT, "runs", run_id)
    os.makedirs(run_dir, exist_ok=True)
    os.makedirs(STAMPS, exist_ok=True)
    stamps = os.path.join(STAMPS, run_id)
    command = task_command(stamps, seconds)
    argv, env = fw.submit(run_dir, command, fail_fast=kind == "failure")
    wait_idle_cluster()
    lines = []
    t0 = time.time()
    watch = rm_watch(t0)
    watch.start()
    smp = None
    if sample:
        smp = sampler(fw.name, watch)
        smp.start()
    proc = subprocess.Popen(argv, env=env, cwd=run_dir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def reader():
        for line in proc.stdout:
            lines.append((time.time(), line.rstrip("\n")))

    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    result = {"framework": fw.name, "kind": kind, "run": run_id, "load1": os.getloadavg()[0],
              "nodes": int(os.environ.get("TONY_BENCH_NODES", "1"))}
    fired = False
    client_gone = time.time()
    deadline = t0 + timeout
    while True:
        rows = read_stamps(stamps)
        if on_running and not fired and len(rows) >= 3:
            fired = True
            on_running(watch, rows, result)
        if proc.poll() is not None and (watch.final_at or time.time() > deadline
                                        or (watch.app is None and time.time() > client_gone + 5)):
            break
        if proc.poll() is None:
            client_gone = time.time()
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
        "tasks_running": (max(r[0] for r in rows) - t0) if len(rows) >= 3 else None,
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
    if not rows or (kind.startswith("launch") and len(rows) < 3) or rep.get("finalStatus") != "SUCCEEDED":
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


def set_max_offswitch(n):
    """Lets the CapacityScheduler hand out `n` off-switch containers per node
    heartbeat (default 1) on the bench cluster, to show what YARN's own pace
    costs each framework."""
    path = os.path.join(CONF, "capacity-scheduler.xml")
    key = "yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments"
    with open(path) as f:
        xml = f.read()
    xml = re.sub(r"\s*<property><name>%s</name><value>\d+</value></property>" % re.escape(key), "", xml)
    xml = xml.replace("</configuration>",
                      "  <property><name>%s</name><value>%d</value></property>\n</configuration>" % (key, n))
    with open(path, "w") as f:
        f.write(xml)
    subprocess.run([os.path.join(ROOT, "scripts", "yarn", "yarn.sh"), "--dir", STATE, "rmadmin",
                    "-refreshQueues"], check=True)


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
            while True:
                if watch.app and not container_pids(watch.app):
                    result["clean_at_abs"] = time.time()
                    return
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
                log("%s kill %s: final %s, clean %s, %s" % (
                    name, mode, fmt(r.get("kill_to_final")), fmt(r.get("kill_to_clean")),
                    r.get("final_status")))


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
            if p.returncode != 0:
                log(mode, "failed:", (p.stdout + p.stderr)[-2000:])
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
    p = sub.add_parser("local")
    p.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    {"launch": cmd_launch, "footprint": cmd_footprint, "failure": cmd_failure,
     "local": cmd_local}[args.cmd](args)


if __name__ == "__main__":
    main()
