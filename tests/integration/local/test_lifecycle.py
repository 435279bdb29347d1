"""Restarts, tolerated failures and the chief on the local backend: real
processes, asserted from the tasks' own output (lifecycle_task.py) and the
job's status.json."""

import json
import re
import shutil
from pathlib import Path

import tonyjob

HERE = Path(__file__).resolve().parent
FAST = 20


def job(sandbox, worker_args, chief_args="--sleep 0", policy="", worker_extra="",
        chief_extra=""):
    """chief + 2 workers running lifecycle_task.py."""
    path = sandbox.job(f'''name = "lifecycle"
framework = "tensorflow"

[code]
src_dir = "src"
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
    shutil.copy(HERE / "lifecycle_task.py", sandbox.root / "src" / "lifecycle_task.py")
    return path


def starts(text, task):
    """The 'start' lines a task printed: (restart, pid) each."""
    return [(int(r), int(p)) for r, p in
            re.findall(rf"^start {re.escape(task)} restart=(\d+) pid=(\d+)$", text, re.M)]


def diagnostics_of(out):
    m = re.search(r"^tony: diagnostics: (.*?)(?=^tony: logs:|\Z)", out.stdout, re.S | re.M)
    return m.group(1) if m else ""


def assert_gone(job_dir):
    left = tonyjob.wait_job_gone(job_dir, 10)
    assert not left, f"still running after the job ended: {left}"


def test_worker_restarted_in_place_while_the_others_keep_running(sandbox):
    # worker:1 fails on its first run; the chief and worker:0 wait until the
    # cluster spec tells them worker:1 moved (the file rewritten, SIGUSR1).
    # Its first run fails after 3 s, so the others' handlers are in place
    # before any signal comes.
    path = job(sandbox, "--fail worker:1:3 --fail-after 3 --wait-spec",
               chief_args="--wait-spec", chief_extra='spec_signal = "USR1"',
               worker_extra='restart = "on-failure"\nmax_restarts = 2\nspec_signal = "USR1"')
    out = sandbox.submit(path, timeout=150)
    assert out.rc == 0, out.describe()
    st = out.status()
    assert st["state"] == "SUCCEEDED", st
    w1 = out.task("worker:1")
    assert w1["restarts"] == 1 and w1["state"] == "SUCCEEDED", w1
    # The restarted run is worker:1's current container; it knows it is one.
    assert starts(out.task_stdout("worker:1"), "worker:1")[0][0] == 1, \
        out.task_stdout("worker:1")
    containers = sorted(p.name for p in out.job_dir.glob("container_*"))
    assert len(containers) == 4, containers  # chief, 2 workers, worker:1 again
    first_run = [c for c in containers
                 if "failing worker:1 with 3" in (out.job_dir / c / "stdout").read_text()]
    assert len(first_run) == 1 and first_run[0] != w1["container_id"], containers
    # The others ran once, from start to end, and saw the new spec.
    for name in ("chief:0", "worker:0"):
        t = out.task(name)
        assert t["restarts"] == 0 and t["state"] == "SUCCEEDED", t
        text = out.task_stdout(name)
        (restart, pid), = starts(text, name)
        assert restart == 0
        assert f"done {name} pid={pid}" in text, text
        m = re.search(r"^spec signals=(\d+) before=(.*) after=(.*)$", text, re.M)
        assert m and int(m.group(1)) >= 1, text
        before, after = json.loads(m.group(2)), json.loads(m.group(3))
        assert after["worker"][0] == before["worker"][0], (before, after)
        assert after["worker"][1] == f"{w1['host']}:{w1['port']}", (after, w1)
    assert re.search(r"worker:1 \w+.*\(restart 1\)", out.stdout), out.stdout
    assert_gone(out.job_dir)


def test_restarts_exhausted_fail_the_job_counting_them(sandbox):
    path = job(sandbox, "--fail worker:1:3 --always --sleep 60", chief_args="--sleep 60",
               worker_extra='restart = "on-failure"\nmax_restarts = 2')
    out = sandbox.submit(path, timeout=150)
    assert out.rc == 1, out.describe()
    st = out.status()
    assert st["state"] == "FAILED", st
    diag = diagnostics_of(out)
    assert "worker:1 failed after 2 restarts (max_restarts = 2)" in diag, out.describe()
    assert "worker:1 exited with code 3" in diag, diag
    assert out.task("worker:1")["restarts"] == 2
    runs = [c for c in out.job_dir.glob("container_*")
            if "failing worker:1 with 3" in (c / "stdout").read_text()]
    assert len(runs) == 3, runs
    assert_gone(out.job_dir)


def test_tolerated_failure_succeeds_with_the_failed_task_shown(sandbox):
    path = job(sandbox, "--fail worker:1:3 --always --sleep 4", chief_args="--sleep 4",
               policy="tolerated_failures = 1")
    out = sandbox.submit(path, timeout=120)
    assert out.rc == 0, out.describe()
    st = out.status()
    assert st["state"] == "SUCCEEDED", st
    assert st["diagnostics"] == "succeeded with 1 tolerated failure: worker:1", st
    failed = out.task("worker:1")
    assert failed["state"] == "FAILED" and failed["exit_code"] == 3, failed
    for name in ("chief:0", "worker:0"):
        assert out.task(name)["state"] == "SUCCEEDED", out.task(name)
        assert f"done {name}" in out.task_stdout(name)
    # tony-submit shows the failed task and the tolerance.
    assert re.search(r"worker:1 FAILED.*\(exit 3\)", out.stdout), out.stdout
    assert "tolerated failure: worker:1" in out.stdout, out.stdout
    assert_gone(out.job_dir)


def test_chief_failure_fails_the_job_at_once(sandbox):
    path = job(sandbox, "--sleep 60", chief_args="--fail chief:0:5 --sleep 60",
               policy="tolerated_failures = 2",
               worker_extra='restart = "on-failure"\nmax_restarts = 3')
    out = sandbox.submit(path, timeout=120)
    assert out.rc == 1, out.describe()
    assert out.elapsed < FAST + 10, f"took {out.elapsed:.1f} s\n{out.describe()}"
    st = out.status()
    assert st["state"] == "FAILED", st
    assert "chief:0 exited with code 5" in diagnostics_of(out), out.describe()
    assert out.task("chief:0")["restarts"] == 0
    for name in ("worker:0", "worker:1"):
        t = out.task(name)
        assert t["state"] == "KILLED" and t["restarts"] == 0, t
    assert_gone(out.job_dir)


def test_the_am_ends_once_tony_submit_has_the_final_status(sandbox):
    # The AM lingers at the end until every client that waited for the final
    # status said it has it (bye), at most 5 s; its own wait must not count
    # as a client, or every AM stays the whole 5 s.
    path = job(sandbox, "--sleep 0")
    out = sandbox.submit(path, timeout=120)
    assert out.rc == 0, out.describe()
    am_log = (out.job_dir / "am.log").read_text(errors="replace")
    assert "tony-am: every client has the final status" in am_log, am_log[-3000:]
    assert "not every client confirmed" not in am_log, am_log[-3000:]
    assert_gone(out.job_dir)
