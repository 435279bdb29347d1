"""The examples train across their tasks and succeed on the local backend.

Slow (TensorFlow imports take seconds per task on two cores), so ctest runs
them one at a time with generous limits."""

import subprocess

import pytest

import tonyjob

TIMEOUT = 600


def require(module):
    """Skips unless the tasks' python3 can import `module`."""
    env = tonyjob.task_environment()
    probe = subprocess.run(["python3", "-c", f"import {module}"], env=env,
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip(f"python3 on the tasks' PATH cannot import {module} "
                    f"(run scripts/setup-python.sh): {probe.stderr.strip()[-300:]}")


def run_example(sandbox, name, tasks):
    job = tonyjob.EXAMPLES / name / "job.toml"
    out = sandbox.submit(job, timeout=TIMEOUT)
    assert out.rc == 0, out.describe()
    st = out.status()
    assert st["state"] == "SUCCEEDED", out.describe()
    states = {f"{t['type']}:{t['index']}": t["state"] for t in st["tasks"]}
    assert sorted(states) == sorted(tasks), states
    left = tonyjob.wait_job_gone(out.job_dir, 10)
    assert not left, left
    print(f"{name}: {out.elapsed:.1f} s")
    return out


def test_example_pytorch_ddp(sandbox):
    require("torch")
    out = run_example(sandbox, "pytorch", ["worker:0", "worker:1"])
    for i in range(2):
        assert out.task(f"worker:{i}")["state"] == "SUCCEEDED"
        assert f"[rank {i}] pytorch example OK: world 2" in out.task_stdout(f"worker:{i}"), \
            out.task_stdout(f"worker:{i}")


def test_example_tensorflow_mwms(sandbox):
    require("tensorflow")
    out = run_example(sandbox, "tensorflow", ["worker:0", "worker:1"])
    for i in range(2):
        assert out.task(f"worker:{i}")["state"] == "SUCCEEDED"
        assert f"[worker:{i}] tensorflow example OK: 2 workers" in \
            out.task_stdout(f"worker:{i}"), out.task_stdout(f"worker:{i}")


def test_example_tensorflow_ps(sandbox):
    require("tensorflow")
    out = run_example(sandbox, "tensorflow-ps", ["chief:0", "worker:0", "worker:1", "ps:0"])
    # Only the chief is tracked: it trains and ends; the servers are stopped.
    assert out.task("chief:0")["state"] == "SUCCEEDED"
    assert "tensorflow-ps example OK: 2 workers, 1 ps" in out.task_stdout("chief:0"), \
        out.task_stdout("chief:0")
    for server in ("worker:0", "worker:1", "ps:0"):
        assert out.task(server)["state"] in ("KILLED", "SUCCEEDED"), out.task(server)
