"""The local backend as a NodeManager (doc/architecture.md, "The local
backend"): the GPU pool's disjoint CUDA_VISIBLE_DEVICES, and the
physical-memory check that kills a task over its memory as YARN does."""

import re

from tonyjob import HOLD_MEMORY, wait_job_gone


GPU_PROBE = """
import os, sys
print("CUDA", os.environ.get("CUDA_VISIBLE_DEVICES"),
      "NVIDIA", os.environ.get("NVIDIA_VISIBLE_DEVICES"), flush=True)
# Every task holds its GPUs until all of them started, so their sets are
# in use at the same time.
open(os.path.join(os.environ["MARKS"], os.environ["TASK_INDEX"]), "w").close()
import time
while len(os.listdir(os.environ["MARKS"])) < int(os.environ["TASKS"]):
    time.sleep(0.1)
"""


def gpu_job(sandbox, name, instances, gpus):
    marks = sandbox.root / f"marks-{name}"
    marks.mkdir()
    return sandbox.job(f"""
name = "{name}"
framework = "standalone"
[code]
src_dir = "src"
command = "python3 probe.py"
[env]
MARKS = "{marks}"
TASKS = "{instances}"
[tasks.worker]
instances = {instances}
memory = "128m"
gpus = {gpus}
[cluster.local]
gpus = 4
""", name=f"{name}.toml")


def devices_of(out, instances):
    seen = []
    for i in range(instances):
        m = re.search(r"CUDA (\S+) NVIDIA (\S+)", out.task_stdout(f"worker:{i}"))
        assert m, out.task_stdout(f"worker:{i}")
        assert m.group(1) == m.group(2)
        seen.append(m.group(1))
    return seen


def test_local_gpu_pool_gives_tasks_disjoint_devices(sandbox):
    sandbox.write_src({"probe.py": GPU_PROBE})
    out = sandbox.submit(gpu_job(sandbox, "one-each", 4, 1), timeout=180)
    assert out.rc == 0, out.describe()
    assert sorted(devices_of(out, 4)) == ["0", "1", "2", "3"]
    out = sandbox.submit(gpu_job(sandbox, "pairs", 2, 2), timeout=180)
    assert out.rc == 0, out.describe()
    pairs = [set(d.split(",")) for d in devices_of(out, 2)]
    assert all(len(p) == 2 for p in pairs), pairs
    assert not pairs[0] & pairs[1], pairs
    # A pool too small says GPUs, and where the pool comes from.
    job = gpu_job(sandbox, "too-many", 1, 5)
    out = sandbox.submit(job, timeout=120)
    assert out.rc != 0
    assert "5 GPUs" in out.output and "4 GPUs" in out.output, out.describe()
    assert "[cluster.local] gpus" in out.output, out.describe()


def test_task_over_its_memory_is_killed_with_yarns_diagnostic(sandbox):
    sandbox.write_src({"hold.py": HOLD_MEMORY})
    job = sandbox.job(f"""
name = "pmem"
framework = "standalone"
[code]
src_dir = "src"
command = "python3 hold.py"
[env]
HOLD_MB = "400"
RELEASE = "{sandbox.root / 'never'}"
[tasks.worker]
instances = 1
memory = "128m"
""")
    out = sandbox.submit(job, timeout=180)
    assert out.rc != 0, out.describe()
    st = out.status()
    assert st["state"] == "FAILED", st
    diag = st["diagnostics"]
    # YARN's words (ContainersMonitorImpl) and its exit status.
    assert re.search(r"Container \[pid=\d+,containerID=container_\S+\] is running \d+B "
                     r"beyond the 'PHYSICAL' memory limit\. Current usage: [\d.]+ [MG]B of "
                     r"128 MB physical memory used", diag), diag
    assert "-104" in diag, diag
    assert out.task("worker:0")["exit_code"] == -104
    assert not wait_job_gone(out.job_dir, 30)


SNAPSHOT_PROBE = """
import os, stat, time
print("before", open("src/data.txt").read().strip(), flush=True)
mode = os.stat("src/data.txt").st_mode
print("writable" if mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) else "read-only")
print("jobs dir in the copy" if os.path.exists("src/jobs") else "no jobs dir in the copy")
while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.1)
print("after", open("src/data.txt").read().strip(), flush=True)
"""


def test_tasks_run_a_read_only_snapshot_of_the_code(sandbox):
    # src_dir is the sandbox itself, which holds the jobs dir: the snapshot
    # must leave that out rather than copy itself.
    (sandbox.root / "data.txt").write_text("v1\n")
    (sandbox.root / "probe.py").write_text(SNAPSHOT_PROBE)
    release = sandbox.root / "release"
    job = sandbox.job(f"""
name = "snapshot"
framework = "standalone"
[code]
src_dir = "."
command = "python3 src/probe.py"
[env]
RELEASE = "{release}"
[tasks.worker]
instances = 1
memory = "128m"
""")
    run = sandbox.start(job)
    run.wait_for_line(r"worker:0 RUNNING", 120)
    # Editing the checkout while the job runs does not change the job.
    (sandbox.root / "data.txt").write_text("v2\n")
    release.write_text("")
    out = run.wait(120)
    assert out.rc == 0, out.describe()
    said = out.task_stdout("worker:0")
    assert "before v1" in said and "after v1" in said, said
    assert "read-only" in said and "no jobs dir in the copy" in said, said
