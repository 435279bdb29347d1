"""The pictures of a job and the history server (doc/tracking.md): the live
page's timeline and resource plots in headless Chromium, the same drawn by
`tony-history serve` for the finished job, its list and filters, and
TensorBoard started on demand for a finished job's log dir, through the
history server's proxy."""

import json
import re
import subprocess
import time

import pytest

from weblib import BIN, Job, chromium, chromium_run, environment, get, png_size, wait_for

PICTURE_JOB = """
name = "web-pictures"
framework = "standalone"

[code]
src_dir = "src"
command = "python3 hold.py"

[env]
RELEASE = "@DIR@/release"

[tasks.worker]
instances = 2
memory = "256m"

[policy]
heartbeat_interval = "500ms"

[cluster]
jobs_dir = "@DIR@/jobs"
"""

# Each worker holds 40 MiB more than the one before, until released.
HOLD = """
import os, time
block = b"\\x01" * ((40 + 40 * int(os.environ["TASK_INDEX"])) << 20)
print("holding", flush=True)
while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.1)
"""


class HistoryServer:
    """tony-history serve on a jobs dir, on a free port."""

    def __init__(self, *dirs, extra=()):
        args = [str(BIN / "tony-history")]
        for d in dirs:
            args += ["--dir", str(d)]
        args += ["serve", "--port", "0", *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=environment(), start_new_session=True)
        line = self.proc.stdout.readline()
        m = re.search(r"serving at (http://\S+)", line)
        assert m, f"tony-history serve said: {line}{self.proc.stdout.read(2000) if not m else ''}"
        self.url = m.group(1).rstrip("/") + "/"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stdout.read()


def assert_pictures(dom, what):
    assert 'id="timeline-section"' in dom, f"{what}: no timeline in the DOM:\n{dom[:3000]}"
    # A bar for each worker's run, and a memory plot with a line per worker.
    for task in ("worker:0", "worker:1"):
        assert re.search(rf'<g class="run[^"]*"[^>]*data-task="{task}"', dom) or \
            f'data-task="{task}"' in dom, f"{what}: no run of {task}"
    assert 'id="metrics"' in dom and "<svg" in dom, f"{what}: no plots:\n{dom[:3000]}"
    assert 'id="chart-memory"' in dom, f"{what}: no memory plot"


def test_live_and_finished_pages_draw_the_timeline_and_the_plots(tmp_path):
    if chromium() is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs it)")
    job = Job(PICTURE_JOB, {"hold.py": HOLD}).submit()
    server = None
    try:
        base = job.tracking_url()

        def sampled():
            status, _, body = get(base + "api/job?metrics=latest")
            if status != 200:
                return None
            doc = json.loads(body)
            tasks = doc.get("metrics", {}).get("tasks", {})
            w1 = tasks.get("worker:1", {}).get("latest", {}).get("rss_bytes", 0)
            return doc if w1 >= 80 << 20 else None
        wait_for(sampled, 120, "samples of worker:1 holding 80 MiB", job)
        dom = chromium_run(base, "--dump-dom")
        assert_pictures(dom, "the live page")
        shot = tmp_path / "live.png"
        chromium_run(base, f"--screenshot={shot}", size="1280,900")
        assert png_size(shot) == (1280, 900) and shot.stat().st_size > 20_000
        # Drill down: one task's page plots its memory against its limit.
        dom = chromium_run(base + "?task=worker:1", "--dump-dom")
        assert 'id="chart-memory"' in dom and "limit 256 MiB" in dom, dom[:3000]
        job.release()
        assert job.wait() == 0, job.output()
        app = job.app_id()
        # The finished job, from its event log, drawn by tony-history.
        server = HistoryServer(job.jobs_dir)
        page = server.url + f"jobs/{app}/"
        dom = chromium_run(page, "--dump-dom")
        assert_pictures(dom, "the history page")
        assert "SUCCEEDED" in dom
        shot = tmp_path / "history.png"
        chromium_run(page, f"--screenshot={shot}", size="1280,900")
        assert png_size(shot) == (1280, 900) and shot.stat().st_size > 20_000
    finally:
        if server:
            server.stop()
        job.cleanup()


QUICK_JOB = """
name = "@NAME@"
framework = "standalone"

[code]
src_dir = "src"
command = "sh -c 'exit @RC@'"

[tasks.worker]
instances = 1
memory = "128m"

[tensorboard]
log_dir = "@DIR@/tb"

[cluster]
jobs_dir = "@JOBS@"
"""


