"""Request bodies against tony's HTTP servers (doc/tracking.md, "Request
bodies"; doc/operations.md, "Security"): chunked, unsized and gzip bodies
of 600 MiB, generated here and never stored, and 8 and 64 clients sending a
body a byte a second, against a running local job's tracking URL and
against `tony-history serve`. The server stays alive, its RSS stays under
64 MiB above idle, and another client's GET is answered within a second
all along."""

import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "web"))

import hostile  # noqa: E402
from test_hostile_local import WAITER, hostile_job  # noqa: E402
from test_web_observe import HistoryServer  # noqa: E402
from weblib import Job, get, task_states, wait_for  # noqa: E402

BIG = 600 << 20
GROWTH_KB = 64 * 1024
ANSWER_S = 1.0


def gzip_of_zeros(size):
    """A gzip body that inflates to `size` zero bytes (some 600 KiB)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [z.compress(block) for _ in range(size >> 20)]
    parts.append(z.flush())
    return b"".join(parts)


def send_body(host, port, head, chunks):
    """Sends `head`, then every chunk from the iterator `chunks` until the
    server stops taking them; the server's first answer line (or '')."""
    s = hostile.connect(host, port, timeout=30)
    answer = b""
    try:
        s.sendall(head)
        for c in chunks:
            s.sendall(c)
    except OSError:
        pass  # refused and closed: what a server that does not read does
    try:
        s.settimeout(5)
        answer = s.recv(4096)
    except OSError:
        pass
    s.close()
    return answer.split(b"\r\n", 1)[0].decode("latin-1")


def chunked(total, size=1 << 20):
    block = b"%x\r\n" % size + b"x" * size + b"\r\n"
    for _ in range(total // size):
        yield block
    yield b"0\r\n\r\n"


def unsized(total, size=1 << 20):
    block = b"y" * size
    for _ in range(total // size):
        yield block


class Watch:
    """Samples a process's RSS and times GETs of `url` from another client
    until stopped."""

    def __init__(self, pid, url):
        self.pid, self.url = pid, url
        self.idle_kb = hostile.memory_kb(pid)["VmRSS"]
        self.peak_kb = self.idle_kb
        self.slowest = 0.0
        self.failures = []
        self.gets = 0
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._rss, daemon=True),
                        threading.Thread(target=self._gets, daemon=True)]
        for t in self.threads:
            t.start()

    def _rss(self):
        while not self.stopping.is_set():
            try:
                self.peak_kb = max(self.peak_kb, hostile.memory_kb(self.pid)["VmRSS"])
            except OSError:
                self.failures.append("the server is gone")
                return
            self.stopping.wait(0.05)

    def _gets(self):
        while not self.stopping.is_set():
            start = time.monotonic()
            status, _, body = get(self.url, timeout=5)
            took = time.monotonic() - start
            self.gets += 1
            self.slowest = max(self.slowest, took)
            if status != 200:
                self.failures.append(f"GET {self.url}: {status} {body[:200]}")
            self.stopping.wait(0.2)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join()
        return self

    def check(self, what):
        grown = self.peak_kb - self.idle_kb
        print(f"{what}: RSS idle {self.idle_kb} kB, peak {self.peak_kb} kB; "
              f"{self.gets} GETs, slowest {self.slowest:.3f} s")
        assert not self.failures, (what, self.failures[:5])
        assert self.gets >= 2, (what, self.gets)
        assert grown < GROWTH_KB, f"{what}: RSS grew {grown} kB above idle"
        assert self.slowest < ANSWER_S, f"{what}: a GET took {self.slowest:.3f} s"


