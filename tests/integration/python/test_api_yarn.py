"""The Python API on the real local YARN (ctest fixture `yarn`): submit,
wait, status, logs and kill, and tony.run's results coming back from YARN
containers."""

import getpass
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

import conftest
import tony

sys.path.insert(0, str(conftest.SOURCE_DIR / "tests" / "integration" / "yarn"))
import yarnlib  # noqa: E402


@pytest.fixture(autouse=True)
def yarn_conf():
    conf = os.environ.get("HADOOP_CONF_DIR")
    if not conf or not os.path.exists(os.path.join(conf, "yarn-site.xml")):
        pytest.skip("no local YARN (ctest fixture `yarn` starts it)")
    return conf


def yarn_job(**keys):
    keys.setdefault("framework", "standalone")
    return tony.Job(cluster={"backend": "yarn"}, policy={"stop_grace": "1s"}, **keys)


def test_submit_wait_status_and_logs_on_yarn():
    job = yarn_job(name="api-yarn", code={"command": 'echo "hello from $TONY_TASK_ID"'},
                   tasks={"worker": tony.TaskSpec(instances=2, memory="256m")})
    handle = tony.submit(job)
    assert handle.backend == "yarn"
    final = handle.wait(timeout=300)
    assert final.state == "SUCCEEDED" and len(final.tasks) == 2
    st = handle.status()  # after the end: the RM's report and the event log
    assert st.state == "SUCCEEDED" and st.raw["yarn_state"] == "FINISHED"
    assert {t.id for t in st.tasks} == {"worker:0", "worker:1"}
    assert yarnlib.app_status(handle.app_id)["Final-State"] == "SUCCEEDED"


def test_logs_status_and_kill_of_a_running_yarn_job():
    job = yarn_job(code={"command": 'echo "up: $TONY_TASK_ID"; exec sleep 300'},
                   tasks={"worker": tony.TaskSpec(instances=2, memory="256m")})
    handle = tony.submit(job)
    deadline = time.monotonic() + 180
    while True:
        st = handle.status()
        if st.state == "RUNNING" and len(st.tasks) == 2 and \
                all(t.state == "RUNNING" for t in st.tasks):
            break
        assert time.monotonic() < deadline, st
        time.sleep(1)
    assert st.tracking_url and handle.tracking_url
    deadline = time.monotonic() + 30
    while "up: worker:1" not in (text := handle.logs(task="worker:1")):
        assert time.monotonic() < deadline, text
        time.sleep(1)
    assert "==> worker:1 stdout" in text
    handle.kill()
    with pytest.raises(tony.JobKilled):
        handle.wait(timeout=60)
    assert yarnlib.wait_until(lambda: yarnlib.app_status(handle.app_id)["State"] == "KILLED",
                              30)
    assert yarnlib.wait_until(lambda: not yarnlib.job_processes(handle.app_id), 30), \
        yarnlib.job_processes(handle.app_id)


def test_a_failing_yarn_job_raises_job_failed():
    job = yarn_job(code={"command": 'echo "no such table" >&2; exit 4'},
                   tasks={"worker": tony.TaskSpec(memory="256m")})
    with pytest.raises(tony.JobFailed) as e:
        tony.submit(job).wait(timeout=300)
    assert e.value.state == "FAILED"
    [failure] = e.value.failed_tasks
    assert failure.task == "worker:0" and failure.exit_code == 4
    assert "no such table" in failure.stderr_tail


def test_run_on_yarn_returns_every_tasks_value():
    def square():
        return tony.context.task_index() ** 2

    results = tony.run(square, task_specs={"worker": tony.TaskSpec(instances=2,
                                                                   memory="256m")},
                       framework="standalone", backend="yarn", timeout=300,
                       client_host=os.environ.get("TONY_YARN_HOST", "127.0.0.1"))
    assert results == {"worker:0": 0, "worker:1": 1}


def test_attach_to_an_id_yarn_does_not_know():
    with pytest.raises(tony.UnknownJob, match="knows no application"):
        tony.attach("application_1_9999", backend="yarn")


def _nn_http_address(conf_dir):
    text = open(os.path.join(conf_dir, "hdfs-site.xml")).read()
    m = re.search(r"<name>dfs.namenode.http-address</name>\s*<value>([^<]+)</value>", text)
    return m.group(1)


def test_a_packed_environment_is_uploaded_once(tmp_path, yarn_conf):
    venv = tmp_path / "yarnenv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True)
    archive = tony.pack_env(venv)

    def prefix():
        import sys
        return sys.prefix

    first = tony.run(prefix, python_venv=archive, framework="standalone", backend="yarn",
                     timeout=300, client_host=os.environ.get("TONY_YARN_HOST", "127.0.0.1"))
    assert first["worker:0"].endswith("/venv")  # ran the archive's python
    digest = hashlib.sha256(open(archive, "rb").read()).hexdigest()[:16]
    user = os.environ.get("HADOOP_USER_NAME") or getpass.getuser()
    url = (f"http://{_nn_http_address(yarn_conf)}/webhdfs/v1/user/{user}/.tony/envs/"
           f"{digest}/{os.path.basename(archive)}?op=GETFILESTATUS&user.name={user}")

    def staged_at():
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.load(r)["FileStatus"]["modificationTime"]
    before = staged_at()
    tony.run(prefix, python_venv=archive, framework="standalone", backend="yarn",
             timeout=300, client_host=os.environ.get("TONY_YARN_HOST", "127.0.0.1"))
    assert staged_at() == before  # the second job reused the staged copy
