"""Restarts, tolerated failures, the chief and elastic PyTorch on the real
local YARN (fixture `yarn`). The tasks are tests/integration/local's
lifecycle_task.py and elastic_train.py, shipped as the job's code; what
they printed is read back with `yarn logs`."""

import json
import os
import re
import signal
import tempfile

import pytest
import yarnlib as y

LOCAL = os.path.join(y.ROOT, "tests", "integration", "local")


def lifecycle_job(worker_args, chief_args="--sleep 0", policy="", worker_extra="",
                  chief_extra=""):
    """chief + 2 workers running lifecycle_task.py, as a job file."""
    d = tempfile.mkdtemp(prefix="tony-yarn-lifecycle-")
    path = os.path.join(d, "job.toml")
    with open(path, "w") as f:
        f.write(f'''name = "lifecycle"
framework = "tensorflow"

[code]
src_dir = "{LOCAL}"
command = "exec python3 lifecycle_task.py {chief_args}"

[tasks.chief]
memory = "256m"
{chief_extra}

[tasks.worker]
instances = 2
memory = "256m"
command = "exec python3 lifecycle_task.py {worker_args}"
{worker_extra}

[policy]
stop_grace = "2s"
{policy}
''')
    return path


def container_stdouts(app, want):
    """container id -> the stdout it left, from the aggregated logs, once
    `want(texts)` holds (the NodeManager aggregates after the end)."""
    found = {}

    def aggregated():
        out = y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")
        found.clear()
        for m in re.finditer(r"Container: (container_\S+).*?LogContents:\n(.*?)End of LogType",
                             out, re.S):
            found[m.group(1)] = m.group(2)
        return want(found)
    y.wait_until(aggregated, 90)
    return found


def diagnostics_of(out):
    m = re.search(r"^tony: diagnostics: (.*?)(?=^tony: logs:|\Z)", out, re.S | re.M)
    return m.group(1) if m else ""


def test_worker_restarted_in_place_on_yarn():
    code, out, _ = y.submit([lifecycle_job(
        "--fail worker:1:3 --fail-after 3 --wait-spec", chief_args="--wait-spec",
        chief_extra='spec_signal = "USR1"',
        worker_extra='restart = "on-failure"\nmax_restarts = 2\nspec_signal = "USR1"')])
    assert code == 0, out
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "SUCCEEDED"
    logs = container_stdouts(app, lambda f: sum("done " in t for t in f.values()) >= 3)
    text = "".join(logs.values())
    # Every task started once, but worker:1, which started twice.
    for task, runs in (("chief:0", [0]), ("worker:0", [0]), ("worker:1", [0, 1])):
        seen = sorted(int(r) for r in re.findall(
            rf"^start {re.escape(task)} restart=(\d+) pid=\d+$", text, re.M))
        assert seen == runs, (task, seen, text[-3000:])
    # The others saw the new spec: worker:1 moved, worker:0 did not.
    for task in ("chief:0", "worker:0"):
        own = next(t for t in logs.values() if f"start {task} " in t)
        m = re.search(r"^spec signals=(\d+) before=(.*) after=(.*)$", own, re.M)
        assert m and int(m.group(1)) >= 1, own
        before, after = json.loads(m.group(2)), json.loads(m.group(3))
        assert after["worker"][0] == before["worker"][0], (before, after)
        assert after["worker"][1] != before["worker"][1], (before, after)
    assert re.search(r"worker:1 \w+.*\(restart 1\)", out), out


def test_restarts_exhausted_fail_on_yarn():
    code, out, _ = y.submit([lifecycle_job(
        "--fail worker:1:3 --always --sleep 120", chief_args="--sleep 120",
        worker_extra='restart = "on-failure"\nmax_restarts = 1')])
    assert code == 1, out
    app = y.app_id_of(out)
    st = y.app_status(app)
    assert st["Final-State"] == "FAILED", st
    assert "worker:1 failed after 1 restart (max_restarts = 1)" in diagnostics_of(out), out
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def test_tolerated_failure_succeeds_on_yarn():
    code, out, _ = y.submit([lifecycle_job(
        "--fail worker:1:3 --always --sleep 5", chief_args="--sleep 5",
        policy="tolerated_failures = 1")])
    assert code == 0, out
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "SUCCEEDED"
    assert "succeeded with 1 tolerated failure: worker:1" in out, out
    assert re.search(r"worker:1 FAILED.*\(exit 3\)", out), out


def test_chief_failure_fails_at_once_on_yarn():
    code, out, secs = y.submit([lifecycle_job(
        "--sleep 120", chief_args="--fail chief:0:5 --sleep 120",
        policy="tolerated_failures = 2",
        worker_extra='restart = "on-failure"\nmax_restarts = 3')])
    assert code == 1, out
    assert secs < 90, f"took {secs:.1f} s:\n{out}"
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "FAILED"
    assert "chief:0 exited with code 5" in out, out
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def executor_of(app, task_type, index):
    """The pid of a task's tony-executor, from /proc."""
    stem = "container_" + app[len("application_"):]
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except OSError:
            continue
        if (env.get(b"CONTAINER_ID", b"").decode().startswith(stem) and
                argv0.endswith(b"tony-executor") and
                env.get(b"TONY_TASK_TYPE") == task_type.encode() and
                env.get(b"TONY_TASK_INDEX") == str(index).encode()):
            return int(pid)
    return None


