"""Hostile peers on the AM's ports while a real job runs on the real local
YARN (ctest fixture `yarn`): the same siege as on the local backend, against
the AM container's registry port and its tracking page. The AM's memory stays
bounded, no task is lost, the page answers through the RM's web proxy,
tony-submit keeps following, `tony-submit --status` (a new connection through
the gate, with the secret kept in ~/.tony/secrets) lists the tasks, and the
job succeeds."""

import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "web"))

import hostile  # noqa: E402
from test_hostile_local import (GROWTH_KB_FIXED, GROWTH_KB_PER_THOUSAND,  # noqa: E402
                                HEARTBEAT_TIMEOUT, PEAK_GROWTH_KB, WAITER, hostile_job)
from weblib import (BIN, Job, am_log_line, api_job, environment, get, task_states,  # noqa: E402
                    wait_for, yarn_am)

CONF = os.environ.get("HADOOP_CONF_DIR", "")

def rm_web():
    if not CONF or not Path(CONF, "yarn-site.xml").exists():
        pytest.skip("no HADOOP_CONF_DIR: run through ctest (fixture yarn)")
    for prop in ET.parse(Path(CONF, "yarn-site.xml")).getroot().iter("property"):
        if prop.findtext("name") == "yarn.resourcemanager.webapp.address":
            return "http://" + prop.findtext("value").replace("0.0.0.0", "127.0.0.1")
    return "http://127.0.0.1:8088"


def test_hostile_peers_cannot_hurt_a_running_job_on_yarn():
    web_base = rm_web()
    job = Job(hostile_job("512m", local=False), {"waiter.py": WAITER}, backend="yarn")
    try:
        job.submit()
        app = job.app_id()
        proxy = f"{web_base}/proxy/{app}/"

        def all_running():
            st = api_job(proxy, timeout=20)
            if st is None:
                return None
            states = task_states(st)
            return len(states) == 3 and set(states.values()) == {"RUNNING"}
        wait_for(all_running, 300, "three RUNNING workers through the RM's proxy", job, step=1)
        pid, log_dir = yarn_am(app)
        host, port = am_log_line(log_dir, r"registry at (\S+):(\d+)").groups()
        page = am_log_line(log_dir, r"tracking URL http://([^:/]+):(\d+)/").groups()
        before = hostile.memory_kb(pid)

        siege = hostile.Siege((host, int(port)), (page[0], int(page[1]))).start()
        end = time.monotonic() + 2 * HEARTBEAT_TIMEOUT
        while time.monotonic() < end:
            status, _, body = get(proxy + "api/job", timeout=20)
            assert status == 200, f"the page through the proxy failed under siege: {status}"
            time.sleep(0.5)
        # A fresh connection through the gate, with the kept secret.
        shown = subprocess.run([str(BIN / "tony-submit"), "--status", app],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=120, env=environment())
        assert shown.returncode == 0, shown.stdout
        assert "task worker:0: RUNNING" in shown.stdout, shown.stdout
        (job.dir / "release-1").write_text("go\n")
        wait_for(lambda: "worker:1 SUCCEEDED" in job.output(), 120,
                 "tony-submit reporting worker:1 SUCCEEDED during the siege", job)
        during = hostile.memory_kb(pid)
        counts = siege.stop()

        connections = siege.total_connections()
        grown = during["VmRSS"] - before["VmRSS"]
        allowed = GROWTH_KB_FIXED + GROWTH_KB_PER_THOUSAND * connections // 1000
        print(f"AM memory before {before}, during {during}; {connections} hostile "
              f"connections; {counts}")
        assert counts["crafted"] == 64 and counts["random"] == 256, counts
        assert counts["silent"] == 2000 and counts["loris"] >= 200, counts
        # Nothing came near a crafted header's claim: the peak stays within
        # a bound and close to where the AM stood before the siege.
        assert during["VmHWM"] < hostile.peak_bound_kb(pid), (before, during)
        assert during["VmHWM"] - before["VmRSS"] < PEAK_GROWTH_KB, (before, during)
        assert grown < allowed, f"RSS grew {grown} kB for {connections} connections"
        assert counts["silent_closed"] > 0 and counts["loris_closed_by_server"] > 0, counts

        (job.dir / "release-all").write_text("go\n")
        rc = job.wait(timeout=300)
        out = job.output()
        assert rc == 0, out
        assert "FINISHED/SUCCEEDED" in out, out
        assert "LOST" not in out and "heartbeat" not in out, out
    finally:
        job.cleanup()