def body_probes(host, port, pid, probe_url, no_body_path, body_path):
    """The 600 MiB bodies, one after the other, each watched; the first
    answer line of each."""
    gz = gzip_of_zeros(BIG)
    probes = {
        "chunked to a page": (f"POST {no_body_path} HTTP/1.1\r\nHost: t\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n", chunked(BIG)),
        "chunked to the proxy": (f"POST {body_path} HTTP/1.1\r\nHost: t\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n", chunked(BIG)),
        "unsized to a page": (f"POST {no_body_path} HTTP/1.1\r\nHost: t\r\n\r\n",
                              unsized(BIG)),
        "unsized to the proxy": (f"POST {body_path} HTTP/1.1\r\nHost: t\r\n\r\n",
                                 unsized(BIG)),
        "sized to the proxy": (f"POST {body_path} HTTP/1.1\r\nHost: t\r\n"
                               f"Content-Length: {BIG}\r\n\r\n", unsized(BIG)),
        "gzip to the proxy": (f"POST {body_path} HTTP/1.1\r\nHost: t\r\n"
                              f"Content-Encoding: gzip\r\nContent-Length: {len(gz)}\r\n\r\n",
                              iter([gz])),
    }
    answers = {}
    for what, (head, chunks) in probes.items():
        watch = Watch(pid, probe_url)
        answers[what] = send_body(host, port, head.encode(), chunks)
        time.sleep(0.5)
        watch.stop().check(what)
        os.kill(pid, 0)  # alive
    print(answers)
    assert answers["chunked to a page"].startswith("HTTP/1.1 413"), answers
    assert answers["sized to the proxy"].startswith("HTTP/1.1 413"), answers
    assert answers["gzip to the proxy"].startswith("HTTP/1.1 415"), answers
    return answers


def slow_clients(host, port, pid, probe_url, body_path, count, seconds=6):
    """`count` clients send a body a byte a second while another GETs."""
    socks = []
    for _ in range(count):
        s = hostile.connect(host, port)
        s.sendall(f"PUT {body_path} HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n"
                  .encode())
        socks.append(s)
    watch = Watch(pid, probe_url)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for s in socks:
            try:
                s.send(b"z")
            except OSError:
                pass
        time.sleep(1)
    watch.stop().check(f"{count} slow bodies")
    for s in socks:
        s.close()


def test_request_bodies_cannot_hurt_a_running_am():
    job = Job(hostile_job(), {"waiter.py": WAITER})
    try:
        job.submit()
        base = job.tracking_url()

        def all_running():
            status, _, body = get(base + "api/job")
            if status != 200:
                return None
            states = task_states(json.loads(body))
            return len(states) == 3 and set(states.values()) == {"RUNNING"}
        wait_for(all_running, 120, "three RUNNING workers", job)
        pid = json.loads((job.app_dir() / "am.json").read_text())["pid"]
        host, port = base.split("//")[1].rstrip("/").split(":")
        port = int(port)
        body_probes(host, port, pid, base + "api/job", "/", "/tensorboard/data/x")
        for n in (8, 64):
            slow_clients(host, port, pid, base + "api/job", "/tensorboard/data/x", n)
        (job.dir / "release-all").write_text("go\n")
        rc = job.wait(timeout=120)
        assert rc == 0, job.output()
    finally:
        job.cleanup()


def test_request_bodies_cannot_hurt_tony_history(tmp_path):
    (tmp_path / "jobs").mkdir()
    server = HistoryServer(tmp_path / "jobs")
    try:
        host, port = server.url.split("//")[1].rstrip("/").split(":")
        port = int(port)
        pid = server.proc.pid
        body_probes(host, port, pid, server.url, "/",
                    "/jobs/application_1_0001/tensorboard/data/x")
        for n in (8, 64):
            slow_clients(host, port, pid, server.url,
                         "/jobs/application_1_0001/tensorboard/data/x", n)
        # No redirect off-site: "\\evil.example" is taken by browsers as
        # "//evil.example".
        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args):
                return None
        opener = urllib.request.build_opener(NoRedirect)
        for target in ("jobs/%5C%5Cevil.example", "jobs/%2F%2Fevil.example",
                       "jobs/%5C%5Cevil.example/"):
            try:
                res = opener.open(server.url + target, timeout=5)
                status, location = res.status, res.headers.get("Location")
            except urllib.error.HTTPError as e:
                status, location = e.code, e.headers.get("Location")
            assert status == 404 and location is None, (target, status, location)
        try:
            res = opener.open(server.url + "jobs/application_1_0001", timeout=5)
            status, location = res.status, res.headers.get("Location")
        except urllib.error.HTTPError as e:
            status, location = e.code, e.headers.get("Location")
        assert status == 302 and location == "./application_1_0001/", (status, location)
    finally:
        server.stop()


