"""The Python API on the local backend: submit, wait, status, logs, kill,
attach; failures as exceptions; Ctrl-C; bad input."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import tonyjob
import tony


def wait_running(handle, tasks, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        st = handle.status()
        if st.state == "RUNNING" and len(st.tasks) == tasks and \
                all(t.state == "RUNNING" for t in st.tasks):
            return st
        assert not st.finished, st
        assert time.monotonic() < deadline, f"not running after {timeout} s: {st}"
        time.sleep(0.3)


def test_submit_wait_status_and_logs(box):
    job = box.job(name="api-hello", code={"command": 'echo "hello from $TONY_TASK_ID"'},
                  tasks={"worker": tony.TaskSpec(instances=2, memory="256m")})
    handle = tony.submit(job)
    assert handle.app_id.startswith("application_") and handle.backend == "local"
    final = handle.wait(timeout=120)
    assert final.state == "SUCCEEDED"
    assert [t.id for t in final.tasks] == ["worker:0", "worker:1"]
    st = handle.status()
    assert st.state == "SUCCEEDED" and st.name == "api-hello" and st.backend == "local"
    assert handle.logs(task="worker:1", file="stdout") == "hello from worker:1\n"
    assert "==> worker:0 stdout" in handle.logs()
    kinds = [e.kind for e in handle.events(timeout=5)]
    assert kinds[0] == "submitted" and kinds[-1] == "finished"
    assert "task_finished" in kinds


def test_a_failing_task_raises_job_failed_with_its_stderr(box):
    job = box.job(code={"command": 'if [ "$TASK_INDEX" = 1 ]; then '
                                   'echo "cannot open data.csv" >&2; exit 3; fi; sleep 60'},
                  tasks={"worker": tony.TaskSpec(instances=2, memory="256m")},
                  policy={"stop_grace": "1s"})
    handle = tony.submit(job)
    with pytest.raises(tony.JobFailed) as e:
        handle.wait(timeout=60)
    err = e.value
    assert not isinstance(err, tony.JobKilled)
    assert err.state == "FAILED" and err.app_id == handle.app_id
    assert "worker:1" in err.diagnostics
    [failure] = err.failed_tasks
    assert failure.task == "worker:1" and failure.exit_code == 3 and failure.signal is None
    assert "cannot open data.csv" in failure.stderr_tail
    assert "cannot open data.csv" in str(err)
    assert not tonyjob.wait_job_gone(box.job_dir(handle.app_id), 10)


def test_a_task_killed_by_a_signal_is_reported_with_the_signal(box):
    job = box.job(code={"command": "kill -9 $$"},
                  tasks={"worker": tony.TaskSpec(memory="256m")})
    with pytest.raises(tony.JobFailed) as e:
        tony.submit(job).wait(timeout=60)
    [failure] = e.value.failed_tasks
    assert failure.signal == 9 and failure.exit_code == 137
    assert "signal 9" in e.value.diagnostics


def test_kill_and_attach(box):
    job = box.job(code={"command": "exec sleep 120"},
                  tasks={"worker": tony.TaskSpec(instances=2, memory="256m")},
                  policy={"stop_grace": "1s"})
    handle = tony.submit(job)
    wait_running(handle, 2)
    other = tony.attach(handle.app_id, jobs_dir=box.jobs_dir)
    assert other.backend == "local" and other.status().state == "RUNNING"
    other.kill()  # through tony-submit --kill: the follower sees the job end
    with pytest.raises(tony.JobKilled) as e:
        handle.wait(timeout=30)
    assert e.value.state == "KILLED"
    assert other.status().state == "KILLED"
    with pytest.raises(tony.JobKilled):
        other.wait(timeout=10)
    assert not tonyjob.wait_job_gone(box.job_dir(handle.app_id), 10)


def test_kill_of_a_followed_job(box):
    job = box.job(code={"command": "exec sleep 120"},
                  tasks={"worker": tony.TaskSpec(memory="256m")}, policy={"stop_grace": "1s"})
    handle = tony.submit(job)
    wait_running(handle, 1)
    handle.kill()
    assert handle.status().state == "KILLED"
    assert not tonyjob.wait_job_gone(box.job_dir(handle.app_id), 10)


def test_attach_to_an_unknown_id_raises_unknown_job(box, monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    with pytest.raises(tony.UnknownJob, match="no job application_1_0042"):
        tony.attach("application_1_0042", jobs_dir=box.jobs_dir)
    with pytest.raises(tony.UnknownJob, match="not an application id"):
        tony.attach("job-42", jobs_dir=box.jobs_dir)


CTRL_C_SCRIPT = textwrap.dedent("""
    import sys
    import tony
    job = tony.Job(framework="standalone", code={"command": "exec sleep 120"},
                   tasks={"worker": tony.TaskSpec(instances=2, memory="256m")},
                   policy={"stop_grace": "1s"}, cluster={"jobs_dir": sys.argv[1]})
    handle = tony.submit(job)
    print("submitted", handle.app_id, flush=True)
    try:
        handle.wait()
    except KeyboardInterrupt:
        print("interrupted", handle.status().state, flush=True)
        raise
