"""Jobs that fail: a task exits non-zero, a process of the job is killed, the
ApplicationMaster dies, tony-submit is interrupted. Each must end fast, say
which task failed and why, and leave no process of the job behind."""

import os
import re
import signal
import time

import tonyjob

SLEEPER = "exec python3 -c 'import time; time.sleep(60)'"
# Time from a failure to tony-submit's exit: the failure is seen at once, the
# other tasks get stop_grace (3 s by default) to stop; the rest is slack for a
# loaded 2-core machine running sanitizer builds.
FAST = 15
# Time for every process of an ended job to be gone.
GONE = 10


def sleepers_job(sandbox, worker_command=None, extra=""):
    """chief + 2 workers that sleep 60 s: anything quicker is the test's doing."""
    worker = f'command = """{worker_command}"""\n' if worker_command else ""
    return sandbox.job(f'''name = "sleepers"
framework = "tensorflow"

[code]
src_dir = "src"
command = "{SLEEPER}"

[tasks.chief]
instances = 1
memory = "256m"

[tasks.worker]
instances = 2
memory = "256m"
{worker}{extra}''')


def diagnostics_of(out):
    m = re.search(r"^tony: diagnostics: (.*?)(?=^tony: logs:|\Z)", out.stdout, re.S | re.M)
    return m.group(1) if m else ""


def assert_gone(job_dir, timeout=GONE):
    left = tonyjob.wait_job_gone(job_dir, timeout)
    assert not left, f"still running {timeout} s after the job ended: {left}\n" + \
        tonyjob.describe_job_dir(job_dir)


