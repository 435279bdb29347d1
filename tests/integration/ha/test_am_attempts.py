"""AM restarts (fixture `ha`, any YARN would do; doc/operations.md "AM
restart"): the AM killed with SIGKILL, YARN starts the next attempt, which
adopts the running tasks (or starts over, and says so); tony-submit follows
every attempt to the final table; executors that find no new AM kill their
tasks in bounded time. The AM and the tasks are found by the process table,
not by YARN's word."""

import os
import re
import signal
import sys
import time

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


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def kill_the_am_once_running(proc, saved=False):
    """Once a task of tony-submit `proc`'s job runs (and, with `saved`, the
    AM saved the job as RUNNING for the next attempt), SIGKILLs the job's AM
    and follows tony-submit to its end; returns the application id and
    everything tony-submit printed."""
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        if saved:
            y.wait_saved_running("".join(lines))
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


def restart_job(steps, extra=""):
    """ha.steps_job with two AM attempts (and `extra` in [am])."""
    job = ha.steps_job(steps)
    with open(job, "a") as f:
        f.write("\n[am]\nmax_app_attempts = 2\n" + extra)
    return job


def every_step_once(app, tasks, steps):
    """The tasks' own stdout (aggregated): each started once and printed
    every step once: no restart, no gap."""
    logs = ha.stdouts(app, lambda t: t.count("TASK_DONE") >= tasks)
    assert logs.count("TASK_START") == tasks, logs[-3000:]
    for i in range(steps):
        assert logs.count(f"STEP {i}\n") == tasks, (i, logs[-3000:])
    return logs


def test_an_am_killed_mid_job_is_replaced_and_the_training_goes_on():
    """AM kill -9 with max_app_attempts = 2: YARN keeps the containers, the
    second AM adopts the running tasks, their executors register again with
    it, and the tasks see nothing: each ran once, every step once."""
    proc = y.start_submit([restart_job(20)])
    app, text = kill_the_am_once_running(proc, saved=True)
    assert proc.returncode == 0, text
    assert "AM attempt 2" in text, text
    assert "AM attempt 2 adopted 2 running tasks of attempt 1" in text, text
    after = text[text.index("AM attempt 2"):]
    assert re.search(r"worker:0\s+SUCCEEDED", after), after
    assert re.search(r"worker:1\s+SUCCEEDED", after), after
    assert "FINISHED/SUCCEEDED" in after, after
    every_step_once(app, 2, 20)


def staging_of(text):
    m = re.search(r"staged in (\S+)", text)
    assert m, text
    uri = m.group(1)
    assert uri.startswith("file://"), uri  # this cluster stages locally
    return uri[len("file://"):]


def test_an_am_that_cannot_adopt_starts_the_job_over_and_says_so():
    """The saved state of the job removed before the AM is killed: the
    second AM cannot tell which task is where, releases the kept
    containers, runs the job again (attempt 2) and says so."""
    proc = y.start_submit([restart_job(8)])
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        head = "".join(lines)
        app = y.app_id_of(head)
        state = os.path.join(staging_of(head), "am-state.json")
        assert y.wait_until(lambda: os.path.exists(state), 30), state
        time.sleep(1)
        os.remove(state)
        os.kill(am_pid(app), signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = head + out
    assert proc.returncode == 0, text
    assert "AM attempt 2 started the job over: the ApplicationMaster before it saved " \
        "no state of the job" in text, text
    assert "FINISHED/SUCCEEDED" in text, text
    logs = ha.stdouts(app, lambda t: t.count("TASK_DONE") >= 2)
    assert logs.count("TASK_START") == 4, logs[-3000:]  # every task ran twice


def test_executors_that_reach_no_new_am_kill_their_tasks_in_bounded_time():
    """The second AM is stopped (SIGSTOP) as soon as it starts: the
    executors find no AM that registers them within reconnect_timeout, kill
    their tasks and end; no task process is left (process table)."""
    proc = y.start_submit([restart_job(300, 'reconnect_timeout = "12s"\n')])
    stopped = None
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        app = y.app_id_of("".join(lines))
        first = am_pid(app)
        os.kill(first, signal.SIGKILL)
        killed_at = time.time()

        def second_am():
            pid = am_pid(app)
            return pid if pid and pid != first else None
        assert y.wait_until(second_am, 60, step=0.02), "no second AM"
        stopped = second_am()
        os.kill(stopped, signal.SIGSTOP)

        def tasks_gone():
            return not [p for p in job_processes(app)
                        if b"steps.py" in cmdline(p)]
        assert y.wait_until(tasks_gone, 60), y.commands_of(job_processes(app))
        assert time.time() - killed_at < 45, time.time() - killed_at
        os.kill(stopped, signal.SIGKILL)  # the last attempt: the job ends
        stopped = None
        out, _ = proc.communicate(timeout=300)
    finally:
        if stopped:
            os.kill(stopped, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = "".join(lines) + out
    assert proc.returncode != 0, text
    said = [""]

    def executor_logs():
        said[0] = y.yarn_cli("logs", "-applicationId", app, "-log_files", "executor.log")
        return said[0].count("no new ApplicationMaster registered it within 12 s") >= 2
    assert y.wait_until(executor_logs, 90, step=1), said[0][-3000:]
    assert y.wait_until(lambda: not job_processes(app), 60), \
        y.commands_of(job_processes(app))


def test_an_am_killed_with_one_attempt_fails_the_job_and_leaves_no_process():
    proc = y.start_submit([ha.steps_job(60)])  # max_app_attempts = 1
    app, text = kill_the_am_once_running(proc)
    assert proc.returncode == 1, text
    assert "FAILED" in text, text
    assert "AM attempt 2" not in text, text
    # The process table, not YARN's word: every task process is gone.
    assert y.wait_until(lambda: not job_processes(app), 60), \
        y.commands_of(job_processes(app))