""")


def test_ctrl_c_during_wait_kills_the_job_and_leaves_nothing(box):
    script = box.root / "ctrl_c.py"
    script.write_text(CTRL_C_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(box.jobs_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("submitted application_"), line + proc.stderr.read()
        app = line.split()[1]
        handle = tony.attach(app, jobs_dir=box.jobs_dir)
        wait_running(handle, 2)
        # What a terminal does on Ctrl-C: SIGINT to the foreground group.
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err, err
    assert "interrupted KILLED" in out, (out, err)
    st = handle.status()
    assert st.state == "KILLED" and {t.state for t in st.tasks} == {"KILLED"}, st
    assert not tonyjob.wait_job_gone(box.job_dir(app), 10)


def test_a_missing_tony_submit_raises_tony_submit_not_found(box, monkeypatch):
    job = box.job(code={"command": "true"}, tasks={"worker": {}})
    with pytest.raises(tony.TonySubmitNotFound, match="not an executable tony-submit"):
        tony.submit(job, tony_submit=str(box.root / "nowhere" / "tony-submit"))
    monkeypatch.setenv("TONY_BIN_DIR", str(box.root))
    with pytest.raises(tony.TonySubmitNotFound, match="TONY_BIN_DIR"):
        tony.submit(job)
    monkeypatch.delenv("TONY_BIN_DIR")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(tony.TonySubmitNotFound, match="not on PATH"):
        tony.submit(job)
    assert list(box.jobs_dir.iterdir()) == []


def test_an_invalid_job_raises_before_anything_starts(box):
    job = box.job(code={"command": "true"},
                  tasks={"worker": tony.TaskSpec(instances=0, memory="256m")})
    with pytest.raises(tony.JobConfigError, match="'instances' must be between 1 and 10000"):
        tony.submit(job)
    with pytest.raises(tony.JobConfigError, match="unknown key 'instanses'"):
        box.job(tasks={"worker": {"instanses": 2}})
    assert list(box.jobs_dir.iterdir()) == []


def test_an_unreachable_resource_manager_raises_cluster_error(box):
    conf = box.root / "dead-rm"
    conf.mkdir()
    (conf / "core-site.xml").write_text(
        "<configuration><property><name>fs.defaultFS</name><value>file:///</value>"
        "</property></configuration>")
    (conf / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.address</name>"
        "<value>127.0.0.1:1</value></property></configuration>")
    job = box.job(code={"command": "true"}, tasks={"worker": {}})
    # tony-submit gives up on its own (its RPC deadline): no hang, no job.
    with pytest.raises(tony.ClusterError, match="127.0.0.1:1"):
        tony.submit(job, backend="yarn", hadoop_conf=conf)
