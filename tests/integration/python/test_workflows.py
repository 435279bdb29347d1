"""doc/workflows.md: what an Airflow or Azkaban step does with tony, run
with the real tony-submit (Airflow and Azkaban are not installed: the
operator's callable and the step's commands are)."""

import json
import os
import re
import signal
import subprocess

import pytest

import conftest
import tonyjob
import tony
from tony import _cli

DOC = conftest.SOURCE_DIR / "doc" / "workflows.md"


def operator_module(job_toml):
    code = re.search(r"<!-- workflow-test: airflow_python -->\n```python\n(.*?)\n```",
                     DOC.read_text(), re.S).group(1)
    scope = {}
    exec(compile(code, str(DOC), "exec"), scope)
    scope["JOB_TOML"] = str(job_toml)
    scope["BACKEND"] = "local"
    return scope


class FakeTaskInstance:
    def __init__(self):
        self.xcom = {}

    def xcom_push(self, key, value):
        self.xcom[key] = value


def write_job(box, command):
    (box.root / "src").mkdir(exist_ok=True)
    path = box.root / "job.toml"
    path.write_text(f'name = "nightly"\nframework = "standalone"\n'
                    f'[code]\nsrc_dir = "src"\ncommand = {json.dumps(command)}\n'
                    f'[tasks.worker]\nmemory = "256m"\n[policy]\nstop_grace = "1s"\n'
                    f'[cluster]\njobs_dir = "{box.jobs_dir}"\n')
    return path


def test_airflow_python_callable_returns_the_outcome_and_pushes_the_id(box):
    op = operator_module(write_job(box, "echo trained"))
    ti = FakeTaskInstance()
    result = op["train_model"](ti=ti)
    assert result["state"] == "SUCCEEDED"
    assert ti.xcom["app_id"] == result["app_id"]
    handle = tony.attach(result["app_id"], jobs_dir=box.jobs_dir)
    assert len(handle.status().tasks) == 2  # the override: 2 workers
    assert handle.logs(task="worker:1", file="stdout") == "trained\n"


def test_airflow_python_callable_fails_the_task_when_the_job_fails(box):
    op = operator_module(write_job(box, "echo lost the input >&2; exit 5"))
    with pytest.raises(tony.JobFailed) as e:
        op["train_model"](ti=FakeTaskInstance())
    assert "lost the input" in str(e.value)


def step(command, box, timeout=120):
    env = _cli.environment()
    env["PATH"] = f"{os.path.dirname(_cli.find_tony_submit())}:{env['PATH']}"
    return subprocess.run(["bash", "-c", command], cwd=box.root, env=env, text=True,
                          capture_output=True, timeout=timeout)


WRAPPER = """tony-submit --quiet job.toml
code=$?
[ "$code" = 2 ] && { echo "job.toml is invalid: not retrying" >&2; exit 99; }
exit "$code"
"""


def test_command_steps_see_tony_submits_exit_codes(box):
    write_job(box, "echo ok")
    assert step("tony-submit --quiet job.toml", box).returncode == 0
    write_job(box, "exit 4")
    assert step("tony-submit --quiet job.toml", box).returncode == 1
    write_job(box, "echo ok")
    bad = step("tony-submit --quiet job.toml --set tasks.worker.instances=0", box)
    assert bad.returncode == 2 and "'instances' must be between" in bad.stderr
    (box.root / "job.toml").write_text((box.root / "job.toml").read_text()
                                       .replace('memory = "256m"', 'memory = "lots"'))
    wrapped = step(WRAPPER, box)
    assert wrapped.returncode == 99 and "not retrying" in wrapped.stderr


def test_sigterm_to_the_step_kills_the_job(box):
    write_job(box, "exec sleep 120")
    env = _cli.environment()
    proc = subprocess.Popen([_cli.find_tony_submit(), "job.toml", "--output", "json"],
                            cwd=box.root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        app = None
        for line in proc.stdout:
            if '"task_started"' in line:
                break
            if '"submitted"' in line:
                app = re.search(r"application_\d+_\d+", line).group(0)
        assert app
        proc.send_signal(signal.SIGTERM)  # what Azkaban and BashOperator send
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    assert '"state": "KILLED"' in rest or '"state":"KILLED"' in rest, rest
    assert tony.attach(app, jobs_dir=box.jobs_dir).status().state == "KILLED"
    assert not tonyjob.wait_job_gone(box.jobs_dir / app, 10)
