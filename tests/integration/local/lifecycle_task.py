"""The task of the lifecycle tests: says who it is and how it runs, then
does what its role says. Every line it prints is evidence the tests read
back from the task's own stdout.

  --fail TASK:CODE    TASK exits CODE on its first run (restart 0), or on
                      every run with --always
  --fail-after S      seconds before failing (default 1)
  --wait-spec         wait (at most 90 s) for the signal that the cluster
                      spec changed (a restarted task moved) before finishing;
                      a restarted run does not wait: it started with the new
                      spec
  --sleep S           seconds to run before exiting 0
"""

import argparse
import json
import os
import signal
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--fail", action="append", default=[])
ap.add_argument("--always", action="store_true")
ap.add_argument("--fail-after", type=float, default=1)
ap.add_argument("--wait-spec", action="store_true")
ap.add_argument("--sleep", type=float, default=0)
args = ap.parse_args()

me = os.environ["TONY_TASK_ID"]
restart = int(os.environ.get("TONY_RESTART", "0"))
spec_file = os.environ.get("TONY_CLUSTER_SPEC_FILE", "")
print(f"start {me} restart={restart} pid={os.getpid()}", flush=True)

signals = []


def on_spec(signum, frame):
    signals.append(signum)


signal.signal(signal.SIGUSR1, on_spec)

for f in args.fail:
    task, _, code = f.rpartition(":")
    if task == me and (args.always or restart == 0):
        time.sleep(args.fail_after)
        print(f"failing {me} with {code}", flush=True)
        sys.exit(int(code))

if args.wait_spec and restart == 0:
    with open(spec_file) as f:
        first = json.load(f)
    deadline = time.monotonic() + 90
    while not signals and time.monotonic() < deadline:
        time.sleep(0.1)
    with open(spec_file) as f:
        now = json.load(f)
    print(f"spec signals={len(signals)} before={json.dumps(first, sort_keys=True)} "
          f"after={json.dumps(now, sort_keys=True)}", flush=True)

time.sleep(args.sleep)
print(f"done {me} pid={os.getpid()}", flush=True)
