"""--detach, and a job that succeeds on its second attempt."""

import shutil
import time

import tonyjob


def test_detach_returns_and_job_completes(sandbox):
    job = sandbox.job('''name = "detached"
framework = "standalone"

[code]
src_dir = "src"
command = "sleep 3; echo done $TONY_TASK_ID"

[tasks.worker]
instances = 2
memory = "256m"
''')
    out = sandbox.submit(job, "--detach", timeout=30)
    assert out.rc == 0, out.describe()
    assert out.elapsed < 10, out.describe()
    assert "detached" in out.stdout, out.describe()
    # tony-submit is gone, the job is not.
    deadline = time.monotonic() + 30
    while tonyjob.am_pid(out.job_dir) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    am_pid = tonyjob.am_pid(out.job_dir)
    assert am_pid is not None, f"no am.json 30 s after submission\n{out.describe()}"
    assert tonyjob.process_state(am_pid) not in (None, "Z", "X"), "the AM ended with tony-submit"
    assert out.status() is None, "the job finished before tony-submit returned"
    deadline = time.monotonic() + 60
    while out.status() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    st = out.status()
    assert st is not None, f"no status.json 60 s after submission\n{out.describe()}"
    assert st["state"] == "SUCCEEDED", st
    for i in range(2):
        assert out.task_stdout(f"worker:{i}").strip() == f"done worker:{i}"
    left = tonyjob.wait_job_gone(out.job_dir, 10)
    assert not left, left


def test_second_attempt_succeeds(sandbox):
    # worker:1 fails on attempt 1 only; attempt 2 runs the full environment
    # check, which also verifies every task sees TONY_ATTEMPT=2.
    job = sandbox.job('''name = "retry"
framework = "tensorflow"

[code]
src_dir = "src"
command = """if [ "$TONY_ATTEMPT" = 1 ] && [ "$TASK_INDEX" = 1 ]; then echo failing on purpose >&2; exit 4; fi; exec python3 check_env.py --expect-framework tensorflow --expect-types worker:2 --expect-attempt 2"""

[tasks.worker]
instances = 2
memory = "256m"

[policy]
max_attempts = 2
''')
    shutil.copy(tonyjob.CHECK_ENV, sandbox.root / "src" / "check_env.py")
    out = sandbox.submit(job, timeout=120)
    assert out.rc == 0, out.describe()
    st = out.status()
    assert st["state"] == "SUCCEEDED" and st["attempt"] == 2, st
    for i in range(2):
        task = out.task(f"worker:{i}")
        assert task["attempt"] == 2 and task["state"] == "SUCCEEDED", task
        assert f"check_env worker:{i}: OK" in out.task_stdout(f"worker:{i}")
    # Attempt 1 ran in containers of its own, and its failure is on record.
    containers = sorted(p.name for p in out.job_dir.glob("container_*"))
    assert len(containers) == 4, containers
    # (A container of attempt 1 stopped before its command started has no
    # stderr file.)
    failed = [c for c in containers if (out.job_dir / c / "stderr").exists() and
              "failing on purpose" in (out.job_dir / c / "stderr").read_text()]
    assert len(failed) == 1, containers
    assert failed[0] not in {out.task(f"worker:{i}")["container_id"] for i in range(2)}
    left = tonyjob.wait_job_gone(out.job_dir, 10)
    assert not left, left


def test_placement_keys_run_here_and_are_said_to_apply_on_yarn_only(sandbox):
    """The same job.toml runs on both backends: the local backend takes
    placement and max_per_node, runs every task here, and says so once."""
    job = sandbox.job('''name = "placed"
framework = "standalone"

[code]
src_dir = "src"
command = "echo ran $TONY_TASK_ID"

[tasks.worker]
instances = 2
memory = "256m"
placement = "pack"

[tasks.ps]
memory = "256m"
max_per_node = 1
''')
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 0, out.describe()
    said = [line for line in out.stdout.splitlines() if "apply on YARN only" in line]
    assert len(said) == 1, out.describe()
    assert "tasks.worker, tasks.ps: placement and max_per_node apply on YARN only" in said[0]
    assert out.task_stdout("worker:1").strip() == "ran worker:1"
