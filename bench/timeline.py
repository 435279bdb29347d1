#!/usr/bin/env python3
"""Where a launch's seconds go: an instrumented run of bench.py.

    timeline.py run --yarn-dir DIR [--kind scale] [--check] -- python3 bench.py scale ...
    timeline.py report --yarn-dir DIR --app APP [--t0 EPOCH] [--until S]

`run` starts the command (a bench.py part writing its records to
$TONY_BENCH_OUT) while it samples, every 0.2 s, the CPU time of every
process on the machine by kind (NodeManager, ResourceManager, HDFS,
tony-am, tony-executor, tony-guard, the task's command, the rest). After
it, each new record of that kind gets a report: the CPU each kind used from
submit to every task running, and the containers' timeline from the
NodeManagers' logs (start request, LOCALIZING, SCHEDULED, RUNNING, the
launch script's exec) and tony-executor's own log (registered, cluster
spec, command started): first, median and last, in seconds from submit.

A process that ends between two samples loses the CPU it used after the
last one (short-lived shells, the launch scripts), so the figures are a
floor. bench/notes.md, "Launch at scale", reads them. --check (CI's smoke
run): exit 1 unless the command succeeded and every run's every task
container was found through its launch (and, for tony, its command's start).
"""

import argparse
import datetime
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")

KINDS = [
    ("NodeManager", re.compile(r"nodemanager\.NodeManager")),
    ("ResourceManager", re.compile(r"resourcemanager\.ResourceManager")),
    ("HDFS", re.compile(r"hdfs\.server\.(namenode|datanode)")),
    ("tony-am", re.compile(r"(^|/)(tony-am|tony-bench-floor-am)(\s|$)")),
    ("tony-executor", re.compile(r"(^|/)tony-executor(\s|$)")),
    ("tony-guard", re.compile(r"(^|/)tony-guard(\s|$)")),
    ("tony-submit", re.compile(r"(^|/)tony-submit(\s|$)")),
    ("task command", re.compile(r"tony-bench-stamps|^sleep 1$")),
    ("container launch", re.compile(r"launch_container\.sh|default_container_executor")),
]


def kind_of(cmdline):
    for name, pattern in KINDS:
        if pattern.search(cmdline):
            return name
    return "other"


def snapshot():
    """{(pid, start time): (kind, ticks)} of every process now: a pid the
    kernel gives again to a later process is another process."""
    seen = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        seen[(int(d), int(fields[19]))] = (kind_of(cmd), int(fields[11]) + int(fields[12]))
    return seen


class Sampler:
    """CPU seconds by kind, as a series of (wall time, {kind: seconds})."""

    def __init__(self, period=0.2):
        self.period = period
        self.series = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        first = {}
        last = {}
        while not self.stop.is_set():
            now = time.time()
            snap = snapshot()
            for pid, (kind, ticks) in snap.items():
                # A process first seen now counts from zero: it started since
                # the last sample (or before the run: then its base is kept).
                first.setdefault(pid, ticks if not self.series else 0)
                last[pid] = (kind, ticks)
            totals = {}
            for pid, (kind, ticks) in last.items():
                totals[kind] = totals.get(kind, 0) + (ticks - first[pid]) / TICK
            self.series.append((now, totals))
            self.stop.wait(self.period)

    def used(self, start, end):
        """CPU seconds by kind between two wall times."""
        def at(t):
            best = {}
            for when, totals in self.series:
                if when > t:
                    break
                best = totals
            return best
        a, b = at(start), at(end)
        return {k: b.get(k, 0) - a.get(k, 0) for k in b}


STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[,.](\d{3}) ")


def wall(line):
    m = STAMP.match(line)
    if not m:
        return None
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
    return t.timestamp() + int(m.group(2)) / 1000


NM_EVENTS = [
    ("start request", re.compile(r"Start request for (container_\S+)")),
    ("localizing", re.compile(r"Container (container_\S+) transitioned from NEW to LOCALIZING")),
    ("scheduled", re.compile(r"Container (container_\S+) transitioned from LOCALIZING to SCHEDULED")),
    ("running", re.compile(r"Container (container_\S+) transitioned from SCHEDULED to RUNNING")),
    ("launch script", re.compile(r"launchContainer: .*/(container_[0-9_]+)/")),
]
EXECUTOR_EVENTS = [
    ("registered", re.compile(r" registered with ")),
    ("cluster spec", re.compile(r"cluster spec of attempt")),
    ("command started", re.compile(r" started: ")),
]


def app_of(container):
    """application_<cluster>_<n> of container_<cluster>_<n>_<attempt>_<id>."""
    return "application_" + "_".join(container.split("_")[1:3])


