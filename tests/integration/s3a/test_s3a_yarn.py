"""tony on another Hadoop file system: s3a:// on an S3-compatible server
(moto's), reached through the cluster's own `hadoop fs` (fixture `s3a`,
tests/integration/CMakeLists.txt; doc/operations.md, "Other file systems").
A job whose code and environment are staged on s3a:// runs on YARN, its
event log lands in an s3a:// history dir, and `tony-submit --logs` reads
its aggregated logs from the NodeManagers' s3a:// remote-app-log-dir."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "yarn"))
import yarnlib as y  # noqa: E402

BUCKET = os.environ.get("TONY_YARN_S3A_BUCKET", "tony")
HADOOP = os.path.join(os.environ["TONY_YARN_DIR"], "bin", "hadoop")


def client_env():
    env = os.environ.copy()
    env["HADOOP_HOME"] = os.environ["TONY_YARN_DIR"]
    return env


def hadoop_fs(*args):
    proc = subprocess.run([HADOOP, "fs", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120, env=client_env())
    return proc.returncode, proc.stdout, proc.stderr


def s3a_job(tmp_path, venv):
    src = tmp_path / "src"
    src.mkdir()
    (src / "hello.txt").write_text("code from s3a\n")
    job = tmp_path / "job.toml"
    job.write_text(f"""
name = "s3a"
framework = "standalone"
[cluster]
staging_dir = "s3a://{BUCKET}/staging"
history_dir = "s3a://{BUCKET}/history"
[code]
src_dir = "{src}"
python_venv = "{venv}"
command = 'echo "S3A code=$(cat hello.txt)"; venv/bin/python3 ok'
[tasks.worker]
instances = 1
memory = "512m"
""")
    return str(job)


def test_a_job_staged_on_s3a_runs_keeps_its_history_and_logs_there(tmp_path):
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    python = env / "bin" / "python3"
    python.write_text("#!/bin/sh\necho \"S3A venv python $*\"\n")
    python.chmod(0o755)
    venv = tmp_path / "env.tgz"
    subprocess.run(["tar", "-czf", str(venv), "-C", str(env), "."], check=True)

    code, out, secs = y.submit([s3a_job(tmp_path, venv)], timeout=600, env=client_env())
    assert code == 0, out
    app = y.app_id_of(out)
    print(f"{app}: {secs:.0f} s", file=sys.stderr)

    # What the job shipped was staged on s3a:// (the tony bundle and the
    # environment once per content, under the staging root), and the
    # NodeManager localized it from there: the task ran with both.
    rc, listing, err = hadoop_fs("-ls", "-R", f"s3a://{BUCKET}/staging")
    assert rc == 0, err
    assert "env.tgz" in listing and "tony.tgz" in listing, listing

    # The AM kept its event log in the s3a:// history dir.
    rc, events, err = hadoop_fs("-cat", f"s3a://{BUCKET}/history/{app}.jsonl")
    assert rc == 0, err
    assert app in events, events[:2000]

    # The job's aggregated logs are on s3a://, and --logs reads them there.
    # --logs of an ended job takes its tasks from the event log in the
    # default history dir (~/.tony/history without HDFS), not a job's own
    # history_dir: a home of the test's own holds a copy.
    home = tmp_path / "home"
    (home / ".tony" / "history").mkdir(parents=True)
    (home / ".tony" / "history" / f"{app}.jsonl").write_text(events)
    logs_env = client_env()
    logs_env["HOME"] = str(home)
    proc = subprocess.run([y.SUBMIT, "--logs", app], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300,
                          env=logs_env)
    assert proc.returncode == 0, proc.stderr
    assert "S3A code=code from s3a" in proc.stdout, proc.stdout
    assert "S3A venv python ok" in proc.stdout, proc.stdout
    rc, listing, err = hadoop_fs("-ls", "-R", f"s3a://{BUCKET}/logs")
    assert rc == 0, err
    assert app in listing, listing


def test_s3a_without_a_hadoop_command_is_refused_saying_what_to_do(tmp_path):
    env = client_env()
    env.pop("HADOOP_HOME")
    env["PATH"] = "/usr/bin:/bin"
    job = tmp_path / "job.toml"
    job.write_text(f"""
name = "s3a-refused"
[cluster]
staging_dir = "s3a://{BUCKET}/staging"
[code]
src_dir = false
command = "true"
[tasks.worker]
instances = 1
memory = "256m"
""")
    code, out, _ = y.submit([str(job)], timeout=120, env=env)
    assert code == 2, out
    assert "found no `hadoop` command" in out and "HADOOP_HOME" in out, out
    assert f"s3a://{BUCKET}/staging" in out, out
