"""The tracking URL on the local backend: the live page and /api/job during
and after a job, the page in headless Chromium, the event log replayed, the
page served again from it by tony-history, and the TensorBoard proxy in front
of a real TensorBoard (doc/tracking.md)."""

import json
import urllib.error
import urllib.request
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from weblib import (BIN, SUMMARY_WRITER, Job, api_job, assert_time_series_shows_the_loss,
                    chromium, chromium_run, environment, get, history, png_size, read_events, replay_prefixes, table_of, task_states,
                    wait_for)

PAGE_JOB = """
name = "web-page"
framework = "standalone"

[code]
src_dir = "src"
command = "sh task.sh"

[env]
RELEASE = "@DIR@/release"

[tasks.worker]
instances = 2
memory = "128m"

# Untracked and deaf to SIGTERM: the AM keeps serving the finished job's
# page while it waits out the stop grace for this task.
[tasks.sidekick]
instances = 1
memory = "128m"
tracked = false
command = "trap '' TERM; sh sidekick.sh"

[policy]
stop_grace = "8s"

[cluster]
jobs_dir = "@DIR@/jobs"
"""

PAGE_FILES = {
    "task.sh": """
echo "task $JOB_NAME:$TASK_INDEX up"
if [ "$TASK_INDEX" = "1" ]; then
  while [ ! -e "$RELEASE" ]; do sleep 0.1; done
fi
echo "task $JOB_NAME:$TASK_INDEX done"
""",
    "sidekick.sh": """
trap '' TERM
echo sidekick up
while true; do sleep 0.2; done
""",
}

FAILING_JOB = """
name = "web-fail"
framework = "standalone"

[code]
src_dir = "src"
command = "sh fail.sh"

[tasks.worker]
instances = 2
memory = "128m"

[cluster]
jobs_dir = "@DIR@/jobs"
"""

FAILING_FILES = {
    "fail.sh": """
if [ "$TASK_INDEX" = "1" ]; then
  echo "ValueError: the data has a bad shape" >&2
  exit 3
fi
sleep 30
""",
}


@pytest.fixture
def page_job():
    job = Job(PAGE_JOB, PAGE_FILES).submit()
    yield job
    job.cleanup()


def test_live_page_and_api_follow_a_local_job_to_its_end(page_job):
    job = page_job
    base = job.tracking_url()
    assert re.match(r"^http://127\.0\.0\.1:\d+/$", base), base

    # During: worker:0 is done, worker:1 waits for its release.
    def midway():
        st = api_job(base)
        if st and task_states(st).get("worker:0") == "SUCCEEDED" \
                and task_states(st).get("worker:1") == "RUNNING" \
                and task_states(st).get("sidekick:0") == "RUNNING":
            return st
        return None
    during = wait_for(midway, 90, "worker:0 SUCCEEDED beside worker:1 RUNNING", job)
    assert during["state"] == "RUNNING"
    assert during["name"] == "web-page"
    assert during["tracking_url"] == base
    w1 = table_of(during)["worker:1"]
    assert w1["host"] == "127.0.0.1" and w1["port"] > 0 and w1["started_ms"] > 0
    status, headers, page = get(base)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert 'data-task="worker:0" data-state="SUCCEEDED"' in page
    assert 'data-task="worker:1" data-state="RUNNING"' in page
    assert f"127.0.0.1:{w1['port']}" in page
    assert 'http-equiv="refresh"' in page
    # The logs the page links to are served.
    c0 = table_of(during)["worker:0"]["container_id"]
    assert f'href="logs/{c0}/stdout"' in page
    status, _, log = get(f"{base}logs/{c0}/stdout")
    assert status == 200 and "task worker:0 up" in log

    # After: the job SUCCEEDED; the AM still serves while the sidekick stops.
    job.release()

    def finished():
        st = api_job(base)
        return st if st and st["state"] == "SUCCEEDED" else None
    after = wait_for(finished, 60, "the job SUCCEEDED on /api/job", job)
    states = task_states(after)
    assert states["worker:0"] == "SUCCEEDED" and states["worker:1"] == "SUCCEEDED"
    status, _, page = get(base)
    assert status == 200
    assert '<span id="job-state" class="state state-SUCCEEDED">SUCCEEDED</span>' in page
    assert 'data-task="worker:1" data-state="SUCCEEDED"' in page
    assert 'http-equiv="refresh"' not in page

    assert job.wait() == 0, job.output()
    out = job.output()
    assert f"tracking URL: {base}" in out
    assert "SUCCEEDED" in out

    # The event log replays to the tables the live AM showed: the one seen
    # midway is one of its prefixes, and the whole of it is the final status.
    app_dir = job.app_dir()
    events = read_events(app_dir / "events.jsonl")
    assert events[0]["event"] == "job_submitted"
    assert events[-1]["event"] == "job_finished"
    kinds = [e["event"] for e in events]
    for kind in ("task_requested", "task_allocated", "task_registered", "task_started",
                 "task_finished", "job_state"):
        assert kind in kinds
    tables = replay_prefixes(events)
    assert table_of(during) in tables, "the midway table is not a prefix of the event log"
    final = json.loads((app_dir / "status.json").read_text())
    assert tables[-1] == table_of(final)
    assert final["tasks"][2]["state"] == "KILLED"
    rc, shown, err = history("--dir", str(job.jobs_dir), "show", final["app_id"], "--json")
    assert rc == 0, err
    assert json.loads(shown) == final


