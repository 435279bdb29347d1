"""A task of test_yarn_tools.py: prints to stdout and stderr, then
worker:0 ends at once while the others wait for the test, writing the
progress the test puts into <ctl>/progress to TONY_PROGRESS_FILE (written
aside and renamed, as doc/task-environment.md advises), until <ctl>/finish
exists."""

import os
import sys
import time

ctl = sys.argv[1]
task = os.environ["TONY_TASK_ID"]
print(f"TOOLS stdout of {task}", flush=True)
print(f"TOOLS stderr of {task}", file=sys.stderr, flush=True)
if task == "worker:0":
    sys.exit(0)
deadline = time.monotonic() + 300
written = None
while time.monotonic() < deadline:
    try:
        with open(os.path.join(ctl, "progress")) as f:
            value = f.read().strip()
    except OSError:
        value = None
    if value is not None and value != written:
        target = os.environ["TONY_PROGRESS_FILE"]
        with open(target + ".tmp", "w") as f:
            f.write(value + "\n")
        os.replace(target + ".tmp", target)
        written = value
        print(f"TOOLS progress {value}", flush=True)
    if os.path.exists(os.path.join(ctl, "finish")):
        print(f"TOOLS {task} finishing", flush=True)
        sys.exit(0)
    time.sleep(0.2)
sys.exit(3)
