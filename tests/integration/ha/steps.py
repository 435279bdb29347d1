"""A training stand-in for the HA tests: prints one numbered step a second,
so the aggregated stdout shows whether the task ran through without a
restart (every step once, in order)."""

import os
import sys
import time

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
print("TASK_START", os.environ.get("TONY_TASK_TYPE"), os.environ.get("TONY_TASK_INDEX"),
      flush=True)
for i in range(steps):
    print("STEP", i, flush=True)
    time.sleep(1)
print("TASK_DONE", flush=True)