def test_the_page_renders_in_headless_chromium(page_job, tmp_path):
    if chromium() is None:
        pytest.skip("chromium is not installed (scripts/setup.sh installs it)")
    job = page_job
    base = job.tracking_url()
    wait_for(lambda: (api_job(base) or {}).get("state") == "RUNNING" and
             task_states(api_job(base)).get("worker:0") == "SUCCEEDED", 90,
             "the job RUNNING with worker:0 SUCCEEDED", job)
    dom = chromium_run(base, "--dump-dom")
    for task, state in (("worker:0", "SUCCEEDED"), ("worker:1", "RUNNING"),
                        ("sidekick:0", "RUNNING")):
        assert re.search(rf'<tr class="task"[^>]*data-task="{task}" data-state="{state}"', dom), \
            f"no row for {task} {state} in the DOM:\n{dom[:3000]}"
    assert '<h1 id="job-name">web-page</h1>' in dom
    shot = tmp_path / "page.png"
    chromium_run(base, f"--screenshot={shot}", size="1280,720")
    assert shot.exists()
    assert shot.stat().st_size > 10_000, "the screenshot is nearly empty"
    assert png_size(shot) == (1280, 720)
    job.release()
    assert job.wait() == 0, job.output()


def test_a_failed_jobs_event_log_replays_and_is_served_by_tony_history(tmp_path):
    job = Job(FAILING_JOB, FAILING_FILES)
    try:
        job.submit()
        assert job.wait() == 1, job.output()
        app_dir = job.app_dir()
        final = json.loads((app_dir / "status.json").read_text())
        assert final["state"] == "FAILED"
        assert "worker:1 exited with code 3" in final["diagnostics"]
        events = read_events(app_dir / "events.jsonl")
        assert replay_prefixes(events)[-1] == table_of(final)
        finished = [e for e in events if e["event"] == "task_finished"
                    and e["task"]["type"] == "worker" and e["task"]["index"] == 1]
        assert finished and finished[0]["task"]["exit_code"] == 3
        assert "bad shape" in finished[0]["task"]["diagnostics"]
        app = final["app_id"]
        rc, shown, err = history("--dir", str(job.jobs_dir), "show", app, "--json")
        assert rc == 0, err
        assert json.loads(shown) == final
        rc, timeline, err = history("--dir", str(job.jobs_dir), "show", app)
        assert rc == 0, err
        assert re.search(r"task_finished\s+worker:1 FAILED .*\(exit 3\)", timeline), timeline
        rc, listing, err = history("--dir", str(job.jobs_dir), "list")
        assert rc == 0 and app in listing and "FAILED" in listing, listing + err

        # tony-history serve: the same page and API, from the event log.
        proc = subprocess.Popen([str(BIN / "tony-history"), "--dir", str(job.jobs_dir),
                                 "serve", "--port", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=environment())
        try:
            line = proc.stdout.readline()
            m = re.search(r"serving at (http://\S+/)", line)
            assert m, line
            root = m.group(1)
            status, _, index = get(root)
            assert status == 200 and f'href="jobs/{app}/"' in index
            status, _, page = get(f"{root}jobs/{app}/")
            assert status == 200
            assert 'data-task="worker:1" data-state="FAILED"' in page
            assert "ValueError: the data has a bad shape" in page
            assert 'http-equiv="refresh"' not in page
            status, _, body = get(f"{root}jobs/{app}/api/job")
            assert status == 200 and json.loads(body) == final
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        job.cleanup()


TB_JOB = """
name = "web-tensorboard"
framework = "standalone"

[code]
src_dir = "src"
command = "python3 write_summaries.py"

[env]
RELEASE = "@DIR@/release"
TB_LOG_DIR = "@DIR@/tb"
TF_CPP_MIN_LOG_LEVEL = "2"
TF_ENABLE_ONEDNN_OPTS = "0"
OMP_NUM_THREADS = "1"

[tasks.worker]
instances = 1
memory = "1g"

[tensorboard]
enabled = true
log_dir = "@DIR@/tb"

[cluster]
jobs_dir = "@DIR@/jobs"
"""

TB_FILES = {"write_summaries.py": SUMMARY_WRITER}


def post_form(url, fields, timeout=20):
    """(status, body) of a multipart/form-data POST, as a browser's FormData
    sends it."""
    boundary = "----tonyFormBoundary7MA4YWxkTrZu0gW"
    body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"'
                    f"\r\n\r\n{v}\r\n".encode() for k, v in fields.items())
    body += f"--{boundary}--\r\n".encode()
    req = urllib.request.Request(
        url, data=body, method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, res.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def test_the_tensorboard_proxy_serves_the_jobs_tensorboard(tmp_path):
    job = Job(TB_JOB, TB_FILES).submit()
    try:
        base = job.tracking_url()

        def tensorboard_page():
            status, _, body = get(base + "tensorboard/", timeout=20)
            return body if status == 200 else None
        page = wait_for(tensorboard_page, 180, "TensorBoard's page through the proxy", job,
                        step=1)
        assert "<title>TensorBoard</title>" in page
        assert '<meta name="tb-relative-root" content="./">' in page

        def runs():
            status, _, body = get(base + "tensorboard/data/runs", timeout=20)
            return json.loads(body) if status == 200 and "train" in body else None
        assert "train" in wait_for(runs, 180, "the run 'train' in data/runs", job, step=1)

        # TensorBoard lists a run when it finds its directory and loads its
        # events on a later pass (every few seconds), so the tags come after.
        def tags():
            status, _, body = get(base + "tensorboard/data/plugin/scalars/tags", timeout=20)
            return body if status == 200 and "loss" in body else None
        wait_for(tags, 180, "the tag 'loss' in the run's scalars", job, step=1)
        # The Time Series dashboard (TensorBoard 2.x's default) posts
        # FormData; it reaches TensorBoard as sent.
        status, series = post_form(base + "tensorboard/data/plugin/timeseries/timeSeries",
                                   {"requests": '[{"plugin":"scalars","tag":"loss"}]'})
        assert status == 200, (status, series[:500])
        answer = json.loads(series)
        assert answer and answer[0]["tag"] == "loss", answer
        assert "train" in answer[0]["runToSeries"], answer
        assert len(answer[0]["runToSeries"]["train"]) == 5, answer
        # As a user meets it: the default dashboard in a real browser shows
        # the run's points, fetched through the proxy.
        assert chromium() is not None, "chromium is not installed (scripts/setup.sh installs it)"
        shot = tmp_path / "tensorboard.png"
        assert_time_series_shows_the_loss(base + "tensorboard/", shot)
        assert png_size(shot) == (1280, 800) and shot.stat().st_size > 10_000
        st = api_job(base)
        tb = table_of(st)["tensorboard:0"]
        assert tb["state"] == "RUNNING" and not tb["tracked"]
        # TensorBoard's own port answers nobody but the AM's proxy, which
        # sends the job's token (doc/tracking.md "TensorBoard"): not a
        # visitor without it, nor one who makes one up.
        direct = f"http://{tb['host']}:{tb['port']}/"
        assert st["tensorboard"]["address"] == f"{tb['host']}:{tb['port']}", st["tensorboard"]
        for path, headers in [("", {}), ("data/runs", {}),
                              ("data/runs", {"X-Tony-TensorBoard-Token": "0" * 32})]:
            status, _, body = get(direct + path, headers=headers)
            assert status == 403, (path, status, body[:500])
            assert "answers only through tony's proxy" in body, body
        status, _, page = get(base)
        assert 'href="tensorboard/"' in page
        # Without its slash, the proxy sends the browser to it.
        status, headers, _ = get(base + "tensorboard")
        assert status == 200  # urllib followed the redirect to tensorboard/
        job.release()
        assert job.wait() == 0, job.output()
        final = json.loads((job.app_dir() / "status.json").read_text())
        assert task_states(final)["tensorboard:0"] == "KILLED"
    finally:
        job.cleanup()


# TonY's way: the chief starts TensorBoard itself on TB_PORT, a port its
# executor reserved; the tracking URL's proxy and the job status follow it.
CHIEF_TB_JOB = """
name = "web-chief-tensorboard"
framework = "tensorflow"

[code]
src_dir = "src"
command = "python3 write_summaries.py"

[env]
RELEASE = "@DIR@/release"
TB_LOG_DIR = "@DIR@/tb"
TF_CPP_MIN_LOG_LEVEL = "2"
TF_ENABLE_ONEDNN_OPTS = "0"
OMP_NUM_THREADS = "1"

[tasks.chief]
# TensorBoard and TensorFlow in one container, under its memory limit.
memory = "2g"
command = "tensorboard --logdir \\"$TB_LOG_DIR\\" --host 0.0.0.0 --port \\"$TB_PORT\\" >tb.log 2>&1 & python3 write_summaries.py"

[tasks.worker]
instances = 1
memory = "1g"

[tensorboard]
on = "chief"
log_dir = "@DIR@/tb"

[cluster]
jobs_dir = "@DIR@/jobs"
"""


def test_tensorboard_started_by_the_chief_is_reached_through_the_tracking_url():
    job = Job(CHIEF_TB_JOB, TB_FILES).submit()
    try:
        base = job.tracking_url()

        def tensorboard_page():
            status, _, body = get(base + "tensorboard/", timeout=20)
            return body if status == 200 and "<title>TensorBoard</title>" in body else None
        wait_for(tensorboard_page, 180, "the chief's TensorBoard through the proxy", job,
                 step=1)

        def runs():
            status, _, body = get(base + "tensorboard/data/runs", timeout=20)
            return json.loads(body) if status == 200 and "train" in body else None
        assert "train" in wait_for(runs, 180, "the run 'train' in data/runs", job, step=1)
        st = api_job(base)
        assert "tensorboard:0" not in table_of(st), "no sidecar: the chief serves it"
        chief = table_of(st)["chief:0"]
        tb = st["tensorboard"]
        assert tb["task"] == "chief:0" and tb["log_dir"].endswith("/tb"), tb
        host, port = tb["address"].rsplit(":", 1)
        assert int(port) != chief["port"], "TB_PORT is a port of its own"
        # The chief's `tensorboard` is tony's guarded one (first on its
        # PATH): TB_PORT answers nobody but the proxy, which sends the token.
        status, _, body = get(f"http://{tb['address']}/data/runs")
        assert status == 403 and "answers only through tony's proxy" in body, (status, body)
        status, _, page = get(base)
        assert 'href="tensorboard/"' in page
        job.release()
        assert job.wait() == 0, job.output()
        final = json.loads((job.app_dir() / "status.json").read_text())
        assert final["tensorboard"]["task"] == "chief:0"
        assert final["tensorboard"]["address"] == "", "gone with the chief"
        # The event log carries it the same way (tony-history replays it).
        events = [json.loads(line) for line in
                  (job.app_dir() / "events.jsonl").read_text().splitlines() if line]
        addresses = {e["job"].get("tensorboard", {}).get("address") for e in events
                     if "job" in e}
        assert tb["address"] in addresses, addresses
    finally:
        job.cleanup()


# The chief's training program starts TensorBoard in its own process, as
# TensorBoard's docs show (tensorboard.program), then trains.
IN_PROCESS_BOARD = """\
import os
import runpy

from tensorboard import program

board = program.TensorBoard()
board.configure(argv=[None, "--logdir", os.environ["TB_LOG_DIR"], "--host", "0.0.0.0",
                      "--port", os.environ["TB_PORT"]])
print("tensorboard at", board.launch(), flush=True)
runpy.run_path("write_summaries.py", run_name="__main__")
"""


def test_a_tensorboard_the_chief_starts_in_process_answers_only_the_proxy():
    old = ('command = "tensorboard --logdir \\"$TB_LOG_DIR\\" --host 0.0.0.0 '
           '--port \\"$TB_PORT\\" >tb.log 2>&1 & python3 write_summaries.py"')
    assert old in CHIEF_TB_JOB
    spec = CHIEF_TB_JOB.replace(old, 'command = "python3 board.py"')
    job = Job(spec, dict(TB_FILES, **{"board.py": IN_PROCESS_BOARD})).submit()
    try:
        base = job.tracking_url()

        def runs():
            status, _, body = get(base + "tensorboard/data/runs", timeout=20)
            return json.loads(body) if status == 200 and "train" in body else None
        assert "train" in wait_for(runs, 180, "the run 'train' through the proxy", job,
                                   step=1)
        tb = api_job(base)["tensorboard"]
        assert tb["task"] == "chief:0", tb
        # tony's sitecustomize guarded the TensorBoard the program made: its
        # port answers nobody but the proxy, which sends the token.
        status, _, body = get(f"http://{tb['address']}/data/runs")
        assert status == 403 and "answers only through tony's proxy" in body, (status, body)
        status, _, body = get(f"http://{tb['address']}/")
        assert status == 403, (status, body[:300])
        job.release()
        assert job.wait() == 0, job.output()
    finally:
        job.cleanup()
