"""Seeing a job on the local backend (doc/tracking.md): task metrics
sampled and served by the AM, the event log's coarser metrics, and
tony-submit --follow."""

import json
import time
import urllib.request

from tonyjob import HOLD_MEMORY

MIB = 1 << 20


def fetch_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read().decode())


def test_metrics_of_a_task_holding_memory_are_served_and_logged(sandbox):
    release = sandbox.root / "release"
    sandbox.write_src({"hold.py": HOLD_MEMORY})
    job = sandbox.job(f"""
name = "metrics"
framework = "standalone"
[code]
src_dir = "src"
command = "python3 hold.py"
[env]
HOLD_MB = "300"
RELEASE = "{release}"
[tasks.worker]
instances = 1
memory = "1g"
[policy]
heartbeat_interval = "500ms"
""")
    run = sandbox.start(job)
    url = run.wait_for_line(r"tracking URL: (\S+)", 120).group(1).rstrip("/")
    run.wait_for_line(r"RUNNING", 120)
    # The executor samples every heartbeat: wait until the 300 MiB show.
    deadline_rss = 0
    doc = {}
    for _ in range(300):
        doc = fetch_json(url + "/api/job?metrics=1")
        task = doc.get("metrics", {}).get("tasks", {}).get("worker:0")
        if task and task["latest"]["rss_bytes"] >= 300 * MIB:
            deadline_rss = task["latest"]["rss_bytes"]
            break
        time.sleep(0.2)
    assert deadline_rss, f"no sample of 300 MiB came: {doc.get('metrics')}\n{run.describe()}"
    # The tree: python3 (its interpreter ~10-30 MiB plus the block) and the
    # shell and guard around it.
    assert 300 * MIB <= deadline_rss <= 380 * MIB, deadline_rss
    assert task["latest"]["processes"] >= 1
    assert task["points"] >= 1 and task["series"]["rss_bytes"], task
    assert doc["metrics"]["capacity_points"] > 0
    # The latest-only form leaves the series out.
    latest = fetch_json(url + "/api/job?metrics=latest")["metrics"]["tasks"]["worker:0"]
    assert "series" not in latest
    release.write_text("")
    out = run.wait(120)
    assert out.rc == 0, out.describe()
    # The event log keeps them at a coarser step: at least the last interval
    # is flushed when the job ends.
    lines = [json.loads(l) for l in (out.job_dir / "events.jsonl").read_text().splitlines()]
    metric_lines = [e for e in lines if e.get("event") == "metrics"]
    assert metric_lines, [e.get("event") for e in lines]
    rss = [e["fields"].index("rss_bytes") for e in metric_lines]
    peaks = [row[i] for e, i in zip(metric_lines, rss) for row in e["tasks"].values()]
    assert max(peaks) >= 300 * MIB, metric_lines


def test_follow_streams_a_tasks_output_while_it_runs(sandbox):
    release = sandbox.root / "release"
    sandbox.write_src({"talk.sh": f"""
echo "first line of $TASK_INDEX"
echo "to stderr" >&2
while [ ! -e "{release}" ]; do sleep 0.1; done
echo "last line"
"""})
    job = sandbox.job("""
name = "follow"
framework = "standalone"
[code]
src_dir = "src"
command = "sh talk.sh"
[tasks.worker]
instances = 2
memory = "128m"
""")
    run = sandbox.start(job, "--follow", "worker:1")
    # The line comes while the task still runs (it waits for the release).
    run.wait_for_line(r"^\[worker:1\] first line of 1$", 120)
    run.wait_for_line(r"^\[worker:1 stderr\] to stderr$", 60)
    release.write_text("")
    out = run.wait(120)
    assert out.rc == 0, out.describe()
    assert "[worker:1] last line" in out.stdout
    assert "first line of 0" not in out.stdout  # only the task followed
    # In a pipe nothing is followed unless asked for.
    release.unlink()
    quiet = sandbox.start(job)
    quiet.wait_for_line(r"worker:1 RUNNING", 120)
    release.write_text("")
    out = quiet.wait(120)
    assert out.rc == 0, out.describe()
    assert "first line of" not in out.stdout
