#!/usr/bin/env python3
"""What shipping tony's libraries with its binaries costs (bench/notes.md,
"Portable binaries").

    bench/portable.py --bin DIR [--baseline-bin DIR] [--runs N] [--hadoop-conf DIR]

--bin: a build's bin/ (with ../lib/tony beside it). Prints the sizes of what
tony-submit ships (binaries, libraries, the archive) and how long making
the archive takes; the start time of `tony-executor --help` (dynamic
loading from lib/tony through the run path), against --baseline-bin's
binaries when given (a build whose binaries use the system's libraries).
With --hadoop-conf (a running cluster, e.g. scripts/yarn/cluster.sh), the
time from `tony-submit` to every task RUNNING: the first job of a fresh
staging root (the archive is made, uploaded and unpacked by every node
that runs a container) and the next ones (staged and localized already),
for --bin and for --baseline-bin.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def mib(n):
    return f"{n / 2**20:.1f} MiB"


def sizes(bin_dir, work):
    lib = os.path.join(bin_dir, "..", "lib", "tony")
    bins = {b: os.path.getsize(os.path.join(bin_dir, b))
            for b in ("tony-am", "tony-executor", "tony-guard")}
    libs = sum(os.path.getsize(os.path.join(lib, f)) for f in os.listdir(lib))
    count = len([f for f in os.listdir(lib) if ".so" in f])
    stage = os.path.join(work, "bundle")
    os.makedirs(os.path.join(stage, "bin"))
    for b in bins:
        os.symlink(os.path.realpath(os.path.join(bin_dir, b)), os.path.join(stage, "bin", b))
    os.makedirs(os.path.join(stage, "lib"))
    os.symlink(os.path.realpath(lib), os.path.join(stage, "lib", "tony"))
    archive = os.path.join(work, "tony.tgz")
    t0 = time.monotonic()
    # As tony-submit makes it (runtime/staging/node_bundle.cpp): gzip -1.
    subprocess.run(["tar", "-chf", archive, "--use-compress-program=gzip -1", "-C", stage, "."],
                   check=True)
    made = time.monotonic() - t0
    for b, n in bins.items():
        print(f"  {b:14s} {mib(n)}")
    print(f"  lib/tony       {mib(libs)} ({count} libraries)")
    print(f"  tony.tgz       {mib(os.path.getsize(archive))} (made in {made:.1f} s)")


def exec_time(program, runs):
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run([program, "--help"], stdout=subprocess.DEVNULL, check=True)
        times.append(time.monotonic() - t0)
    return statistics.median(times), min(times)


def job_file(work):
    os.makedirs(os.path.join(work, "src"), exist_ok=True)
    path = os.path.join(work, "job.toml")
    with open(path, "w") as f:
        f.write('name = "portable-bench"\nframework = "standalone"\n[code]\nsrc_dir = "src"\n'
                'command = "sleep 2"\n[tasks.worker]\ninstances = 3\nmemory = "256m"\n'
                'vcores = 1\n')
    return path


def to_running(bin_dir, conf, job, staging):
    """Seconds from tony-submit's start to its last 'worker:N RUNNING' line."""
    env = dict(os.environ, HADOOP_CONF_DIR=conf)
    t0 = time.monotonic()
    proc = subprocess.Popen([os.path.join(bin_dir, "tony-submit"), "--backend", "yarn",
                             "--set", f'cluster.staging_dir="{staging}"', job],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    running, last = set(), None
    for line in proc.stdout:
        m = re.search(r"(worker:\d) RUNNING at", line)
        if m and m.group(1) not in running:
            running.add(m.group(1))
            last = time.monotonic() - t0
    proc.wait()
    if proc.returncode != 0 or len(running) != 3:
        raise SystemExit(f"the job failed (exit {proc.returncode})")
    return last


def launch(bin_dir, conf, work, runs, name):
    job = job_file(work)
    staging = "file://" + tempfile.mkdtemp(prefix=f"stage-{name}-", dir=work)
    cold = to_running(bin_dir, conf, job, staging)
    warm = [to_running(bin_dir, conf, job, staging) for _ in range(runs)]
    print(f"  {name:10s} first job {cold:.2f} s; next {runs}: median "
          f"{statistics.median(warm):.2f} s, best {min(warm):.2f} s")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--baseline-bin")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--hadoop-conf")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="tony-portable-bench-")
    try:
        print(f"what tony-submit ships from {args.bin}:")
        sizes(args.bin, work)
        print("tony-executor --help (median, best of 50):")
        for name, d in (("bundled", args.bin), ("baseline", args.baseline_bin)):
            if d:
                med, best = exec_time(os.path.join(d, "tony-executor"), 50)
                print(f"  {name:10s} {med * 1000:.1f} ms, {best * 1000:.1f} ms")
        if args.hadoop_conf:
            print("tony-submit to every task RUNNING (3 workers):")
            for name, d in (("bundled", args.bin), ("baseline", args.baseline_bin)):
                if d:
                    launch(d, args.hadoop_conf, work, args.runs, name)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
