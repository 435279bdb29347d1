"""Node loss on a real YARN (fixture `nodeloss`: cluster.sh start --nodes 4,
NodeManagers of 1536 MB, so two 896 MB workers are on two hosts and the AM
shares a host with at most one). A NodeManager is killed with SIGKILL, and
so is every process of its containers, found by the process table: first
the AM's own (the next AM attempt takes the job over), then one that runs a
worker and not the AM: the job notices through the dropped executor
connection, names the node, and with an attempt left runs the next attempt
on the surviving nodes. Each test kills one node; they run in file order.
The last one starts a killed node's NodeManager again while a gang waits.
HADOOP_CONF_DIR, TONY_YARN_DIR and TONY_BIN come from ctest."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "yarn"))
import yarnlib as y  # noqa: E402

STATE = os.environ.get("TONY_YARN_DIR", "")
STEPS_DIR = os.path.join(y.ROOT, "tests", "integration", "ha")  # steps.py
CLUSTER_SH = os.path.join(y.ROOT, "scripts", "yarn", "cluster.sh")
RUNNING = re.compile(r"(worker:\d) RUNNING at ([0-9.]+):\d+")


def job(steps, attempts, am_attempts=1):
    d = tempfile.mkdtemp(prefix="tony-nodeloss-")
    path = os.path.join(d, "job.toml")
    am = f"\n[am]\nmax_app_attempts = {am_attempts}\n" if am_attempts > 1 else ""
    with open(path, "w") as f:
        f.write(f'''name = "nodeloss"
framework = "tensorflow"

[code]
src_dir = "{STEPS_DIR}"
command = "exec python3 steps.py {steps}"

[tasks.worker]
instances = 2
memory = "896m"
{am}
[policy]
max_attempts = {attempts}
stop_grace = "2s"
''')
    return path


def environ_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def pids_where(pred):
    return [int(p) for p in os.listdir("/proc")
            if p.isdigit() and int(p) != os.getpid() and pred(environ_of(p))]


def app_pids(app):
    """Every process of the application's containers, on any node (container
    ids may carry the RM's epoch: container_e01_...)."""
    rx = re.compile(rb"^CONTAINER_ID=container_(e\d+_)?" + app[len("application_"):].encode()
                    + rb"_")
    return pids_where(lambda env: any(rx.match(v) for v in env))


def am_pid(app):
    """The pid of the application's tony-am (one attempt's), from /proc."""
    for pid in app_pids(app):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if os.path.basename(f.read().split(b"\0")[0]) == b"tony-am":
                    return pid
        except OSError:
            continue
    return None


def am_host(app):
    pid = am_pid(app)
    for v in environ_of(pid) if pid else []:
        if v.startswith(b"NM_HOST="):
            return v[len(b"NM_HOST="):].decode()
    return None


def kill_node(host):
    """SIGKILL to the NodeManager of `host`, then to every process of its
    containers (their environment names the node), until none is left."""
    with open(os.path.join(STATE, "pids", f"nodemanager-{host}.pid")) as f:
        os.kill(int(f.read().strip()), signal.SIGKILL)
    mark = f"NM_HOST={host}".encode()

    def gone():
        for pid in pids_where(lambda env: mark in env):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return not pids_where(lambda env: mark in env)
    assert y.wait_until(gone, 30), f"processes of {host}'s containers survive SIGKILL"


def kill_a_workers_node(proc):
    """Once both workers of tony-submit `proc`'s job run, kills the node of
    one that does not share it with the AM. Returns (app, the node, what
    tony-submit printed so far)."""
    lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
    lines += y.read_until(proc, r"worker:\d RUNNING at", 60)
    text = "".join(lines)
    app = y.app_id_of(text)
    hosts = dict(RUNNING.findall(text))
    am = am_host(app)
    assert am, y.commands_of(app_pids(app))
    victims = sorted(h for h in hosts.values() if h != am)
    assert victims, f"every worker shares the AM's node {am}: {hosts}"
    kill_node(victims[0])
    return app, victims[0], text


def am_logs(app, lines=60):
    """The last lines of each attempt's am.log of `app`, on any node, for a
    failure's message: the cluster's logs go with the tier."""
    import glob
    parts = []
    for path in sorted(glob.glob(os.path.join(STATE, "nm-logs", "*", app, "container_*", "am.log"))):
        with open(path, errors="replace") as f:
            tail = f.readlines()[-lines:]
        parts.append(f"--- {path} ---\n" + "".join(tail))
    return "\n".join(parts) or f"(no am.log of {app} under {STATE}/nm-logs)"


def finish(proc):
    try:
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out


