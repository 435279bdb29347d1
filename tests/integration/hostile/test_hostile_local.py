"""Hostile peers on the AM's ports while a real job runs on the local backend:
crafted BASP headers claiming 512 MiB, 1 MiB of random bytes in 4 KiB
connections and 2,000 silent connections on the registry port, 200
slow-loris clients on the tracking page, all at once for longer than two
heartbeat timeouts. The AM's memory stays bounded, the executors' heartbeats
keep flowing (no task is lost), the page answers, tony-submit keeps
following, and the job succeeds. And an executor started by hand with
another job's secret, or with none, is turned away with a clear message and
exit code 2 while the job goes on."""

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "web"))

import hostile  # noqa: E402
from weblib import BIN, VENV, Job, environment, get, task_states, wait_for  # noqa: E402

# Every worker waits for its release file: the test decides when tasks end.
WAITER = """
import os
import sys
import time

d, i = os.environ["RELEASE_DIR"], os.environ["TASK_INDEX"]
while not (os.path.exists(f"{d}/release-{i}") or os.path.exists(f"{d}/release-all")):
    time.sleep(0.1)
print("released", i, flush=True)
"""

def hostile_job(memory="256m", local=True):
    """Three workers that wait for their release files; heartbeats lost after
    4 s. Local jobs keep their job dirs in the test's directory."""
    cluster = '\n[cluster]\njobs_dir = "@DIR@/jobs"\n' if local else ""
    return f"""
name = "hostile-{'local' if local else 'yarn'}"
framework = "standalone"

[code]
src_dir = "src"
command = "python3 waiter.py"

[env]
PATH = "{VENV}/bin:/usr/local/bin:/usr/bin:/bin"
RELEASE_DIR = "@DIR@"

[tasks.worker]
instances = 3
memory = "{memory}"

[policy]
heartbeat_timeout = "{HEARTBEAT_TIMEOUT}s"
{cluster}"""


HEARTBEAT_TIMEOUT = 4
# The AM's RSS may grow by this much per thousand hostile connections (the
# listener's pending sessions are a few hundred bytes; the sanitizer build's
# allocator keeps freed memory a while), plus a fixed allowance.
GROWTH_KB_PER_THOUSAND = 4 * 1024
GROWTH_KB_FIXED = 16 * 1024
# The AM's peak may not pass where it stood before the siege by more than
# this; one crafted header alone made CAF's own listener allocate 512 MiB. The
# absolute bound is hostile.peak_bound_kb: 200 MiB (400 MiB in a sanitizer
# build, whose allocator alone holds some 150 MiB).
PEAK_GROWTH_KB = 64 * 1024