def timelines(yarn_dir, apps):
    """{app: {container: {event: wall time}}} of the apps' task containers,
    the NodeManagers' logs read once for all of them."""
    events = {app: {} for app in apps}

    def note(container, name, line):
        when = wall(line)
        # The AM's own container (…_000001) is not a task's.
        if app_of(container) in events and when is not None and not re.search(r"_0*1$", container):
            events[app_of(container)].setdefault(container, {}).setdefault(name, when)
    for path in glob.glob(os.path.join(yarn_dir, "logs", "nodemanager-*.log")):
        with open(path, errors="replace") as f:
            for line in f:
                for name, pattern in NM_EVENTS:
                    m = pattern.search(line)
                    if m:
                        note(m.group(1), name, line)
    for app in apps:
        for path in glob.glob(os.path.join(yarn_dir, "nm-logs", "*", app, "container_*",
                                           "executor.log")):
            container = os.path.basename(os.path.dirname(path))
            with open(path, errors="replace") as f:
                for line in f:
                    for name, pattern in EXECUTOR_EVENTS:
                        if pattern.search(line):
                            note(container, name, line)
    return events


def describe(values):
    if not values:
        return "-"
    return (f"{min(values):6.2f} {statistics.median(values):6.2f} {max(values):6.2f}")


def report(app, events, t0, until=None, cpu=None, out=sys.stdout):
    """Prints the app's timeline; with cpu, what each kind used in `until`
    seconds from t0."""
    order = [name for name, _ in NM_EVENTS] + [name for name, _ in EXECUTOR_EVENTS]
    print(f"{app}: {len(events)} task containers; seconds from submit "
          f"(first, median, last)", file=out)
    for name in order:
        values = [e[name] - t0 for e in events.values() if name in e]
        if values:
            print(f"  {name:16s} {describe(values)}  n={len(values)}", file=out)
    steps = list(zip(order, order[1:]))
    print("  per container, median seconds of each step:", file=out)
    for a, b in steps:
        values = [e[b] - e[a] for e in events.values() if a in e and b in e]
        if values:
            print(f"    {a} -> {b}: {statistics.median(values):.2f} "
                  f"(max {max(values):.2f})", file=out)
    if cpu is not None:
        cores = os.cpu_count() or 1
        print(f"  CPU seconds by process kind, submit to every task running ({until:.2f} s): "
              f"{sum(cpu.values()):.1f} in all ({cores} cores give {cores * until:.1f})",
              file=out)
        for kind, used in sorted(cpu.items(), key=lambda kv: -kv[1]):
            if used >= 0.05:
                print(f"    {kind:16s} {used:6.2f}", file=out)


def read_records(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--yarn-dir", required=True)
    r.add_argument("--kind", default="scale")
    r.add_argument("--check", action="store_true",
                   help="exit 1 unless every task container's timeline was found")
    r.add_argument("command", nargs=argparse.REMAINDER)
    q = sub.add_parser("report")
    q.add_argument("--yarn-dir", required=True)
    q.add_argument("--app", required=True)
    q.add_argument("--t0", type=float, help="the submit's wall time (default: the first event)")
    args = p.parse_args()

    if args.cmd == "report":
        events = timelines(args.yarn_dir, [args.app])[args.app]
        if not events:
            sys.exit(f"timeline.py: no container of {args.app} in {args.yarn_dir}'s logs")
        t0 = args.t0 or min(min(e.values()) for e in events.values())
        report(args.app, events, t0)
        return

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        sys.exit("timeline.py run: no command after --")
    out = os.environ.get("TONY_BENCH_OUT", os.path.join(os.path.dirname(__file__), "out"))
    records = os.path.join(out, f"{args.kind}.jsonl")
    before = len(read_records(records))
    sampler = Sampler()
    sampler.thread.start()
    try:
        code = subprocess.call(command)
    finally:
        sampler.stop.set()
        sampler.thread.join()
    missing = []
    new = read_records(records)[before:]
    found_by_app = timelines(args.yarn_dir, [r["app"] for r in new if r.get("app")])
    for rec in new:
        if not rec.get("app") or not rec.get("tasks_running"):
            missing.append(f"{rec.get('run')}: no application or no time to every task running")
            continue
        print(f"\n{rec.get('framework')} {rec.get('tasks')} tasks, run {rec.get('run')}:")
        t0 = rec["t0_abs"]
        until = rec["tasks_running"]
        events = found_by_app[rec["app"]]
        report(rec["app"], events, t0, until, sampler.used(t0, t0 + until))
        last = "command started" if rec.get("framework") in ("tony", "tonypack") else "launch script"
        found = sum(1 for e in events.values() if "start request" in e and last in e)
        if found != rec.get("tasks"):
            missing.append(f"{rec['run']}: {found} of {rec.get('tasks')} task containers "
                           f"with their start request and '{last}' in the logs")
    if args.check:
        if code != 0:
            sys.exit(f"timeline.py: the command exited {code}")
        if missing or not new:
            sys.exit("timeline.py: " + ("; ".join(missing) or "the command wrote no record"))
    sys.exit(code)


if __name__ == "__main__":
    main()