def test_the_ams_node_lost_restarts_the_am_which_takes_the_job_over():
    """The AM's own NodeManager killed with its containers (max_app_attempts
    = 2): the RM calls the node LOST after its expiry (10 s) and starts the
    next AM attempt on another node, which adopts the workers that still
    run; a worker that shared the AM's node is lost, and the job's next
    attempt replaces it. Either way the job SUCCEEDS, no process is left."""
    proc = y.start_submit([job(30, 2, am_attempts=2)])
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        lines += y.read_until(proc, r"worker:\d RUNNING at", 60)
        before = "".join(lines)
        app = y.app_id_of(before)
        hosts = dict(RUNNING.findall(before))
        am = am_host(app)
        assert am, y.commands_of(app_pids(app))
        # Killed once the saved state says RUNNING (else the next AM rightly
        # starts the job over).
        y.wait_saved_running(before)
        kill_node(am)
    finally:
        after = finish(proc)
    text = before + after
    assert proc.returncode == 0, text
    assert "AM attempt 2" in after, text
    assert "FINISHED/SUCCEEDED" in after, text
    survivors = sorted(t for t, h in hosts.items() if h != am)
    if len(survivors) == 2:  # no worker shared the AM's node
        assert "AM attempt 2 adopted 2 running tasks of attempt 1" in after, after
    else:  # the one there is lost; the next attempt runs the job again
        assert "AM attempt 2 adopted 1 running task of attempt 1" in after, after
        assert re.search(r"lost while the ApplicationMaster restarted", after), after
    assert y.wait_until(lambda: not app_pids(app), 60), y.commands_of(app_pids(app))


def test_a_lost_node_with_an_attempt_left_runs_the_next_attempt_on_the_others():
    proc = y.start_submit([job(10, 2)])
    try:
        app, victim, before = kill_a_workers_node(proc)
    finally:
        after = finish(proc)
    text = before + after
    assert proc.returncode == 0, text
    assert "FINISHED/SUCCEEDED" in text, text
    # The first attempt's diagnostic names the node.
    assert re.search(r"worker:\d lost: .*on " + re.escape(victim), text), text
    # The second attempt's workers run, on the surviving nodes only.
    second = dict(RUNNING.findall(after))
    assert sorted(second) == ["worker:0", "worker:1"], after
    assert victim not in second.values(), (victim, second)
    assert re.search(r"worker:0\s+SUCCEEDED", after), after
    assert re.search(r"worker:1\s+SUCCEEDED", after), after
    assert y.wait_until(lambda: not app_pids(app), 60), y.commands_of(app_pids(app))


def test_a_lost_node_without_an_attempt_left_fails_the_job_naming_it():
    proc = y.start_submit([job(60, 1)])
    try:
        app, victim, before = kill_a_workers_node(proc)
    finally:
        after = finish(proc)
    text = before + after
    assert proc.returncode == 1, text
    assert "FAILED" in text, text
    assert re.search(r"worker:\d lost: its executor's connection dropped.*on " +
                     re.escape(victim), text), text
    # Noticed through the executor's connection: the other worker was
    # stopped, not left to finish its 60 steps.
    assert not re.search(r"worker:\d\s+SUCCEEDED", after), after
    # The process table, not YARN's word: nothing of the job is left.
    assert y.wait_until(lambda: not app_pids(app), 60), y.commands_of(app_pids(app))


def live_nodes():
    """The nodes whose NodeManager runs (the tests above killed some)."""
    with open(os.path.join(STATE, "node-addresses")) as f:
        nodes = f.read().split()
    live = []
    for node in nodes:
        try:
            with open(os.path.join(STATE, "pids", f"nodemanager-{node}.pid")) as f:
                os.kill(int(f.read().strip()), 0)
            live.append(node)
        except (OSError, ValueError):
            pass
    return nodes, live


def test_a_gang_larger_than_the_cluster_waits_saying_why_and_runs_when_a_node_joins():
    """No allocation timeout by default (TonY waits; an autoscaler adds
    nodes because YARN shows the pending asks): one worker more than the
    live NodeManagers hold (one 896 MB worker per 1536 MB node, the AM
    beside one) waits, tony-submit says what is pending and why, and when a
    NodeManager joins (cluster.sh nm-start) the last worker gets it and the
    job succeeds."""
    nodes, live = live_nodes()
    if len(live) == len(nodes):  # run alone: make room for a node to join
        kill_node(live[-1])
        nodes, live = live_nodes()
    joining = next(n for n in nodes if n not in live)
    workers = len(live) + 1
    d = tempfile.mkdtemp(prefix="tony-nodeloss-wait-")
    path = os.path.join(d, "job.toml")
    with open(path, "w") as f:
        f.write(f'''name = "waits"
framework = "tensorflow"

[code]
src_dir = "{STEPS_DIR}"
command = "exec python3 steps.py 2"

[tasks.worker]
instances = {workers}
memory = "896m"
''')
    proc = y.start_submit([path])
    try:
        lines = y.read_until(proc, r"waiting for 1 of \d+ containers", 120)
        waited = "".join(lines)
        assert re.search(r"waiting for 1 of \d+ containers \(1 worker of 896 MiB",
                         lines[-1]), waited
        assert "headroom" in lines[-1] or "not placed them yet" in lines[-1], waited
        # What an autoscaler reads: YARN's own metrics count the pending ask.
        with urllib.request.urlopen(f"http://{y.rm_web()}/ws/v1/cluster/metrics",
                                    timeout=10) as r:
            metrics = json.load(r)["clusterMetrics"]
        assert metrics["pendingMB"] >= 896, metrics
        subprocess.run([CLUSTER_SH, "nm-start", joining, "--dir", STATE], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)
    finally:
        after = finish(proc)
    text = waited + after
    assert proc.returncode == 0, text
    assert "FINISHED/SUCCEEDED" in text, text
    hosts = set(h for _, h in RUNNING.findall(text))
    assert joining in hosts, (joining, hosts, text)


