"""tony-submit follows every AM attempt (fixture `ha`, any YARN would do):
the AM killed with SIGKILL, YARN starts the next attempt, and tony-submit
shows that attempt's tasks and their final states. The AM is found by the
process table, not by YARN's word."""

import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(__file__))
import test_ha as ha  # noqa: E402
import yarnlib as y  # noqa: E402


def job_processes(app):
    """Pids whose environment names one of the application's containers:
    with RM recovery on, container ids carry the RM's epoch
    (container_e02_<ts>_<app>_...), which yarnlib's helper does not expect."""
    rx = re.compile(rb"CONTAINER_ID=container_(e\d+_)?" + app[len("application_"):].encode()
                    + rb"_")
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if rx.search(env):
            pids.append(int(pid))
    return pids


def am_pid(app):
    for pid in job_processes(app):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(argv0) == b"tony-am":
            return pid
    return None


def kill_the_am_once_running(proc):
    """Once a task of tony-submit `proc`'s job runs, SIGKILLs the job's AM
    and follows tony-submit to its end; returns the application id and
    everything tony-submit printed."""
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        app = y.app_id_of("".join(lines))
        pid = am_pid(app)
        assert pid, y.commands_of(job_processes(app))
        os.kill(pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return app, "".join(lines) + out


def test_tony_submit_follows_the_second_am_attempt():
    job = ha.steps_job(6)
    with open(job, "a") as f:
        f.write("\n[am]\nmax_app_attempts = 2\n")
    proc = y.start_submit([job])
    _, text = kill_the_am_once_running(proc)
    assert proc.returncode == 0, text
    assert "AM attempt 2" in text, text
    after = text[text.index("AM attempt 2"):]
    # The second attempt's tasks, then their final states (a terminal gets
    # them as the final table).
    assert re.search(r"worker:\d RUNNING at", after), after
    assert re.search(r"worker:0\s+SUCCEEDED", after), after
    assert re.search(r"worker:1\s+SUCCEEDED", after), after
    assert "FINISHED/SUCCEEDED" in after, after


def test_an_am_killed_with_one_attempt_fails_the_job_and_leaves_no_process():
    proc = y.start_submit([ha.steps_job(60)])  # max_app_attempts = 1
    app, text = kill_the_am_once_running(proc)
    assert proc.returncode == 1, text
    assert "FAILED" in text, text
    assert "AM attempt 2" not in text, text
    # The process table, not YARN's word: every task process is gone.
    assert y.wait_until(lambda: not job_processes(app), 60), \
        y.commands_of(job_processes(app))