def pid_gone(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = tonyjob.process_state(pid)
        if state is None or state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def sleeper_of(job_dir, task, timeout=20):
    """The running `python3 -c '...time.sleep...'` command of `task`."""
    return tonyjob.find_task_process(
        job_dir, task,
        lambda p: not tonyjob.is_executor(p) and "time.sleep" in " ".join(p.cmdline), timeout)


def test_worker_exit_code_fails_job(sandbox):
    job = sleepers_job(sandbox, worker_command=(
        'if [ "$TASK_INDEX" = 1 ]; then '
        "python3 -c 'import sys, time; time.sleep(1); sys.exit(3)'; "
        "else exec sleep 60; fi"))
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 1, out.describe()
    assert out.elapsed < FAST, f"took {out.elapsed:.1f} s\n{out.describe()}"
    diag = diagnostics_of(out)
    assert "worker:1" in diag and re.search(r"\b(code|status) 3\b", diag), out.describe()
    st = out.status()
    assert st["state"] == "FAILED", st
    failed = out.task("worker:1")
    assert failed["state"] == "FAILED" and failed["exit_code"] == 3, failed
    for other in ("chief:0", "worker:0"):
        assert out.task(other)["state"] == "KILLED", out.task(other)
    assert re.search(r"worker:1 FAILED.*\(exit 3\)", out.stdout), out.stdout
    assert_gone(out.job_dir)


def test_execution_timeout_kills_the_task_and_fails_the_job(sandbox):
    # [tasks.worker] execution_timeout (TonY's
    # tony.task.executor.execution-timeout-ms): the workers' `sleep 60` runs
    # 2 s, then it is stopped and the job fails with the reason.
    job = sleepers_job(sandbox, worker_command="exec sleep 60",
                       extra='execution_timeout = "2s"\n')
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 1, out.describe()  # FAILED (doc/operations.md, exit codes)
    assert out.elapsed < 2 + FAST, f"took {out.elapsed:.1f} s\n{out.describe()}"
    diag = diagnostics_of(out)
    m = re.search(r"(worker:\d) ran longer than its execution_timeout of 2s", diag)
    assert m, out.describe()
    st = out.status()
    assert st["state"] == "FAILED", st
    timed_out = out.task(m.group(1))
    assert timed_out["state"] == "FAILED", timed_out
    # It ran its 2 s from the start of its command, not less.
    ran = (timed_out["finished_ms"] - timed_out["started_ms"]) / 1000
    assert 2 <= ran < 2 + FAST, timed_out
    assert out.task("chief:0")["state"] == "KILLED", out.task("chief:0")
    assert_gone(out.job_dir)


def test_execution_timeout_restarts_a_task_under_its_restart_policy(sandbox):
    # worker:1 runs past its 2 s once and is restarted in a new container;
    # its second run ends in time, and so does the job.
    job = sleepers_job(sandbox, worker_command=(
        'if [ "$TASK_INDEX" = 1 ] && [ "$TONY_RESTART" = 0 ]; then exec sleep 60; fi'),
        extra='execution_timeout = "2s"\nrestart = "on-failure"\nmax_restarts = 1\n')
    job.write_text(job.read_text().replace(f'command = "{SLEEPER}"', 'command = "true"'))
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 0, out.describe()
    w1 = out.task("worker:1")
    assert w1["state"] == "SUCCEEDED" and w1["restarts"] == 1, w1
    am_log = (out.job_dir / "am.log").read_text(errors="replace")
    assert "worker:1 ran longer than its execution_timeout of 2s" in am_log, am_log[-3000:]
    assert "restarting worker:1 (restart 1 of 1)" in am_log, am_log[-3000:]
    assert_gone(out.job_dir)


def test_ctrl_c_kills_job(sandbox):
    # worker:1 ignores SIGTERM, so stopping it needs the SIGKILL after the
    # grace period.
    job = sleepers_job(
        sandbox, worker_command=f"""if [ "$TASK_INDEX" = 1 ]; then trap '' TERM; fi; {SLEEPER}""",
        extra='\n[policy]\nstop_grace = "1s"\n')
    run = sandbox.start(job)
    run.wait_for_line(r"^tony: job \S+ RUNNING", timeout=60)
    job_dir = run.job_dir()
    # Every task's command runs (not just registered).
    for task in ("chief:0", "worker:0", "worker:1"):
        sleeper_of(job_dir, task)
    sent = time.monotonic()
    run.interrupt()
    out = run.wait(timeout=60)
    took = time.monotonic() - sent
    assert out.rc == 1, out.describe()
    assert took < FAST, f"tony-submit took {took:.1f} s to end after SIGINT\n{out.describe()}"
    assert "interrupted" in out.stdout, out.describe()
    st = out.status()
    assert st is not None and st["state"] == "KILLED", out.describe()
    assert "killed by the user" in st["diagnostics"], st["diagnostics"]
    for task in ("chief:0", "worker:0", "worker:1"):
        assert out.task(task)["state"] == "KILLED", out.task(task)
    assert_gone(job_dir)


def test_am_killed_executors_clean_up(sandbox):
    job = sleepers_job(sandbox)
    run = sandbox.start(job)
    run.wait_for_line(r"^tony: job \S+ RUNNING", timeout=60)
    job_dir = run.job_dir()
    commands = [sleeper_of(job_dir, t) for t in ("chief:0", "worker:0", "worker:1")]
    am_pid = tonyjob.am_pid(job_dir)
    killed = time.monotonic()
    os.kill(am_pid, signal.SIGKILL)
    # The executors see the AM's connection drop and kill their commands.
    for c in commands:
        assert pid_gone(c.pid, GONE), f"{c} still runs {GONE} s after the AM was killed"
    assert_gone(job_dir)
    gone_after = time.monotonic() - killed
    out = run.wait(timeout=30)
    # No final status can exist: an infrastructure failure.
    assert out.rc == 3, out.describe()
    assert "ApplicationMaster" in out.stderr, out.describe()
    assert out.status() is None
    for log in job_dir.glob("container_*/executor.log"):
        assert "lost the AM" in log.read_text(), f"{log}:\n{log.read_text()}"
    print(f"job gone {gone_after:.1f} s after the AM was killed")


def test_executor_killed_fails_job(sandbox):
    job = sleepers_job(sandbox)
    run = sandbox.start(job)
    run.wait_for_line(r"^tony: job \S+ RUNNING", timeout=60)
    job_dir = run.job_dir()
    command = sleeper_of(job_dir, "worker:1")
    executor = tonyjob.find_task_process(job_dir, "worker:1", tonyjob.is_executor, 5)
    killed = time.monotonic()
    os.kill(executor.pid, signal.SIGKILL)
    out = run.wait(timeout=60)
    took = time.monotonic() - killed
    assert out.rc == 1, out.describe()
    assert took < FAST, f"took {took:.1f} s after the executor was killed\n{out.describe()}"
    assert out.status()["state"] == "FAILED"
    assert "worker:1" in diagnostics_of(out), out.describe()
    assert out.task("worker:1")["state"] in ("FAILED", "LOST"), out.task("worker:1")
    # The task's command does not outlive its executor.
    assert pid_gone(command.pid, 5), f"{command} outlived its executor"
    assert_gone(job_dir)


def test_executor_killed_guard_kills_command(sandbox):
    # The executors run in sessions of their own (TONY_EXECUTOR_WRAPPER), out
    # of reach of the local backend's cleanup of the container's session: a
    # command outliving its killed executor would stay. Only the executor's
    # guard process can end it.
    wrapper = sandbox.root / "own_session.sh"
    wrapper.write_text('#!/bin/sh\nsetsid "$@" &\nwait $!\n')
    wrapper.chmod(0o755)
    job = sleepers_job(sandbox)
    run = sandbox.start(job, env={"TONY_EXECUTOR_WRAPPER": str(wrapper)})
    run.wait_for_line(r"^tony: job \S+ RUNNING", timeout=60)
    job_dir = run.job_dir()
    command = sleeper_of(job_dir, "worker:1")
    executor = tonyjob.find_task_process(job_dir, "worker:1", tonyjob.is_executor, 5)
    assert tonyjob.session_of(executor.pid) == executor.pid, "the wrapper did not take effect"
    assert tonyjob.session_of(command.pid) == executor.pid
    # The guard is tony-guard (beside tony-executor), in the command's group.
    guard = tonyjob.find_task_process(
        job_dir, "worker:1", lambda p: p.cmdline[:1] == ["tony-guard"], 5)
    assert tonyjob.group_of(guard.pid) == tonyjob.group_of(command.pid), guard
    killed = time.monotonic()
    os.kill(executor.pid, signal.SIGKILL)
    assert pid_gone(command.pid, 5), f"{command} outlived its executor: the guard did not fire"
    out = run.wait(timeout=60)
    took = time.monotonic() - killed
    assert out.rc == 1, out.describe()
    assert took < FAST, f"took {took:.1f} s after the executor was killed\n{out.describe()}"
    assert "worker:1" in diagnostics_of(out), out.describe()
    assert_gone(job_dir)


def test_task_command_killed_fails_job(sandbox):
    job = sleepers_job(sandbox)
    run = sandbox.start(job)
    run.wait_for_line(r"^tony: job \S+ RUNNING", timeout=60)
    job_dir = run.job_dir()
    command = sleeper_of(job_dir, "worker:1")
    killed = time.monotonic()
    os.kill(command.pid, signal.SIGKILL)
    out = run.wait(timeout=60)
    took = time.monotonic() - killed
    assert out.rc == 1, out.describe()
    assert took < FAST, f"took {took:.1f} s after the command was killed\n{out.describe()}"
    diag = diagnostics_of(out)
    assert "worker:1" in diag, out.describe()
    assert re.search(r"signal 9|SIGKILL|Killed|137", diag), out.describe()
    failed = out.task("worker:1")
    assert failed["state"] == "FAILED" and failed["exit_code"] == 137, failed
    assert out.status()["state"] == "FAILED"
    assert_gone(job_dir)


def test_command_not_found(sandbox):
    job = sandbox.job('''name = "no-binary"
[code]
src_dir = "src"
command = "no-such-binary --flag"

[tasks.worker]
instances = 2
memory = "256m"
''')
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 1, out.describe()
    assert out.elapsed < FAST, out.describe()
    assert out.status()["state"] == "FAILED"
    diag = diagnostics_of(out)
    assert re.search(r"worker:[01]", diag) and "127" in diag, out.describe()
    assert "no-such-binary: not found" in diag, out.describe()
    failed = [t for t in out.status()["tasks"] if t["state"] == "FAILED"]
    assert failed and all(t["exit_code"] == 127 for t in failed), failed
    assert_gone(out.job_dir)


def test_ctrl_c_while_starting(sandbox):
    # Interrupted before the tasks run; the AM may still be starting. A
    # SIGTERM that reaches the AM before it handles signals kills it without
    # a status.json; tony-submit must still report KILLED (exit 1), not an
    # infrastructure failure (exit 3).
    job = sleepers_job(sandbox)
    run = sandbox.start(job)
    run.wait_for_line(r"^tony: submitted ", timeout=30)
    job_dir = run.job_dir()
    sent = time.monotonic()
    run.interrupt()
    out = run.wait(timeout=60)
    took = time.monotonic() - sent
    assert out.rc == 1, out.describe()
    assert took < FAST, f"tony-submit took {took:.1f} s to end after SIGINT\n{out.describe()}"
    st = out.status()
    assert st is not None and st["state"] == "KILLED", out.describe()
    assert_gone(job_dir)


def test_executor_that_cannot_start_says_why(sandbox):
    # The executors run under a wrapper (TONY_EXECUTOR_WRAPPER) that cannot
    # load a library, or that does not exist: the job fails at once, and
    # the diagnostics carry what the executor's container said.
    import subprocess
    d = sandbox.root
    (d / "gone.c").write_text("int tony_gone(void) { return 0; }\n")
    (d / "main.c").write_text("int tony_gone(void);\nint main(void) { return tony_gone(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "libtony_gone.so"),
                    str(d / "gone.c")], check=True)
    subprocess.run(["cc", "-o", str(d / "broken"), str(d / "main.c"), "-L", str(d),
                    "-ltony_gone"], check=True)
    (d / "libtony_gone.so").unlink()
    job = sandbox.job('name = "cannot-start"\n[code]\ncommand = "true"\n'
                      '[tasks.worker]\nmemory = "256m"\n')
    for wrapper, cause in ((d / "broken", "error while loading shared libraries: "
                                          "libtony_gone.so"),
                           (d / "nowhere" / "tool", "not found")):
        out = sandbox.submit(job, timeout=60, env={"TONY_EXECUTOR_WRAPPER": str(wrapper)})
        assert out.rc == 1, out.describe()
        diag = diagnostics_of(out)
        assert "worker:0 failed: its container exited with status 127 before its " \
               "executor registered" in diag, out.describe()
        assert "--- last lines of container.out ---" in diag, out.describe()
        assert cause in diag, out.describe()
        assert cause in out.task("worker:0")["diagnostics"], out.task("worker:0")
        assert_gone(out.job_dir)
