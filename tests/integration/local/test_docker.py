"""Tasks in containers on the local backend (doc/docker.md): the executor
runs the task's command with `docker run` or `podman run`. Where no runtime
can run containers (this project's machines: see doc/docker.md for what
docker and podman answer there) the task fails saying so; the command line
the executor would run is checked in its log."""

import re
import shutil
from pathlib import Path
import subprocess

import pytest

import tonyjob

IMAGE = "docker.io/library/busybox:1.36"


def docker_job(sandbox, extra=""):
    return sandbox.job(f'''name = "docker"
framework = "standalone"

[code]
src_dir = "src"
command = "echo inside $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX"

[data]
input_path = "{sandbox.root}/in"

[docker]
image = "{IMAGE}"
mounts = ["{sandbox.root}/in:/mnt/in:ro"]
run_options = ["--shm-size=64m"]

[tasks.worker]
instances = 1
memory = "256m"
{extra}
''')


def diagnostics_of(out):
    m = re.search(r"^tony: diagnostics: (.*?)(?=^tony: logs:|\Z)", out.stdout, re.S | re.M)
    return m.group(1) if m else ""


def test_a_task_in_docker_without_a_runtime_fails_saying_why(sandbox):
    (sandbox.root / "in").mkdir()
    out = sandbox.submit(docker_job(sandbox), timeout=60,
                         env={"TONY_CONTAINER_RUNTIME": "/nonexistent/docker"})
    assert out.rc == 1, out.describe()
    diag = diagnostics_of(out)
    assert f"worker:0 runs in the Docker image {IMAGE}, but no container runtime can " \
           "run it on this machine" in diag, out.describe()
    assert "`/nonexistent/docker info` found no such program" in diag, diag
    assert out.task("worker:0")["exit_code"] == 127
    assert not tonyjob.wait_job_gone(out.job_dir, 10)


def runtime_here():
    for program in ("docker", "podman"):
        if shutil.which(program) is None:
            continue
        r = subprocess.run([program, "info"], capture_output=True, timeout=60)
        if r.returncode == 0:
            return program
    return None


def test_the_task_runs_through_the_runtime_found_here(sandbox):
    program = runtime_here()
    if program is None:
        pytest.skip("neither `docker info` nor `podman info` works on this machine")
    (sandbox.root / "in").mkdir()
    out = sandbox.submit(docker_job(sandbox), timeout=170)
    log = (Path(out.task("worker:0")["log_dir"]) / "executor.log").read_text()
    cdir = out.task("worker:0")["log_dir"]
    started = re.search(r"started: (exec '" + program + r"' 'run' .*)$", log, re.M)
    assert started, log
    line = started.group(1)
    for part in ("'--rm' '--init' '--name' 'tony-container_", "'--network=host'",
                 f"'-v' '{cdir}:{cdir}' '-w' '{cdir}'",
                 f"'-v' '{sandbox.root}/in:{sandbox.root}/in:rw'",
                 f"'-v' '{sandbox.root}/in:/mnt/in:ro'", "'-e' 'TONY_TASK_ID'",
                 f"'--shm-size=64m' '{IMAGE}' '/bin/sh' '-c' 'echo inside "):
        assert part in line, (part, line)
    assert "TONY_JOB_SECRET" not in line
    if out.rc == 0:
        assert "inside worker:0" in out.task_stdout("worker:0")
    else:
        # The runtime's own refusal reaches the diagnostics (here: podman's
        # crun, or an image it cannot pull).
        assert out.rc == 1, out.describe()
        assert "Error" in diagnostics_of(out) or "error" in diagnostics_of(out), \
            out.describe()
    assert not tonyjob.wait_job_gone(out.job_dir, 10)
