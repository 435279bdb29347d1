"""Whole jobs whose every task runs check_env.py: the task environment of each
framework is complete and consistent, and every task reaches every peer's
advertised port."""

import json
import shutil

import tonyjob

TIMEOUT = 120  # a job of four short tasks takes a few seconds


def job_text(name, framework, shape, extra=""):
    types = ",".join(f"{t}:{n}" for t, n in shape.items())
    tables = "".join(f'\n[tasks.{t}]\ninstances = {n}\nmemory = "256m"\n'
                     for t, n in shape.items())
    return (f'name = "{name}"\nframework = "{framework}"\n\n[code]\nsrc_dir = "src"\n'
            f'command = "python3 check_env.py --expect-framework {framework} '
            f'--expect-types {types} --timeout 60"\n{tables}{extra}')


def write_job(sandbox, *args, **kwargs):
    job = sandbox.job(job_text(*args, **kwargs))
    shutil.copy(tonyjob.CHECK_ENV, sandbox.root / "src" / "check_env.py")
    return job


def summary_of(out, task):
    """The CHECK_ENV_SUMMARY of a task's stdout, or None."""
    stdout = out.task_stdout(task)
    for line in stdout.splitlines():
        if line.startswith("CHECK_ENV_SUMMARY "):
            return json.loads(line[len("CHECK_ENV_SUMMARY "):])
    return None


def all_tasks(shape):
    return sorted(f"{t}:{i}" for t, n in shape.items() for i in range(n))


def assert_env_check_job(sandbox, out, shape, untracked=()):
    assert out.rc == 0, out.describe()
    st = out.status()
    assert st is not None and st["state"] == "SUCCEEDED", out.describe()
    assert st["attempt"] == 1
    tasks = all_tasks(shape)
    assert sorted(f"{t['type']}:{t['index']}" for t in st["tasks"]) == tasks
    for task in tasks:
        info = out.task(task)
        summary = summary_of(out, task)
        if task.split(":")[0] in untracked:
            # Untracked tasks are stopped when the job succeeds; one may be
            # stopped before it prints. What it printed must be clean, and
            # every tracked task must have reached it and heard from it.
            assert info["state"] in ("SUCCEEDED", "KILLED"), info
            assert summary is None or summary["ok"], (task, summary)
            for other in tasks:
                if other.split(":")[0] not in untracked:
                    s = summary_of(out, other)
                    assert task in s["reached"] and task in s["heard_from"], (other, s)
            continue
        assert info["state"] == "SUCCEEDED" and info["exit_code"] == 0, info
        assert summary is not None, f"no CHECK_ENV_SUMMARY in {task}'s stdout:\n" + \
            out.task_stdout(task) + out.describe()
        assert summary["ok"], (task, summary["failed"])
        assert summary["task"] == task
        assert summary["passed"] > 20, summary
        assert summary["reached"] == tasks, summary
        assert summary["heard_from"] == tasks, summary
        assert f"check_env {task}: OK" in out.task_stdout(task)
    assert "SUCCEEDED" in out.stdout
    left = tonyjob.wait_job_gone(out.job_dir, 5)
    assert not left, f"left behind after the job: {left}"


def test_tensorflow_chief_workers_ps(sandbox):
    shape = {"chief": 1, "worker": 2, "ps": 1}
    job = write_job(sandbox, "env-tf", "tensorflow", shape)
    out = sandbox.submit(job, timeout=TIMEOUT)
    assert_env_check_job(sandbox, out, shape, untracked=("ps",))
    assert out.task("ps:0")["tracked"] is False


def test_tensorflow_ps_tracked(sandbox):
    # With the ps tracked, every task runs to its end and prints its summary.
    shape = {"chief": 1, "worker": 2, "ps": 1}
    job = write_job(sandbox, "env-tf-tracked", "tensorflow", shape)
    out = sandbox.submit(job, "--set", "tasks.ps.tracked=true", timeout=TIMEOUT)
    assert_env_check_job(sandbox, out, shape)


def test_pytorch_workers(sandbox):
    shape = {"worker": 3}
    job = write_job(sandbox, "env-pytorch", "pytorch", shape)
    out = sandbox.submit(job, timeout=TIMEOUT)
    assert_env_check_job(sandbox, out, shape)
    # Ranks follow the worker index: the peers agreed on them (check_env
    # checks uniqueness over the network), and worker:0 is the master.
    for i in range(3):
        stdout = out.task_stdout(f"worker:{i}")
        assert "FAILED" not in stdout, stdout


def test_standalone_workers(sandbox):
    shape = {"worker": 2}
    job = write_job(sandbox, "env-standalone", "standalone", shape)
    out = sandbox.submit(job, timeout=TIMEOUT)
    assert_env_check_job(sandbox, out, shape)