def write_summaries(log_dir):
    """A TensorBoard event file with a scalar 'loss', written with
    TensorBoard's own writer (no TensorFlow needed)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    w = EventFileWriter(str(log_dir / "train"))
    for step in range(3):
        value = summary_pb2.Summary.Value(tag="loss", simple_value=1.0 / (step + 1))
        w.add_event(event_pb2.Event(wall_time=time.time(), step=step,
                                    summary=summary_pb2.Summary(value=[value])))
    w.close()


def test_history_server_lists_filters_and_reopens_tensorboard(tmp_path):
    jobs = tmp_path / "jobs"
    apps = {}
    for name, rc in (("hist-ok", 0), ("hist-bad", 3)):
        toml = QUICK_JOB.replace("@NAME@", name).replace("@RC@", str(rc)) \
                        .replace("@JOBS@", str(jobs))
        job = Job(toml, {}).submit()
        try:
            assert job.wait() == (0 if rc == 0 else job.proc.returncode), job.output()
            apps[name] = job.app_id()
            if rc == 0:
                (job.dir / "tb").mkdir()
                write_summaries(job.dir / "tb")
                ok_job = job
        finally:
            if rc != 0:
                job.cleanup()
    server = HistoryServer(jobs, extra=["--tensorboard-idle", "5m"])
    try:
        status, _, index = get(server.url)
        assert status == 200
        assert apps["hist-ok"] in index and apps["hist-bad"] in index, index[:3000]
        _, _, failed = get(server.url + "?state=FAILED")
        assert apps["hist-bad"] in failed and apps["hist-ok"] not in failed
        _, _, named = get(server.url + "?name=OK")
        assert apps["hist-ok"] in named and apps["hist-bad"] not in named
        # The finished job's page offers TensorBoard; the first request
        # starts it, the proxy answers once it is up.
        _, _, page = get(server.url + f"jobs/{apps['hist-ok']}/")
        assert 'href="tensorboard/"' in page, page[:3000]
        tb = server.url + f"jobs/{apps['hist-ok']}/tensorboard/"

        def tensorboard_page():
            status, _, body = get(tb, timeout=20)
            return body if status == 200 else None
        body = wait_for(tensorboard_page, 180, "TensorBoard through the history server", step=1)
        assert "<title>TensorBoard</title>" in body

        def runs():
            status, _, body = get(tb + "data/runs", timeout=20)
            return body if status == 200 and "train" in body else None
        wait_for(runs, 120, "the run 'train' in TensorBoard's data/runs", step=1)
        # That TensorBoard answers only the server's proxy (its token), not
        # another user of this machine at its own port.
        ps = subprocess.run(["pgrep", "-af", f"tony_tensorboard.py.*{ok_job.dir}"],
                            stdout=subprocess.PIPE, text=True).stdout
        port = re.search(r"--port (\d+)", ps)
        assert port, f"no guarded TensorBoard running: {ps!r}"
        status, _, body = get(f"http://127.0.0.1:{port.group(1)}/data/runs")
        assert status == 403 and "answers only through tony's proxy" in body, body[:300]
        # The job's resolved config is there too.
        status, _, config = get(server.url + f"jobs/{apps['hist-ok']}/config")
        assert status == 200 and 'name = "hist-ok"' in config, config
    finally:
        said = server.stop()
        ok_job.cleanup()
    # Stopping the server stops its TensorBoards.
    left = subprocess.run(["pgrep", "-f", f"tensorboard.*{ok_job.dir}"],
                          stdout=subprocess.PIPE, text=True).stdout
    assert not left.strip(), f"TensorBoard left running: {left}\n{said}"
    # Retention: both jobs ended more than a second ago.
    time.sleep(1.5)
    proc = subprocess.run([str(BIN / "tony-history"), "--dir", str(jobs), "clean",
                           "--retention", "1s"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=environment(), timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert "2 jobs removed" in proc.stdout, proc.stdout
    assert not any(jobs.glob("application_*")), list(jobs.iterdir())
    # A bad retention is refused with what to write instead.
    proc = subprocess.run([str(BIN / "tony-history"), "--dir", str(jobs), "clean",
                           "--retention", "soon"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=environment(), timeout=60)
    assert proc.returncode == 2 and "e.g. 30d" in proc.stdout, proc.stdout
