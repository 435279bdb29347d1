"""The tracking URL on the real local YARN: the job page, /api/job and the
job's TensorBoard through the ResourceManager's web proxy
(http://<rm>/proxy/<app-id>/), and the event log kept in the history dir
(doc/tracking.md). Needs the ctest fixture `yarn` (HADOOP_CONF_DIR)."""

import http.client
import json
import os
import re
import socket
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from weblib import (SUMMARY_WRITER, VENV, Job, am_log_line, api_job,
                    assert_time_series_shows_the_loss, chromium, get, history, replay_prefixes,
                    table_of, task_states, wait_for, yarn_am)

CONF = os.environ.get("HADOOP_CONF_DIR", "")


def conf_value(file, name, default=""):
    path = Path(CONF) / file
    if not path.exists():
        return default
    for prop in ET.parse(path).getroot().iter("property"):
        if prop.findtext("name") == name:
            return prop.findtext("value") or default
    return default


TB_JOB = """
name = "web-yarn-tensorboard"
framework = "standalone"

[code]
src_dir = "src"
command = "python3 write_summaries.py"

[env]
PATH = "@VENV@/bin:/usr/local/bin:/usr/bin:/bin"
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
history_dir = "@HISTORY@"
"""


@pytest.fixture
def rm_web():
    if not CONF or not Path(CONF, "yarn-site.xml").exists():
        pytest.skip("no HADOOP_CONF_DIR: run through ctest (fixture yarn)")
    address = conf_value("yarn-site.xml", "yarn.resourcemanager.webapp.address",
                         "127.0.0.1:8088")
    return "http://" + address.replace("0.0.0.0", "127.0.0.1")


