"""Bad input end to end: tony-submit refuses it with exit 2 and a message
that says where, or the job fails at once with a clear reason; never a hang."""

import re

GOOD_JOB = '''name = "good"
[code]
src_dir = "src"
command = "sleep 30"

[tasks.worker]
instances = 2
memory = "2g"
'''

# A refused job never gets as far as a job directory.
QUICK = 10


def assert_no_job_started(sandbox):
    assert sandbox.app_ids() == [], f"a job was started: {sandbox.app_ids()}"


def test_malformed_job_toml(sandbox):
    job = sandbox.job('name = "broken"\n[code\ncommand = "true"\n')
    out = sandbox.submit(job, timeout=QUICK)
    assert out.rc == 2, out.describe()
    assert re.search(r"job\.toml:2:\d+: ", out.stderr), out.describe()
    assert "tony: submitted" not in out.stdout
    assert_no_job_started(sandbox)


def test_invalid_value_names_its_place(sandbox):
    job = sandbox.job(GOOD_JOB.replace('memory = "2g"', 'memory = "lots"'))
    out = sandbox.submit(job, timeout=QUICK)
    assert out.rc == 2, out.describe()
    assert re.search(r"job\.toml:8:\d+: .*memory", out.stderr), out.describe()
    assert_no_job_started(sandbox)


def test_bad_set_override(sandbox):
    job = sandbox.job(GOOD_JOB)
    out = sandbox.submit(job, "--set", "tasks.worker.instances=0", timeout=QUICK)
    assert out.rc == 2, out.describe()
    assert "tasks.worker.instances" in out.stderr, out.describe()
    assert_no_job_started(sandbox)


def test_unknown_flag(sandbox):
    job = sandbox.job(GOOD_JOB)
    out = sandbox.submit(job, "--no-such-flag", timeout=QUICK)
    assert out.rc == 2, out.describe()
    assert "--no-such-flag" in out.stderr, out.describe()
    assert_no_job_started(sandbox)


def test_missing_job_file(sandbox):
    out = sandbox.submit(sandbox.root / "nowhere.toml", timeout=QUICK)
    assert out.rc == 2, out.describe()
    assert "nowhere.toml" in out.stderr, out.describe()
    assert_no_job_started(sandbox)


def test_task_larger_than_pool(sandbox):
    # One task of 2 GiB can never fit a pool of 1 GiB.
    job = sandbox.job(GOOD_JOB)
    out = sandbox.submit(job, "--set", "cluster.local.memory=1g", timeout=30)
    assert out.rc == 1, out.describe()
    assert out.elapsed < QUICK, out.describe()
    assert out.status()["state"] == "FAILED"
    assert re.search(r"2048 MiB.*1024 MiB", out.stdout), out.describe()


def test_gang_larger_than_pool(sandbox):
    # Each task fits, the two together never do: a gang that would wait for
    # allocation_timeout (2 minutes) if nobody checked.
    job = sandbox.job(GOOD_JOB)
    out = sandbox.submit(job, "--set", "cluster.local.memory=3g", timeout=30)
    assert out.rc == 1, out.describe()
    assert out.elapsed < QUICK, out.describe()
    assert out.status()["state"] == "FAILED"
    assert re.search(r"4096 MiB.*3072 MiB", out.stdout), out.describe()
