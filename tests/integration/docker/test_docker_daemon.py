"""Tasks in real containers on the local backend (doc/docker.md, "With a
local daemon"): the docker tier's fixture (dockerd.sh) runs a Docker daemon
of its own and imports the image tony-test:<codename>, made from Debian
packages; DOCKER_HOST and the image's name are in $TONY_DOCKERD_DIR/env.
Where the fixture found no daemon it can start, every test skips (exit 77)
saying why."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import tonyjob

HERE = Path(__file__).resolve().parent


def daemon():
    """{DOCKER_HOST, TONY_DOCKER_TEST_IMAGE} of the fixture's daemon; skips
    saying why when there is none."""
    d = os.environ.get("TONY_DOCKERD_DIR")
    if not d:
        pytest.skip("TONY_DOCKERD_DIR is not set: start a daemon with "
                    "tests/integration/docker/dockerd.sh start --dir DIR and set it to DIR")
    d = Path(d)
    if (d / "unavailable").exists():
        pytest.skip("no Docker daemon: " + (d / "unavailable").read_text().strip())
    if not (d / "env").exists():
        pytest.skip(f"no Docker daemon in {d}: run dockerd.sh start --dir {d}")
    env = dict(line.split("=", 1) for line in (d / "env").read_text().split("\n") if "=" in line)
    return env


def docker(env, *args, timeout=60):
    return subprocess.run(["docker", *args], env={**os.environ, "DOCKER_HOST": env["DOCKER_HOST"]},
                          capture_output=True, text=True, timeout=timeout)


def containers_of(env, app_id):
    """Names of the job's containers the daemon has, running or not."""
    # Container ids: container_<cluster ts>_<app number>_<attempt>_<n>.
    marker = "tony-container_" + app_id[len("application_"):] + "_"
    r = docker(env, "ps", "-a", "--format", "{{.Names}}")
    assert r.returncode == 0, r.stderr
    return [n for n in r.stdout.split() if n.startswith(marker)]


def job_in_image(sandbox, env, framework, command, extra=""):
    root = sandbox.root
    for d in ("in", "out", "extra"):
        (root / d).mkdir(exist_ok=True)
    (root / "in" / "input.txt").write_text("input from the host\n")
    (root / "extra" / "extra.txt").write_text("mounted from the host\n")
    job = sandbox.job(f'''name = "in-docker"
framework = "{framework}"

[code]
src_dir = "src"
command = "{command}"

[data]
input_path = "{root}/in"
output_path = "{root}/out"

[docker]
image = "{env['TONY_DOCKER_TEST_IMAGE']}"
mounts = ["{root}/extra:/mnt/extra:ro"]

[env]
HOST_MARKER = "{root}/job.toml"
{extra}''')
    shutil.copy(HERE / "task_check.py", root / "src" / "task_check.py")
    return job


def submit_env(env):
    return {"DOCKER_HOST": env["DOCKER_HOST"], "TONY_CONTAINER_RUNTIME": "docker"}


def assert_no_container(env, app_id, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        left = containers_of(env, app_id)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, f"containers of {app_id} still there {timeout} s after the job ended: {left}"


def test_tensorflow_workers_run_in_the_image_with_tf_config(sandbox):
    env = daemon()
    job = job_in_image(sandbox, env, "tensorflow", "python3 src/task_check.py tensorflow",
                       '\n[tasks.worker]\ninstances = 2\nmemory = "256m"\n')
    out = sandbox.submit(job, timeout=170, env=submit_env(env))
    assert out.rc == 0, out.describe()
    for i in (0, 1):
        stdout = out.task_stdout(f"worker:{i}")
        assert "all checks passed" in stdout, stdout
        assert "image: tony-test" in stdout, stdout
        assert f"TF_CONFIG: worker {i} of" in stdout, stdout
        assert "input: input from the host" in stdout and "extra: read-only" in stdout, stdout
        assert (sandbox.root / "out" / f"worker-{i}").read_text() == "written in the container\n"
        log = (Path(out.task(f"worker:{i}")["log_dir"]) / "executor.log").read_text()
        assert re.search(r"started: exec 'docker' 'run' .*'--network=host'", log), log
    assert "worker 0 heard: hello from worker 1" in out.task_stdout("worker:0")
    assert "worker 1 got: ack hello from worker 1" in out.task_stdout("worker:1")
    assert_no_container(env, out.app_id)
    assert not tonyjob.wait_job_gone(out.job_dir, 10)


def test_pytorch_ranks_rendezvous_in_the_image(sandbox):
    env = daemon()
    job = job_in_image(sandbox, env, "pytorch", "python3 src/task_check.py pytorch",
                       '\n[tasks.worker]\ninstances = 2\nmemory = "256m"\n')
    out = sandbox.submit(job, timeout=170, env=submit_env(env))
    assert out.rc == 0, out.describe()
    assert "torch: rank 0 of 2" in out.task_stdout("worker:0")
    assert "rank 0 heard: hello from rank 1" in out.task_stdout("worker:0")
    assert "rank 1 got: ack hello from rank 1" in out.task_stdout("worker:1")
    assert "all checks passed" in out.task_stdout("worker:1")
    assert_no_container(env, out.app_id)


def test_a_tasks_exit_code_in_the_container_is_the_tasks(sandbox):
    env = daemon()
    job = job_in_image(sandbox, env, "standalone",
                       "test -f /.dockerenv && echo in the container && exit 7",
                       '\n[tasks.worker]\ninstances = 1\nmemory = "256m"\n')
    out = sandbox.submit(job, timeout=120, env=submit_env(env))
    assert out.rc == 1, out.describe()
    assert out.task("worker:0")["exit_code"] == 7, out.task("worker:0")
    assert "in the container" in out.task_stdout("worker:0")
    assert_no_container(env, out.app_id)


def stop_leaves_no_container(sandbox, how):
    env = daemon()
    # The command ignores SIGTERM: stopping it takes the grace period's
    # SIGKILL, which reaches the docker client, not the container.
    job = job_in_image(sandbox, env, "standalone",
                       "trap '' TERM; echo sleeping; sleep 300",
                       '\n[tasks.worker]\ninstances = 2\nmemory = "256m"\n'
                       '\n[policy]\nstop_grace = "1s"\n')
    run = sandbox.start(job, env=submit_env(env))
    run.wait_for_line(r"^tony: job \S+ RUNNING", timeout=90)
    app = run.app_id()
    deadline = time.monotonic() + 60
    while len(containers_of(env, app)) < 2:
        assert time.monotonic() < deadline, f"the job's containers did not start\n{run.describe()}"
        time.sleep(0.2)
    if how == "ctrl_c":
        run.interrupt()
    else:
        k = subprocess.run([str(tonyjob.bin_dir() / "tony-submit"), "--kill", app,
                            "--jobs-dir", str(sandbox.jobs_dir)],
                           env=tonyjob.task_environment(), capture_output=True, text=True,
                           timeout=90)
        assert k.returncode == 0, k.stdout + k.stderr
    out = run.wait(timeout=90)
    assert out.rc == 1, out.describe()
    assert out.status()["state"] == "KILLED", out.describe()
    assert_no_container(env, app)
    assert not tonyjob.wait_job_gone(out.job_dir, 10)


def test_ctrl_c_leaves_no_container(sandbox):
    stop_leaves_no_container(sandbox, "ctrl_c")


def test_kill_leaves_no_container(sandbox):
    stop_leaves_no_container(sandbox, "kill")