def test_hostile_peers_cannot_hurt_a_running_job():
    job = Job(hostile_job(), {"waiter.py": WAITER})
    try:
        job.submit()
        base = job.tracking_url()

        def all_running():
            status, _, body = get(base + "api/job")
            if status != 200:
                return None
            st = json.loads(body)
            states = task_states(st)
            return st if len(states) == 3 and set(states.values()) == {"RUNNING"} else None
        wait_for(all_running, 120, "three RUNNING workers", job)
        am = json.loads((job.app_dir() / "am.json").read_text())
        pid = am["pid"]
        web = base.split("//")[1].rstrip("/").split(":")
        before = hostile.memory_kb(pid)

        siege = hostile.Siege((am["host"], am["port"]), (web[0], int(web[1]))).start()
        # The siege holds on for two heartbeat timeouts; the page answers
        # meanwhile, from behind 200 slow-loris connections.
        end = time.monotonic() + 2 * HEARTBEAT_TIMEOUT
        answered = 0
        while time.monotonic() < end:
            status, _, body = get(base + "api/job", timeout=10)
            assert status == 200, f"the tracking page failed under siege: {status} {body}"
            answered += 1
            time.sleep(0.5)
        # tony-submit still follows: worker:1's end reaches its output while
        # the siege goes on.
        (job.dir / "release-1").write_text("go\n")
        wait_for(lambda: "worker:1 SUCCEEDED" in job.output(), 60,
                 "tony-submit reporting worker:1 SUCCEEDED during the siege", job)
        during = hostile.memory_kb(pid)
        counts = siege.stop()

        connections = siege.total_connections()
        assert counts["crafted"] == 64 and counts["random"] == 256, counts
        assert counts["silent"] == 2000 and counts["loris"] >= 200, counts
        grown = during["VmRSS"] - before["VmRSS"]
        allowed = GROWTH_KB_FIXED + GROWTH_KB_PER_THOUSAND * connections // 1000
        print(f"AM memory before {before}, during {during}; {connections} hostile "
              f"connections; {counts}")
        # Nothing came near a crafted header's claim: the peak stays within
        # a bound and close to where the AM stood before the siege.
        assert during["VmHWM"] < hostile.peak_bound_kb(pid), (before, during)
        assert during["VmHWM"] - before["VmRSS"] < PEAK_GROWTH_KB, (before, during)
        assert grown < allowed, f"RSS grew {grown} kB for {connections} connections"
        # The AM closed the silent ones it could not keep (cap) or that said
        # nothing in time (deadline), and the slow-loris ones at their deadline.
        assert counts["silent_closed"] > 0, counts
        assert counts["loris_closed_by_server"] > 0, counts

        (job.dir / "release-all").write_text("go\n")
        rc = job.wait(timeout=120)
        out = job.output()
        assert rc == 0, out
        final = json.loads((job.app_dir() / "status.json").read_text())
        assert final["state"] == "SUCCEEDED", final
        assert set(task_states(final).values()) == {"SUCCEEDED"}, final
        assert "LOST" not in out and "heartbeat" not in out, out
        am_log = (job.app_dir() / "am.log").read_text()
        assert "registry port:" in am_log, am_log[-2000:]
        print(am_log[-1500:])
    finally:
        job.cleanup()


def executor_env(job, am, secret):
    """A container environment for a hand-started tony-executor aimed at the
    AM of `am` (am.json), with `secret` (None: no secret at all)."""
    env = {k: v for k, v in environment().items()
           if k not in ("TONY_JOB_SECRET", "HADOOP_TOKEN_FILE_LOCATION")}
    env.update({"TONY_AM_ADDRESS": f"{am['host']}:{am['port']}",
                "TONY_TASK_TYPE": "worker", "TONY_TASK_INDEX": "0", "TONY_ATTEMPT": "1",
                "TONY_TASK_COMMAND": "true", "LOG_DIRS": str(job.dir)})
    if secret is not None:
        env["TONY_JOB_SECRET"] = secret
    return env


def test_an_executor_with_another_jobs_secret_is_refused_at_the_gate():
    job = Job(hostile_job(), {"waiter.py": WAITER})
    try:
        job.submit()
        base = job.tracking_url()
        wait_for(lambda: get(base + "api/job")[0] == 200 and job.app_dir() is not None
                 and (job.app_dir() / "am.json").exists(), 120, "the AM", job)
        am = json.loads((job.app_dir() / "am.json").read_text())
        executor = str(BIN / "tony-executor")
        wrong = subprocess.run([executor], env=executor_env(job, am, "0" * 64),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=60, cwd=job.dir)
        assert wrong.returncode == 2, wrong.stdout
        assert "refused the job secret" in wrong.stdout, wrong.stdout
        none = subprocess.run([executor], env=executor_env(job, am, None),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=60, cwd=job.dir)
        assert none.returncode == 2, none.stdout
        assert "no job secret" in none.stdout and "TONY_JOB_SECRET" in none.stdout, none.stdout
        # The job never saw either of them.
        (job.dir / "release-all").write_text("go\n")
        assert job.wait(timeout=120) == 0, job.output()
        final = json.loads((job.app_dir() / "status.json").read_text())
        assert final["state"] == "SUCCEEDED", final
    finally:
        job.cleanup()
