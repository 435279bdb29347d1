"""tony-submit's machine-readable interface, tested on its own against the
real binary (doc/operations.md, "tony-submit for programs"): --output json
events, --status --json, --kill and --logs by application id on the local
backend, --dry-run, and the exit codes of unknown ids."""

import json
import subprocess
import time

import tonyjob
from tony import _cli


def tony_submit(*args, timeout=120):
    proc = subprocess.run([_cli.find_tony_submit(), *map(str, args)], capture_output=True,
                          text=True, env=_cli.environment(), timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def write_job(box, worker_command, instances=2, extra=""):
    (box.root / "src").mkdir(exist_ok=True)
    path = box.root / "job.toml"
    path.write_text(f'name = "contract"\nframework = "standalone"\n{extra}\n'
                    f'[code]\ncommand = {json.dumps(worker_command)}\n'
                    f'[tasks.worker]\ninstances = {instances}\nmemory = "256m"\n'
                    f'[policy]\nstop_grace = "1s"\n'
                    f'[cluster]\njobs_dir = "{box.jobs_dir}"\n')
    return path


def events_of(stdout):
    lines = [line for line in stdout.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # every line is JSON


def test_output_json_reports_a_successful_job_event_by_event(box):
    job = write_job(box, 'echo "hello from $TONY_TASK_ID"')
    code, out, err = tony_submit(job, "--output", "json")
    assert code == 0, err
    events = events_of(out)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "submitted" and kinds[-1] == "finished", kinds
    sub = events[0]
    assert sub["backend"] == "local" and sub["app_id"].startswith("application_")
    assert sub["job_dir"] == str(box.jobs_dir / sub["app_id"])
    finished_tasks = {e["task"]["type"] + ":" + str(e["task"]["index"])
                      for e in events if e["event"] == "task_finished"}
    assert finished_tasks == {"worker:0", "worker:1"}, kinds
    final = events[-1]
    assert final["state"] == "SUCCEEDED" and final["exit_code"] == 0
    assert final["failed_tasks"] == []
    assert {t["state"] for t in final["status"]["tasks"]} == {"SUCCEEDED"}
    assert all("time_ms" in e for e in events)
    # The human lines went to stderr.
    assert "submitted " + sub["app_id"] in err


def test_output_json_names_the_failed_task_and_its_stderr(box):
    job = write_job(box, 'if [ "$TASK_INDEX" = 1 ]; then echo "boom: bad input" >&2; exit 3; '
                         'fi; sleep 30')
    code, out, err = tony_submit(job, "--output", "json")
    assert code == 1, err
    final = events_of(out)[-1]
    assert final["event"] == "finished" and final["state"] == "FAILED"
    assert final["exit_code"] == 1
    assert "worker:1" in final["diagnostics"]
    failed = final["failed_tasks"]
    assert [f["task"] for f in failed] == ["worker:1"], failed
    assert failed[0]["exit_code"] == 3
    assert "boom: bad input" in failed[0]["stderr_tail"]


def wait_state(app, jobs_dir, want, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        code, out, err = tony_submit("--status", app, "--json", "--jobs-dir", jobs_dir)
        assert code == 0, err
        st = json.loads(out)
        if want(st):
            return st
        assert time.monotonic() < deadline, f"status never got there: {st}"
        time.sleep(0.3)


def test_status_logs_and_kill_work_on_a_local_job_by_id(box):
    job = write_job(box, 'echo "line of $TONY_TASK_ID"; echo "err of $TONY_TASK_ID" >&2; '
                         'exec sleep 120')
    code, out, err = tony_submit(job, "--detach", "--output", "json")
    assert code == 0, err
    app = events_of(out)[0]["app_id"]
    st = wait_state(app, box.jobs_dir, lambda s: s["state"] == "RUNNING" and all(
        t["state"] == "RUNNING" for t in s["tasks"]) and len(s["tasks"]) == 2)
    assert st["backend"] == "local" and st["app_id"] == app
    # Human --status too.
    code, out, err = tony_submit("--status", app, "--jobs-dir", box.jobs_dir)
    assert code == 0 and "state: RUNNING" in out and "task worker:1: RUNNING" in out, out
    # --logs: one task's file alone, then every task with banners.
    deadline = time.monotonic() + 10
    while True:
        code, out, err = tony_submit("--logs", app, "--task", "worker:1", "--file", "stdout",
                                     "--jobs-dir", box.jobs_dir)
        if out or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert code == 0 and out == "line of worker:1\n", (out, err)
    code, out, err = tony_submit("--logs", app, "--jobs-dir", box.jobs_dir)
    assert code == 0
    assert "==> worker:0 stdout" in out and "==> worker:1 stderr" in out
    assert "err of worker:0" in out and "line of worker:1" in out
    # --kill ends the whole job; a second --kill says it already ended.
    code, out, err = tony_submit("--kill", app, "--jobs-dir", box.jobs_dir)
    assert code == 0 and f"{app} killed" in out, err
    st = wait_state(app, box.jobs_dir, lambda s: s["state"] == "KILLED", timeout=5)
    assert {t["state"] for t in st["tasks"]} == {"KILLED"}, st
    assert not tonyjob.wait_job_gone(box.jobs_dir / app, 10)
    code, out, err = tony_submit("--kill", app, "--jobs-dir", box.jobs_dir)
    assert code == 0 and "already ended: KILLED" in out


def test_unknown_ids_tasks_and_files_exit_2(box, monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    code, out, err = tony_submit("--status", "application_1_0001", "--jobs-dir", box.jobs_dir)
    assert code == 2
    assert f"no job application_1_0001 in {box.jobs_dir}" in err
    assert "HADOOP_CONF_DIR" in err
    code, out, err = tony_submit("--kill", "../../etc", "--jobs-dir", box.jobs_dir)
    assert code == 2 and "is not an application id" in err
    code, _, err = tony_submit("--logs", "application_1_0001", "--backend", "local",
                               "--jobs-dir", box.jobs_dir)
    assert code == 2 and "no job application_1_0001" in err
    job = write_job(box, "echo done", instances=1)
    code, out, err = tony_submit(job, "--output", "json")
    assert code == 0, err
    app = events_of(out)[0]["app_id"]
    code, _, err = tony_submit("--logs", app, "--task", "worker:7", "--jobs-dir",
                               box.jobs_dir)
    assert code == 2 and "no task worker:7" in err and "its tasks: worker:0" in err
    code, _, err = tony_submit("--logs", app, "--task", "worker:0", "--file", "nope",
                               "--jobs-dir", box.jobs_dir)
    assert code == 2 and "has no file nope" in err
    code, _, err = tony_submit("--status", app, "--kill", app)
    assert code == 2 and "nothing else" in err
    code, _, err = tony_submit("--status", app, "--task", "worker:0")
    assert code == 2 and "--task and --file go with --logs" in err


def test_dry_run_prints_the_resolved_spec_and_starts_nothing(box):
    job = write_job(box, "echo hi", instances=3)
    code, out, err = tony_submit(job, "--dry-run", "--set", "tasks.worker.memory=1g")
    assert code == 0, err
    spec = json.loads(out)
    assert spec["name"] == "contract"
    assert spec["tasks"][0]["instances"] == 3
    assert spec["tasks"][0]["capability"]["memory_mb"] == 1024
    assert list(box.jobs_dir.iterdir()) == []
    code, out, err = tony_submit(job, "--dry-run", "--set", "tasks.worker.instances=0")
    assert code == 2 and "'instances' must be between 1 and 10000, got 0" in err