def test_the_ams_node_lost_with_no_attempt_left_ends_the_job_and_every_process():
    """The AM's own NodeManager killed with -9 (with its containers) and no
    AM attempt left: the RM fails the application after the node's expiry;
    tony-submit ends with a diagnostic naming what happened, and 5 s after
    it no process of the job is left on any node (the workers on the other
    node are stopped: their executors lose the AM)."""
    proc = y.start_submit([job(120, 1)])
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        lines += y.read_until(proc, r"worker:\d RUNNING at", 60)
        before = "".join(lines)
        app = y.app_id_of(before)
        am = am_host(app)
        assert am, y.commands_of(app_pids(app))
        kill_node(am)
    finally:
        after = finish(proc)
    text = before + after
    assert proc.returncode != 0, text
    assert re.search(r"FAILED", after), text
    assert re.search(r"diagnostics: .*(AM|ApplicationMaster|attempt)", after), text
    time.sleep(5)
    assert not app_pids(app), y.commands_of(app_pids(app))


def restart_dead_nodes():
    """Starts again the NodeManagers the tests before killed."""
    nodes, live = live_nodes()
    for node in nodes:
        if node not in live:
            subprocess.run([CLUSTER_SH, "nm-start", node, "--dir", STATE], check=True,
                           stdout=subprocess.DEVNULL, timeout=60)
    assert y.wait_until(lambda: len(y.running_nodes()) >= 3, 60), y.running_nodes()


def kill_pids(pids):
    for pid in pids:  # a failure leaves no orphans
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_the_ams_nodemanager_alone_killed_leaves_no_orphaned_am():
    """Only the NodeManager of the AM's node killed with -9; its containers'
    processes live on (as when a NodeManager crashes or is OOM-killed), and
    there is no AM attempt left. The RM fails the attempt after the node's
    expiry and answers the orphaned AM's next allocate so (no such attempt);
    tony-am must stop its executors and exit by itself: 5 s after
    tony-submit's end no process of the job is left on any node."""
    restart_dead_nodes()  # the tests above killed some
    proc = y.start_submit([job(120, 1)])
    app = None
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        lines += y.read_until(proc, r"worker:\d RUNNING at", 60)
        before = "".join(lines)
        app = y.app_id_of(before)
        am = am_host(app)
        assert am, y.commands_of(app_pids(app))
        with open(os.path.join(STATE, "pids", f"nodemanager-{am}.pid")) as f:
            os.kill(int(f.read().strip()), signal.SIGKILL)
        after = finish(proc)
        text = before + after
        assert proc.returncode != 0, text
        assert "FAILED" in after, text
        assert re.search(r"diagnostics: .*(AM|ApplicationMaster|attempt)", after), text
        time.sleep(5)
        left = y.commands_of(app_pids(app))
        assert not left, f"still running 5 s after tony-submit's end: {left}\n{am_logs(app)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_pids(app_pids(app) if app else [])


def test_the_ams_nodemanager_alone_killed_with_an_attempt_left_leaves_no_orphan():
    """As above, but a second AM attempt is allowed: the RM starts it on
    another node after the node's expiry, and it takes the job over (the
    workers of the live nodes are adopted; one beside the old AM is lost
    with its node and run again). The old attempt's tony-am, still running
    on the node without a NodeManager, is told its attempt is gone and
    exits by itself, leaving its tasks to the next attempt; whatever ran
    there with it is stopped. The job SUCCEEDS and 5 s after tony-submit's
    end no process of the job is left on any node."""
    restart_dead_nodes()
    proc = y.start_submit([job(30, 2, am_attempts=2)])
    app = None
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        lines += y.read_until(proc, r"worker:\d RUNNING at", 60)
        before = "".join(lines)
        app = y.app_id_of(before)
        am = am_host(app)
        old_am = am_pid(app)
        assert am and old_am, y.commands_of(app_pids(app))
        y.wait_saved_running(before)
        with open(os.path.join(STATE, "pids", f"nodemanager-{am}.pid")) as f:
            os.kill(int(f.read().strip()), signal.SIGKILL)
        after = finish(proc)
        text = before + after
        assert proc.returncode == 0, text
        assert "AM attempt 2" in after, text
        assert "FINISHED/SUCCEEDED" in after, text
        # The old attempt's end is not shown as the job's.
        assert not re.search(r"^tony: job \S+ FAILED", text, re.M), text
        # The old AM ended by itself, before the job did.
        assert not y.commands_of([old_am]), f"the old tony-am {old_am} outlived the job"
        time.sleep(5)
        left = y.commands_of(app_pids(app))
        assert not left, f"still running 5 s after tony-submit's end: {left}\n{am_logs(app)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_pids(app_pids(app) if app else [])