def test_the_job_page_and_tensorboard_through_the_rm_web_proxy(rm_web):
    default_fs = conf_value("core-site.xml", "fs.defaultFS", "file:///")
    tag = uuid.uuid4().hex[:8]
    history_args = []
    if default_fs.startswith("hdfs://"):
        history_dir = default_fs.rstrip("/") + f"/tmp/tony-web-{tag}/history"
        webhdfs = conf_value("hdfs-site.xml", "dfs.namenode.http-address", "")
        if webhdfs:
            history_args = ["--webhdfs", webhdfs.replace("0.0.0.0", "127.0.0.1")]
    else:
        history_dir = None
    toml = TB_JOB.replace("@VENV@", str(VENV))
    job = Job(toml, {"write_summaries.py": SUMMARY_WRITER}, backend="yarn")
    if history_dir is None:
        history_dir = str(job.dir / "history")
    (job.dir / "job.toml").write_text(
        (job.dir / "job.toml").read_text().replace("@HISTORY@", history_dir))
    try:
        job.submit()
        app = wait_for(lambda: (re.findall(r"application_\d+_\d+", job.output()) or [None])[0],
                       120, "the application id", job)
        proxy = f"{rm_web}/proxy/{app}/"

        def page_with_tasks():
            status, _, body = get(proxy, timeout=20)
            return body if status == 200 and 'data-task="worker:0"' in body else None
        page = wait_for(page_with_tasks, 240, "the job page through the RM's proxy", job,
                        step=1)
        assert "<h1 id=\"job-name\">web-yarn-tensorboard</h1>" in page

        def running():
            st = api_job(proxy, timeout=20)
            if st is None:
                return None
            states = task_states(st)
            ok = states.get("worker:0") == "RUNNING" and states.get("tensorboard:0") == "RUNNING"
            return st if ok else None
        midway = wait_for(running, 240, "worker:0 and tensorboard:0 RUNNING on api/job", job,
                          step=1)
        assert midway["app_id"] == app
        assert table_of(midway)["worker:0"]["log_dir"].startswith("http://")

        def tensorboard_page():
            status, _, body = get(proxy + "tensorboard/", timeout=30)
            return body if status == 200 and "<title>TensorBoard</title>" in body else None
        wait_for(tensorboard_page, 240, "TensorBoard's page through the RM's proxy", job,
                 step=1)
        # Its own port on its node answers nobody but the AM (the job's
        # token, which the executor had from the container's tokens).
        address = api_job(proxy)["tensorboard"]["address"]
        status, _, body = get(f"http://{address}/data/runs", timeout=30)
        assert status == 403 and "answers only through tony's proxy" in body, (status, body)

        def runs():
            status, _, body = get(proxy + "tensorboard/data/runs", timeout=30)
            return json.loads(body) if status == 200 and "train" in body else None
        assert "train" in wait_for(runs, 240, "the run 'train' through the RM's proxy", job,
                                   step=1)

        def tags():
            status, _, body = get(proxy + "tensorboard/data/plugin/scalars/tags", timeout=30)
            return body if status == 200 and "loss" in body else None
        wait_for(tags, 240, "the tag 'loss' through the RM's proxy", job, step=1)
        # The default dashboard in a real browser, through the RM's proxy
        # and the AM's: its data come by POST through both.
        assert chromium() is not None, "chromium is not installed (scripts/setup.sh installs it)"
        assert_time_series_shows_the_loss(proxy + "tensorboard/")

        job.release()
        assert job.wait(timeout=300) == 0, job.output()
        out = job.output()
        assert f"tracking URL: {proxy}" in out or f"/proxy/{app}" in out, out

        # The event log, kept in the history dir, replays what the proxy showed.
        # The AM copies it before it unregisters. tony-history runs without USER
        # and HADOOP_USER_NAME (as under cron or in a container): WebHDFS must
        # still be told a user, the account running it.
        said = []

        def kept():
            rc, shown, err = history("--dir", history_dir, *history_args, "show", app,
                                     "--json", unset=("USER", "HADOOP_USER_NAME"))
            said[:] = [err]
            return json.loads(shown) if rc == 0 else None
        try:
            final = wait_for(kept, 30, f"the event log of {app} in {history_dir}")
        except AssertionError as e:
            raise AssertionError(f"{e}\ntony-history said: {said}") from None
        assert final["state"] == "SUCCEEDED"
        assert task_states(final)["worker:0"] == "SUCCEEDED"
        assert task_states(final)["tensorboard:0"] == "KILLED"
        rc, timeline, err = history("--dir", history_dir, *history_args, "show", app)
        assert rc == 0 and "job_finished" in timeline, timeline + err
    finally:
        job.cleanup()


WAIT_JOB = """
name = "web-yarn-redirect"
framework = "standalone"

[code]
src_dir = "src"
command = "python3 wait.py"

[env]
PATH = "@VENV@/bin:/usr/local/bin:/usr/bin:/bin"
RELEASE = "@DIR@/release"

[tasks.worker]
instances = 1
memory = "512m"
"""

WAIT = """
import os
import time

while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.2)
"""


def direct_get(host, port, path, source):
    """One request to the AM's own port from the loopback address `source`
    (not the proxy's): (status, headers)."""
    conn = http.client.HTTPConnection(host, port, timeout=20, source_address=(source, 0))
    try:
        conn.request("GET", path)
        res = conn.getresponse()
        res.read()
        return res.status, dict(res.getheaders())
    finally:
        conn.close()


