#!/usr/bin/env python3
"""Runs a tony job.toml on this machine without tony: every task as a local
process with the task environment tony would give it.

    python3 examples/run_by_hand.py examples/pytorch/job.toml
    python3 examples/run_by_hand.py job.toml --set framework=pytorch \
        --set tasks.worker.instances=3

For trying an example or your own job before a cluster is at hand. Every
task gets the variables of doc/task-environment.md (TonY, tony and YARN-DTF
names, TF_CONFIG for tensorflow jobs, the PyTorch names for pytorch jobs;
Horovod's are not rendered). Each task gets a free port on 127.0.0.1, held
until just before its command starts. The job succeeds when every tracked
task exits 0 (untracked ones, ps by default, are then stopped) and fails as
soon as a tracked task fails. Prints every task's exit code, wall time and
peak RSS (for a tiny command that is the launcher's own ~16 MiB, which the
forked child starts with). Not a replacement for tony: no containers, no resource limits.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib

UNTRACKED_BY_DEFAULT = {"ps", "tensorboard"}


def task_order(names):
    first = [n for n in ("chief", "master", "worker") if n in names]
    return first + sorted(n for n in names if n not in first)


def apply_override(job, assignment):
    """'a.b=value' sets job[a][b]; value is read as TOML, else as a string."""
    key, sep, text = assignment.partition("=")
    if not sep or not key:
        sys.exit(f"run_by_hand: --set {assignment!r}: want key=value")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    *parents, last = key.split(".")
    table = job
    for part in parents:
        table = table.setdefault(part, {})
    table[last] = value


def load_job(path, overrides=()):
    with open(path, "rb") as f:
        job = tomllib.load(f)
    for assignment in overrides:
        apply_override(job, assignment)
    base = os.path.dirname(os.path.abspath(path))
    code = job.get("code", {})
    src = os.path.normpath(os.path.join(base, code.get("src_dir", ".")))
    tasks = job.get("tasks", {})
    if not tasks:
        sys.exit(f"run_by_hand: {path} has no [tasks.<type>] table")
    types = []
    for name in task_order(tasks):
        t = tasks[name]
        command = t.get("command", code.get("command"))
        if not command:
            sys.exit(f"run_by_hand: {path}: no command for task type {name!r} "
                     "(set [code] command or [tasks.{name}] command)")
        types.append({
            "name": name,
            "instances": int(t.get("instances", 1)),
            "command": command,
            "tracked": bool(t.get("tracked", name not in UNTRACKED_BY_DEFAULT)),
            "env": {k: str(v) for k, v in t.get("env", {}).items()},
        })
    return {
        "name": job.get("name", os.path.basename(base)),
        "framework": job.get("framework", "tensorflow"),
        "src_dir": src,
        "env": {k: str(v) for k, v in job.get("env", {}).items()},
        "types": types,
    }


def reserve_ports(job, host):
    """One listening socket per task, kept open so nobody else takes the port."""
    cluster, holders = {}, {}
    for t in job["types"]:
        cluster[t["name"]] = []
        for i in range(t["instances"]):
            s = socket.socket()
            s.bind((host, 0))
            s.listen()
            cluster[t["name"]].append(f"{host}:{s.getsockname()[1]}")
            holders[(t["name"], i)] = s
    return cluster, holders


def world_of(cluster):
    """The tasks that train together, in rank order: chief, master, worker,
    then the other types by name; ps, tensorboard and evaluator are outside."""
    order = {"chief": 0, "master": 1, "worker": 2}
    types = sorted((t for t in cluster if t not in ("ps", "tensorboard", "evaluator")),
                   key=lambda t: (order.get(t, 3), t))
    return [(t, i) for t in types for i in range(len(cluster[t]))]


def env_type_name(task_type):
    return "".join(c.upper() if c.isalnum() and c.isascii() else "_" for c in task_type)


def task_env(job, cluster, name, index, app_id, attempt=1):
    """The variables of doc/task-environment.md for one task."""
    world = world_of(cluster)
    rank = world.index((name, index)) if (name, index) in world else None
    host, port = cluster[name][index].rsplit(":", 1)
    compact = {"separators": (",", ":"), "sort_keys": True}
    env = {
        "JOB_NAME": name,
        "TASK_INDEX": str(index),
        "TASK_NUM": str(len(cluster[name])),
        "IS_CHIEF": "true" if rank == 0 else "false",
        "CLUSTER_SPEC": json.dumps(cluster, **compact),
        "TONY_APP_ID": app_id,
        "TONY_ATTEMPT": str(attempt),
        "TONY_TASK_ID": f"{name}:{index}",
        "TONY_TASK_HOST": host,
        "TONY_TASK_PORT": port,
        "DTF_TASK_JOB_NAME": name,
        "DTF_TASK_INDEX": str(index),
    }
    for n, hosts in cluster.items():
        env[f"DTF_{env_type_name(n)}_HOSTS"] = ",".join(hosts)
    if job["framework"] == "tensorflow" and name != "tensorboard":
        tf_cluster = {n: a for n, a in cluster.items() if n not in ("tensorboard", "evaluator")}
        env["TF_CONFIG"] = json.dumps({"cluster": tf_cluster,
                                       "task": {"type": name, "index": index}}, **compact)
    if job["framework"] == "pytorch" and world:
        master = cluster[world[0][0]][world[0][1]]
        master_host, master_port = master.rsplit(":", 1)
        env.update({"MASTER_ADDR": master_host, "MASTER_PORT": master_port,
                    "INIT_METHOD": f"tcp://{master}", "WORLD_SIZE": str(len(world))})
        if rank is not None:
            hosts = [cluster[t][i].rsplit(":", 1)[0] for t, i in world]
            env.update({"RANK": str(rank), "WORLD": str(len(world)),
                        "LOCAL_RANK": str(hosts[:rank].count(host)),
                        "LOCAL_WORLD_SIZE": str(hosts.count(host))})
    return env


def find_venv():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    venv = os.environ.get("TONY_VENV") or os.path.join(here, ".venv")
    return venv if os.path.isfile(os.path.join(venv, "bin", "python3")) else None


class Task:
    def __init__(self, type_spec, index, env, log_dir):
        self.name, self.index = type_spec["name"], index
        self.label = f"{self.name}:{index}"
        self.tracked = type_spec["tracked"]
        self.command = type_spec["command"]
        self.env = env
        self.log_prefix = os.path.join(log_dir, f"{self.name}-{index}")
        self.proc = None
        self.started = self.ended = None
        self.exit_code = None
        self.max_rss_kib = 0
        self.stopped = False
        self.pumps = []

    def start(self, cwd, echo):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(["/bin/sh", "-c", self.command], cwd=cwd, env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        for stream, suffix in ((self.proc.stdout, "stdout"), (self.proc.stderr, "stderr")):
            th = threading.Thread(target=self._pump, args=(stream, suffix, echo), daemon=True)
            th.start()
            self.pumps.append(th)

    def _pump(self, stream, suffix, echo):
        with open(f"{self.log_prefix}.{suffix}", "wb") as out:
            for line in iter(stream.readline, b""):
                out.write(line)
                out.flush()
                if echo:
                    sys.stdout.write(f"{self.label:>10} | {line.decode(errors='replace')}")
                    sys.stdout.flush()

    def sample_rss(self):
        """Peak RSS of the task's processes (its session), from /proc: a
        stopped task's shell dies first, so wait4's figure misses the child."""
        if self.exit_code is not None:
            return
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[3]) != self.proc.pid:  # session id
                    continue
                with open(f"/proc/{entry}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.max_rss_kib = max(self.max_rss_kib, int(line.split()[1]))
            except (OSError, IndexError, ValueError):
                continue

    def signal(self, sig):
        if self.exit_code is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass


def run(job, args):
    log_dir = args.log_dir or tempfile.mkdtemp(prefix=f"tony-by-hand-{job['name']}-")
    os.makedirs(log_dir, exist_ok=True)
    cluster, holders = reserve_ports(job, args.host)
    app_id = f"by_hand_{int(time.time() * 1000)}_{os.getpid():04d}"
    base_env = dict(os.environ)
    venv = find_venv()
    if venv:
        base_env["PATH"] = os.path.join(venv, "bin") + os.pathsep + base_env.get("PATH", "")
        base_env["VIRTUAL_ENV"] = venv
    base_env.update(job["env"])
    tasks = []
    for t in job["types"]:
        for i in range(t["instances"]):
            env = dict(base_env)
            env.update(t["env"])
            env.update(task_env(job, cluster, t["name"], i, app_id))
            tasks.append(Task(t, i, env, log_dir))
    print(f"run_by_hand: job {job['name']} ({job['framework']}), {len(tasks)} tasks, "
          f"cluster {json.dumps(cluster)}, logs in {log_dir}"
          + (f", python from {venv}" if venv else ""), flush=True)

    started = time.monotonic()
    for task in tasks:
        holders.pop((task.name, task.index)).close()  # tony releases the port just before
        task.start(job["src_dir"], not args.quiet)
    by_pid = {task.proc.pid: task for task in tasks}
    deadline = started + args.timeout
    outcome, reason = None, ""
    stop_at = None
    next_sample = 0.0
    while any(t.exit_code is None for t in tasks):
        pid, status, usage = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            if now >= next_sample:
                next_sample = now + 0.5
                for t in tasks:
                    t.sample_rss()
            if outcome is None and now > deadline:
                outcome, reason = "FAILED", f"job timeout of {args.timeout:g}s"
                stop_at = now
                for t in tasks:
                    t.stopped = True
                    t.signal(signal.SIGTERM)
            if stop_at is not None and now > stop_at + args.grace:
                for t in tasks:
                    t.signal(signal.SIGKILL)
            time.sleep(0.05)
            continue
        task = by_pid.get(pid)
        if task is None:
            continue
        task.ended = time.monotonic()
        task.exit_code = os.waitstatus_to_exitcode(status)
        task.max_rss_kib = max(task.max_rss_kib, usage.ru_maxrss)
        if outcome is None and task.tracked and task.exit_code != 0:
            outcome, reason = "FAILED", f"tracked task {task.label} exited {task.exit_code}"
        elif outcome is None and not task.tracked and task.exit_code != 0 and not task.stopped:
            outcome, reason = "FAILED", f"untracked task {task.label} exited {task.exit_code}"
        elif outcome is None and all(t.exit_code == 0 for t in tasks if t.tracked):
            outcome, reason = "SUCCEEDED", "every tracked task exited 0"
        if outcome is not None and stop_at is None:
            stop_at = time.monotonic()
            for t in tasks:
                if t.exit_code is None:
                    t.stopped = True
                    t.signal(signal.SIGTERM)
    for task in tasks:
        for th in task.pumps:
            th.join(timeout=5)
    wall = time.monotonic() - started

    print(f"\nrun_by_hand: job {job['name']} {outcome}: {reason} ({wall:.1f}s)")
    print(f"{'task':>12} {'tracked':>8} {'exit':>6} {'wall s':>8} {'peak RSS MiB':>13}")
    for t in tasks:
        note = " (stopped)" if t.stopped else ""
        print(f"{t.label:>12} {str(t.tracked).lower():>8} {t.exit_code:>6} "
              f"{t.ended - t.started:>8.1f} {t.max_rss_kib / 1024:>13.0f}{note}")
    if outcome != "SUCCEEDED" and args.quiet:
        # The output was not echoed: show how the failed tasks ended.
        for t in tasks:
            if t.exit_code != 0 and not t.stopped:
                for suffix in ("stdout", "stderr"):
                    with open(f"{t.log_prefix}.{suffix}", errors="replace") as f:
                        tail = f.readlines()[-15:]
                    if tail:
                        print(f"--- last lines of {t.label} {suffix}:")
                        print("".join(tail), end="")
    print(f"logs: {log_dir}", flush=True)
    if not args.log_dir and outcome == "SUCCEEDED" and not args.keep_logs:
        shutil.rmtree(log_dir, ignore_errors=True)
    return 0 if outcome == "SUCCEEDED" else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("job", help="path of a job.toml")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a job.toml value, e.g. framework=pytorch")
    p.add_argument("--host", default="127.0.0.1", help="address the tasks advertise")
    p.add_argument("--timeout", type=float, default=600, help="whole-job timeout, seconds")
    p.add_argument("--grace", type=float, default=3, help="SIGTERM to SIGKILL, seconds")
    p.add_argument("--log-dir", help="keep each task's stdout/stderr here")
    p.add_argument("--keep-logs", action="store_true", help="keep the temporary logs on success")
    p.add_argument("--quiet", action="store_true", help="do not echo the tasks' output")
    args = p.parse_args()
    return run(load_job(args.job, args.set), args)


if __name__ == "__main__":
    sys.exit(main())
