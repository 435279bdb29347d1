"""Helpers for the tracking-URL tests: run tony-submit on a job written into
a temporary directory, read the AM's HTTP endpoint, render pages in headless
Chromium, and replay event logs (doc/tracking.md)."""

import base64
import fcntl
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(os.environ.get("TONY_BIN", ROOT / "build" / "bin"))
VENV = Path(os.environ.get("TONY_VENV", ROOT / ".venv"))


# A task that writes a few TensorBoard summaries under $TB_LOG_DIR/train, then
# waits until the file $RELEASE exists (the tests look at it meanwhile).
SUMMARY_WRITER = """
import os
import time

import tensorflow as tf

writer = tf.summary.create_file_writer(os.path.join(os.environ["TB_LOG_DIR"], "train"))
with writer.as_default():
    for step in range(5):
        tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
writer.flush()
print("summaries written", flush=True)
while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.2)
"""


def environment():
    env = dict(os.environ)
    if (VENV / "bin").is_dir():
        env["PATH"] = f"{VENV / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Job:
    """A job directory: job.toml, src/, a jobs_dir, and tony-submit running it."""

    def __init__(self, toml, files, backend="local"):
        self.dir = Path(tempfile.mkdtemp(prefix="tony-web-"))
        self.jobs_dir = self.dir / "jobs"
        self.release_file = self.dir / "release"
        src = self.dir / "src"
        src.mkdir()
        for name, text in files.items():
            (src / name).write_text(text)
        text = toml.replace("@DIR@", str(self.dir))
        (self.dir / "job.toml").write_text(text)
        self.backend = backend
        self.proc = None
        self.output_path = self.dir / "submit.out"

    def submit(self, *extra):
        out = open(self.output_path, "w")
        self.proc = subprocess.Popen(
            [str(BIN / "tony-submit"), "--backend", self.backend, *extra,
             str(self.dir / "job.toml")],
            stdout=out, stderr=subprocess.STDOUT, env=environment(), cwd=self.dir,
            start_new_session=True)
        return self

    def output(self):
        return self.output_path.read_text()

    def app_id(self, timeout=120):
        """The application id tony-submit printed."""
        def found():
            ids = re.findall(r"application_\d+_\d+", self.output())
            return ids[0] if ids else None
        return wait_for(found, timeout, "the application id", self)

    def release(self):
        self.release_file.write_text("go\n")

    def wait(self, timeout=240):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"tony-submit did not end in {timeout} s:\n" + self.output())

    def kill(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
                self.proc.wait(timeout=30)
            except Exception:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def app_dir(self):
        dirs = list(self.jobs_dir.glob("application_*"))
        return dirs[0] if dirs else None

    def tracking_url(self, timeout=60):
        """The local AM's tracking URL, from its am.json."""
        def found():
            d = self.app_dir()
            if d and (d / "am.json").exists():
                try:
                    return json.loads((d / "am.json").read_text()).get("tracking_url")
                except ValueError:
                    return None
            return None
        url = wait_for(found, timeout, "the AM's am.json with a tracking URL", self)
        return url

    def cleanup(self):
        self.kill()
        if os.environ.get("TONY_TEST_KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(pred, timeout, what, job=None, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        if job is not None and job.proc is not None and job.proc.poll() is not None:
            value = pred()
            if value:
                return value
            raise AssertionError(f"tony-submit ended before {what}:\n" + job.output())
        time.sleep(step)
    extra = ("\ntony-submit said:\n" + job.output()) if job is not None else ""
    raise AssertionError(f"no {what} within {timeout} s{extra}")


def get(url, timeout=10, data=None, headers=None):
    """(status, headers, body) of one HTTP request; errors are answers too."""
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, dict(res.headers), res.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
        return 0, {}, str(e)


def api_job(base, timeout=10):
    """The job's JSON from base + "api/job", or None while it is not there:
    an error status, or (through the RM's web proxy, before the AM runs) the
    RM's own HTML page instead of the AM's JSON."""
    status, _, body = get(base + "api/job", timeout=timeout)
    if status != 200:
        return None
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        return None


def task_states(status):
    return {f"{t['type']}:{t['index']}": t["state"] for t in status["tasks"]}


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_run(url, *mode, size="1200,800", timeout=90):
    """Runs headless Chromium on `url` in a fresh profile; its stdout."""
    profile = tempfile.mkdtemp(prefix="tony-chromium-")
    try:
        proc = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", f"--window-size={size}", *mode, url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        assert proc.returncode == 0, f"chromium failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        # A page that did not load leaves an empty DOM and exit status 0;
        # only Chromium's log says why (e.g. the RM's proxy redirected to
        # the AM's own address because the application had ended).
        failed = re.findall(r"Page load failed: (\S+)", proc.stderr)
        assert not failed, f"Chromium could not load {url}: {failed[0]}"
        return proc.stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe
    (--remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4), so a
    test can wait for what a page shows instead of dumping it at a fixed
    moment. Use as a context manager; the browser and its profile go at the
    end."""

    def __init__(self, size="1280,800"):
        self.profile = tempfile.mkdtemp(prefix="tony-chromium-")
        self.log = tempfile.TemporaryFile()
        to_browser, self.out = os.pipe()
        self.inp, from_browser = os.pipe()

        # The child's fds 3 and 4 are the pipes' browser ends; every other fd
        # of this process is close-on-exec (PEP 446), so none is passed on.
        def fds_3_and_4():
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={size}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
            preexec_fn=fds_3_and_4, close_fds=False)
        os.close(to_browser)
        os.close(from_browser)
        self.buffer = b""
        self.next_id = 0
        self.session = None
        self.size = [int(v) for v in size.split(",")]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # Asked to close, Chromium ends its helper processes before it exits,
        # so none writes into the profile while it is removed.
        self.session = None
        try:
            self.call("Browser.close", timeout=10)
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
        os.close(self.out)
        os.close(self.inp)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, timeout=60, **params):
        """The result of one DevTools command (on the page once `open` has
        attached to it)."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session is not None:
            message["sessionId"] = self.session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") != self.next_id:
                    continue  # an event, or an answer to another session
                assert "error" not in answer, f"Chromium: {method}: {answer['error']}"
                return answer["result"]
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.inp], [], [], max(left, 0))
            chunk = os.read(self.inp, 1 << 20) if ready else b""
            assert chunk, (f"Chromium gave no answer to {method} within {timeout} s"
                           if not ready else f"Chromium ended:\n{self.stderr()}")
            self.buffer += chunk

    def stderr(self):
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-3000:]

    def open(self, url):
        """Loads `url` in the browser's page; a page that cannot be loaded
        (e.g. the RM's proxy redirected to the AM's own address because the
        application had ended) fails the test with Chromium's reason."""
        page = next(t for t in self.call("Target.getTargets")["targetInfos"]
                    if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        # The page's own size (the window's is larger by the browser's frame).
        self.call("Emulation.setDeviceMetricsOverride", width=self.size[0],
                  height=self.size[1], deviceScaleFactor=1, mobile=False)
        loaded = self.call("Page.navigate", url=url)
        assert "errorText" not in loaded, f"Chromium could not load {url}: {loaded['errorText']}"

    def dom(self):
        """The page's DOM now; "" while it has none yet (just after a
        navigation, before the new document exists)."""
        answer = self.call("Runtime.evaluate", returnByValue=True,
                           expression="document.documentElement?.outerHTML ?? ''")
        return answer["result"].get("value", "")

    def screenshot(self, path):
        Path(path).write_bytes(base64.b64decode(self.call("Page.captureScreenshot")["data"]))


def time_series_of(dom):
    """What TensorBoard's Time Series dashboard shows in `dom`: {"rows": the
    scalar cards' data-table rows as (run, value, step), "lines": each line
    drawn, as its (x, y) vertices, "dom": dom}."""
    def text(html):
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()
    rows = []
    for table in re.findall(r"<scalar-card-data-table.*?</scalar-card-data-table>", dom, re.S):
        # Columns by their headers (the first, a run's colour, has none).
        head = [text(c) for c in re.findall(
            r"<tb-data-table-header-cell\b.*?</tb-data-table-header-cell>", table, re.S)]
        for row in re.findall(r"<tb-data-table-content-row\b.*?</tb-data-table-content-row>",
                              table, re.S):
            cells = dict(zip(head, (text(c) for c in re.findall(
                r"<tb-data-table-content-cell\b.*?</tb-data-table-content-cell>", row, re.S))))
            rows.append((cells["Run"], float(cells["Value"]), int(cells["Step"])))
    lines = []
    for chart in re.findall(r"<line-chart\b.*?</line-chart>", dom, re.S):
        for d in re.findall(r'<path d="(M[-0-9.,L]+)" style="[^"]*stroke', chart):
            lines.append([tuple(float(v) for v in p.split(","))
                          for p in d[1:].split("L")])
    return {"rows": rows, "lines": lines, "dom": dom}


def assert_time_series_shows_the_loss(tensorboard_url, shot=None, within=120):
    """SUMMARY_WRITER's run as a user sees it on TensorBoard's default
    dashboard at `tensorboard_url` (ending in "tensorboard/"): the card's data
    table gives run 'train' its last point (step 4, loss 0.2) and the chart
    draws its five points, the loss falling (SVG's y grows downwards). The
    charts are drawn in SVG (?forceSVG=true) so their lines are in the DOM.
    The page is read until it shows both, for at most `within` seconds: its
    8 MB bundle, its data and its drawing each come when they come, the more
    so through the RM's proxy on a loaded machine. `shot`: a PNG of the page
    is written there too."""
    where = f"TensorBoard's Time Series at {tensorboard_url} in Chromium"
    with Browser(size="1280,800") as browser:
        browser.open(tensorboard_url + "?forceSVG=true#timeseries")
        deadline = time.monotonic() + within
        while True:
            seen = time_series_of(browser.dom())
            drawn = [line for line in seen["lines"] if len(line) == 5]
            if (("train", 0.2, 4) in seen["rows"] and drawn) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if shot is not None:
            browser.screenshot(shot)
    assert ("train", 0.2, 4) in seen["rows"], \
        f"{where}: no row 'train 0.2 4' in {seen['rows']}; the DOM:\n{seen['dom'][-3000:]}"
    assert drawn, f"{where}: no line of 5 points among {seen['lines']}"
    xs, ys = zip(*drawn[0])
    assert list(xs) == sorted(set(xs)) and list(ys) == sorted(set(ys)), \
        f"{where}: the line {drawn[0]} is not the loss falling step by step"


def png_size(path):
    """(width, height) from a PNG's IHDR chunk."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def read_events(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def replay_prefixes(events):
    """The task table after each event: a list of {"type:index": task}."""
    tables = []
    tasks = {}
    for e in events:
        if e["event"].startswith("task_"):
            t = e["task"]
            if any(x["attempt"] < t["attempt"] for x in tasks.values()):
                tasks = {k: v for k, v in tasks.items() if v["attempt"] >= t["attempt"]}
            tasks[f"{t['type']}:{t['index']}"] = t
        tables.append(dict(tasks))
    return tables


def table_of(status):
    return {f"{t['type']}:{t['index']}": t for t in status["tasks"]}


def history(*args, timeout=60, unset=()):
    """Runs tony-history; `unset` names environment variables it must do without."""
    env = environment()
    for name in unset:
        env.pop(name, None)
    proc = subprocess.run([str(BIN / "tony-history"), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def yarn_am(app_id, timeout=120):
    """(pid, log dir) of a YARN application's running tony-am, found by the
    container id in its environment."""
    stem = "container_" + app_id[len("application_"):] + "_"

    def found():
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                with open(f"/proc/{entry}/environ", "rb") as f:
                    env = dict(item.split(b"=", 1) for item in f.read().split(b"\0")
                               if b"=" in item)
            except OSError:
                continue
            if argv and argv[0].endswith(b"tony-am") and \
                    env.get(b"CONTAINER_ID", b"").decode().startswith(stem):
                return int(entry), env.get(b"LOG_DIRS", b"").decode().split(",")[0]
        return None
    return wait_for(found, timeout, f"the tony-am process of {app_id}")


def am_log_line(log_dir, pattern, timeout=60):
    """The first match of `pattern` in <log_dir>/am.log."""
    def found():
        try:
            return re.search(pattern, (Path(log_dir) / "am.log").read_text())
        except OSError:
            return None
    return wait_for(found, timeout, f"/{pattern}/ in {log_dir}/am.log")