def test_elastic_pytorch_job_reforms_after_a_lost_worker_on_yarn():
    pytest.importorskip("torch")
    d = tempfile.mkdtemp(prefix="tony-yarn-elastic-")
    checkpoint = os.path.join(d, "ckpt.pt")
    path = os.path.join(d, "job.toml")
    with open(path, "w") as f:
        f.write(f'''name = "elastic"
framework = "pytorch"

[code]
src_dir = "{LOCAL}"
command = "python3 elastic_train.py --checkpoint {checkpoint} --steps 40 --until-world 3"

[tasks.worker]
elastic = {{ min = 2, max = 3 }}
max_restarts = 2
# The NodeManager enforces it: a PyTorch worker and its ASan-built executor
# were killed at 540 MB of 512.
memory = "1g"

[policy]
stop_grace = "5s"
''')
    proc = y.start_submit([path])
    try:
        lines = y.read_until(proc, r"RUNNING at", 300)
        app = y.app_id_of("".join(lines))
        import torch
        assert y.wait_until(lambda: os.path.exists(checkpoint) and
                            torch.load(checkpoint)["step"] >= 5, 300), "no training"
        pid = executor_of(app, "worker", 1)
        assert pid, "no executor of worker:1"
        os.kill(pid, signal.SIGKILL)
        rest, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    out = "".join(lines) + rest
    assert proc.returncode == 0, out
    assert y.app_status(app)["Final-State"] == "SUCCEEDED"
    logs = container_stdouts(app, lambda f: "trained to step" in "".join(f.values()))
    text = "".join(logs.values())
    assert re.search(r"^trained to step \d+ world=3$", text, re.M), text[-3000:]
    # A survivor's world broke and re-formed with three (its agent restarted
    # its worker: the restart count went up).
    seen = re.findall(r"^round task=worker:0 rank=\d+ world=(\d+) restart=(\S+)$", text,
                      re.M)
    assert len(seen) >= 2 and seen[0] == ("3", "0"), seen
    assert seen[-1][0] == "3" and seen[-1][1] != "0", seen


def test_an_am_killed_mid_job_on_hdfs_staging_is_replaced_and_its_tasks_adopted():
    """AM restart with the job staged on HDFS (the shared cluster's
    fs.defaultFS): the AM saves the job to, and the executors find the next
    AM in, the staging dir through WebHDFS. The AM killed with SIGKILL mid
    training: the second AM adopts both workers, which never restart."""
    ha_dir = os.path.join(y.ROOT, "tests", "integration", "ha")
    d = tempfile.mkdtemp(prefix="tony-yarn-adopt-")
    job = os.path.join(d, "job.toml")
    with open(job, "w") as f:
        f.write(f'''name = "adopt-hdfs"
framework = "tensorflow"

[code]
src_dir = "{ha_dir}"
command = "exec python3 steps.py 15"

[tasks.worker]
instances = 2
memory = "256m"

[am]
max_app_attempts = 2
''')
    proc = y.start_submit([job])
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        head = "".join(lines)
        assert re.search(r"staged in hdfs://", head), head
        app = y.app_id_of(head)
        # Not a fixed pause: the saved state on HDFS says RUNNING (the AM
        # writes it through WebHDFS, seconds on a loaded machine).
        y.wait_saved_running(head)
        am = y.am_pid(app)
        assert am, y.commands_of(y.job_processes(app))
        os.kill(am, signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = head + out
    assert proc.returncode == 0, text
    assert "AM attempt 2 adopted 2 running tasks of attempt 1" in text, text
    assert "FINISHED/SUCCEEDED" in text, text
    outs = container_stdouts(app, lambda found: sum(
        t.count("TASK_DONE") for t in found.values()) >= 2)
    starts = sum(t.count("TASK_START") for t in outs.values())
    assert starts == 2, outs
    for i in range(15):
        assert sum(t.count(f"STEP {i}\n") for t in outs.values()) == 2, (i, outs)


def timed_job(worker_command, worker_extra):
    """chief + 2 workers whose commands are shell lines, as a job file."""
    d = tempfile.mkdtemp(prefix="tony-yarn-timeout-")
    path = os.path.join(d, "job.toml")
    with open(path, "w") as f:
        f.write(f'''name = "timeout"
framework = "tensorflow"

[code]
command = "sleep 6"

[tasks.chief]
memory = "256m"

[tasks.worker]
instances = 2
memory = "256m"
command = '{worker_command}'
{worker_extra}

[policy]
stop_grace = "2s"
''')
    return path


def test_execution_timeout_stops_a_task_in_its_container_and_fails_the_job_on_yarn():
    # [tasks.worker] execution_timeout (TonY's
    # tony.task.executor.execution-timeout-ms) in a YARN container: the
    # workers' `sleep 120` is stopped after 3 s and the job fails saying why.
    code, out, secs = y.submit([timed_job("exec sleep 120", 'execution_timeout = "3s"')])
    assert code == 1, out
    assert secs < 90, f"took {secs:.1f} s:\n{out}"
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "FAILED"
    assert re.search(r"worker:\d ran longer than its execution_timeout of 3s",
                     diagnostics_of(out)), out
    # Shown as stopped by SIGTERM (128 + 15), not as a clean exit.
    assert re.search(r"worker:\d FAILED .*\(exit 143\)", out), out
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def test_execution_timeout_restarts_a_task_under_its_restart_policy_on_yarn():
    # worker:1's first run outlives its 3 s and is restarted in a new
    # container; the second run ends in time and the job succeeds.
    code, out, _ = y.submit([timed_job(
        'if [ "$TASK_INDEX" = 1 ] && [ "$TONY_RESTART" = 0 ]; then exec sleep 120; fi',
        'execution_timeout = "3s"\nrestart = "on-failure"\nmax_restarts = 1')])
    assert code == 0, out
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "SUCCEEDED"
    assert re.search(r"worker:1 \w+.*\(restart 1\)", out), out
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)