def thousand_task_log(path, tasks=1000, lines=400):
    """An event log of a job of `tasks` workers that each sent `lines`
    metrics intervals: its record keeps about 350 points a task (the
    store's 8 MiB budget), tens of MB as /api/job?metrics=1 JSON."""
    with open(path, "w") as f:
        f.write(json.dumps({"time_ms": 1000, "event": "job_submitted", "job": {
            "app_id": "application_1_0002", "name": "thousand", "state": "RUNNING",
            "attempt": 1}}) + "\n")
        for i in range(tasks):
            f.write(json.dumps({"time_ms": 1001, "event": "task_requested", "task": {
                "type": "worker", "index": i, "attempt": 1, "state": "REQUESTED"}}) + "\n")
        fields = ["rss_bytes", "cpu_cores", "gpu_util_pct", "gpu_used_bytes"]
        for n in range(lines):
            row = {f"worker:{i}": [(200 + i + n) << 20, 0.75, 0, 0] for i in range(tasks)}
            f.write(json.dumps({"time_ms": 2000 + n * 10000, "event": "metrics",
                                "step_ms": 10000, "fields": fields, "tasks": row}) + "\n")


def test_a_thousand_tasks_metrics_cannot_hurt_tony_history(tmp_path):
    """/api/job?metrics=1&timeline=1 of a 1,000-task job, fetched by six
    clients at once, again and again: the answer (tens of MB) is streamed a
    few tasks at a time, so tony-history stays under 64 MiB above its idle
    RSS (the record loaded) and answers another client within a second."""
    history_dir = tmp_path / "history"
    history_dir.mkdir()
    thousand_task_log(history_dir / "application_1_0002.jsonl")
    # Under ASan, freed memory waits in a quarantine of 256 MiB before it
    # is reused, so any churn of allocations would read as growth: a small
    # quarantine leaves what the server holds (a build without ASan has
    # none).
    asan = os.environ.get("ASAN_OPTIONS", "detect_leaks=0")
    os.environ["ASAN_OPTIONS"] = asan + ":quarantine_size_mb=4:thread_local_quarantine_size_kb=64"
    try:
        server = HistoryServer(history_dir)
    finally:
        os.environ["ASAN_OPTIONS"] = asan
    try:
        # The record is loaded by the job's first request (its page).
        status, _, page = get(server.url + "jobs/application_1_0002/", timeout=60)
        assert status == 200, page[:500]
        watch = Watch(server.proc.pid, server.url)
        api = server.url + "jobs/application_1_0002/api/job?metrics=1&timeline=1"
        with urllib.request.urlopen(api, timeout=60) as res:
            body = res.read()
        size = len(body)
        first = json.loads(body)
        del body
        assert len(first["metrics"]["tasks"]) == 1000, list(first)[:10]
        assert len(first["timeline"]) == 1000, list(first["timeline"])[:10]
        points = first["metrics"]["tasks"]["worker:999"]["points"]
        assert points >= 100, points
        del first
        failures = []

        def fetch():
            for _ in range(3):
                try:
                    with urllib.request.urlopen(api, timeout=60) as res:
                        got = 0
                        while chunk := res.read(256 << 10):
                            got += len(chunk)
                            time.sleep(0.01)
                    if got < size // 2:
                        failures.append(f"only {got} bytes")
                except OSError as e:
                    failures.append(str(e))
        clients = [threading.Thread(target=fetch) for _ in range(6)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        watch.stop()
        assert not failures, failures[:3]
        print(f"/api/job?metrics=1&timeline=1: {size} bytes as JSON")
        watch.check("six clients reading a 1,000-task job's metrics")
    finally:
        server.stop()