def test_a_direct_request_is_redirected_to_the_rm_proxy(rm_web):
    job = Job(WAIT_JOB.replace("@VENV@", str(VENV)), {"wait.py": WAIT}, backend="yarn")
    try:
        job.submit()
        app = job.app_id()
        proxy = f"{rm_web}/proxy/{app}/"

        def running():
            st = api_job(proxy, timeout=20)
            return st if st and task_states(st).get("worker:0") == "RUNNING" else None
        st = wait_for(running, 240, "worker:0 RUNNING on api/job through the proxy", job,
                      step=1)
        assert st["app_id"] == app
        _, log_dir = yarn_am(app)
        host, port = am_log_line(log_dir, r"tracking URL http://([^:/]+):(\d+)/").groups()
        # The RM's own name for its proxy, as its application report gives it
        # (a loopback RM address becomes the machine's name, as in Hadoop).
        rm_proxy = re.search(r"tracking URL: (http://[^/]+)/proxy/", job.output()).group(1)
        # Anyone but the proxy goes to the proxy, path and query kept, with
        # "/redirect" telling the proxy where the request came from.
        proxy_ip = socket.gethostbyname(rm_proxy.split("//")[1].split(":")[0])
        source = "127.0.99.7" if proxy_ip != "127.0.99.7" else "127.0.99.8"
        status, headers = direct_get(host, int(port), "/api/job?x=1", source)
        assert status == 302, (status, headers)
        assert headers["Location"] == f"{rm_proxy}/proxy/redirect/{app}/api/job?x=1", headers
        status, headers = direct_get(host, int(port), "/", source)
        assert status == 302 and headers["Location"] == f"{rm_proxy}/proxy/redirect/{app}/"
        # Through the proxy the page and the JSON answer as before.
        status, _, page = get(proxy, timeout=20)
        assert status == 200 and "web-yarn-redirect" in page, (status, page[:500])
        job.release()
        assert job.wait(timeout=300) == 0, job.output()
    finally:
        job.cleanup()


CHIEF_TB_JOB = """
name = "web-yarn-chief-tensorboard"
framework = "tensorflow"

[code]
src_dir = "src"
command = "python3 write_summaries.py"

[env]
PATH = "@VENV@/bin:/usr/local/bin:/usr/bin:/bin"
RELEASE = "@DIR@/release"
TB_LOG_DIR = "@DIR@/tb"
TF_CPP_MIN_LOG_LEVEL = "2"
TF_ENABLE_ONEDNN_OPTS = "0"
OMP_NUM_THREADS = "1"

[tasks.chief]
# TensorBoard and TensorFlow in one container, under its memory limit.
memory = "2g"
command = "tensorboard --logdir \\"$TB_LOG_DIR\\" --host 0.0.0.0 --port \\"$TB_PORT\\" >tb.log 2>&1 & python3 write_summaries.py"

[tensorboard]
on = "chief"
log_dir = "@DIR@/tb"
"""


def test_tensorboard_started_by_the_chief_through_the_rm_web_proxy(rm_web):
    """TonY's way on YARN: the chief starts TensorBoard on TB_PORT; the RM's
    proxy reaches it through the tracking URL; /api/job says where it is."""
    toml = CHIEF_TB_JOB.replace("@VENV@", str(VENV))
    job = Job(toml, {"write_summaries.py": SUMMARY_WRITER}, backend="yarn")
    try:
        job.submit()
        app = wait_for(lambda: (re.findall(r"application_\d+_\d+", job.output()) or [None])[0],
                       120, "the application id", job)
        proxy = f"{rm_web}/proxy/{app}/"

        def runs():
            status, _, body = get(proxy + "tensorboard/data/runs", timeout=30)
            return json.loads(body) if status == 200 and "train" in body else None
        assert "train" in wait_for(runs, 300, "the chief's TensorBoard through the RM's "
                                   "proxy", job, step=1)
        status, _, body = get(proxy + "api/job", timeout=20)
        st = json.loads(body)
        assert st["tensorboard"]["task"] == "chief:0", st.get("tensorboard")
        host, port = st["tensorboard"]["address"].rsplit(":", 1)
        assert int(port) != table_of(st)["chief:0"]["port"]
        # The chief's `tensorboard` is tony's guarded one: its node port
        # answers nobody but the proxy.
        status, _, body = get(f"http://{st['tensorboard']['address']}/data/runs", timeout=30)
        assert status == 403 and "answers only through tony's proxy" in body, (status, body)
        assert "tensorboard:0" not in table_of(st)
        job.release()
        assert job.wait(timeout=300) == 0, job.output()
    finally:
        job.cleanup()
