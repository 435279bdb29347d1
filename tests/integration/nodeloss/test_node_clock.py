"""Nodes whose clock is off, on a real YARN (fixture `nodeclock`: the
node-loss tier's three NodeManagers of 1536 MB, node 3's clock an hour ahead
of everyone else's and node 2's an hour behind, through
TONY_YARN_NM_CLOCK=3:+1h,2:-1h: libfaketime under their NodeManagers). Node
3's NodeManager takes every container token the ResourceManager issues
(valid 10 min by the RM's clock) for expired and starts nothing: the job
names the node and its clock, avoids it, and with an attempt left runs the
next attempt on the other nodes. Node 2, behind, starts its containers.

Where the scheduler puts things is steered through the RM's REST API
(POST /ws/v1/cluster/nodes/<id>/resource, the dynamic node resource): a node
shrunk to 256 MB takes neither the AM (512 MB) nor a worker (896 MB). Nodes 2
and 3 start shrunk, so the AM and the first worker go to node 1; node 3 then
gets its 1536 MB back and is the only room for the second worker, as on a
busy cluster whose free node is the bad one; node 2 gets its memory back once
the first attempt failed, room for the next one. The last test leaves node 3
the only room for the AM. HADOOP_CONF_DIR, TONY_YARN_DIR and TONY_BIN come
from ctest."""

import contextlib
import getpass
import json
import os
import re
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "yarn"))
sys.path.insert(0, HERE)
import test_nodeloss as nl  # noqa: E402  (the job and the process-table helpers)
import yarnlib as y  # noqa: E402

HOST = os.environ.get("TONY_YARN_HOST", "127.0.0.1")
NODES = [HOST.rsplit(".", 1)[0] + "." + str(int(HOST.rsplit(".", 1)[1]) + i)
         for i in (1, 2, 3)]
FIRST, SPARE, SKEWED = NODES
FULL_MB = int(os.environ.get("TONY_YARN_NM_MEMORY_MB", "1536"))
CLOCK = re.compile(r"(worker:\d) could not be launched in container_\S+ on " + re.escape(SKEWED)
                   + r": .*node " + re.escape(SKEWED) + r"'s clock is about (59 min|1 h \d+ min)"
                   r" .* ahead of the ResourceManager's.*This token is expired")


def node_memory(node):
    with urllib.request.urlopen(f"http://{y.rm_web()}/ws/v1/cluster/nodes/{node}:45454",
                                timeout=10) as r:
        return json.load(r)["node"]["totalResource"]["memory"]


def set_memory(node, mb):
    """The RM's idea of a node's memory (its NodeManager is not told). An RM
    that has just started may still be becoming active: it answers 200 and
    changes nothing (its log says "ResourceManager is not active"), so this
    asks until the node shows the new size."""
    body = json.dumps({"resource": {"memory": mb, "vCores": 16}, "overCommitTimeout": -1})

    def applied():
        req = urllib.request.Request(
            f"http://{y.rm_web()}/ws/v1/cluster/nodes/{node}:45454/resource"
            f"?user.name={getpass.getuser()}",
            data=body.encode(), headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(req, timeout=10).read()
        return y.wait_until(lambda: node_memory(node) == mb, 2)
    assert y.wait_until(applied, 60, step=0.5), (node, node_memory(node), mb)


@contextlib.contextmanager
def shrunk(*nodes):
    """`nodes` shrunk; every node whole again on the way out."""
    for node in nodes:
        set_memory(node, 256)
    try:
        yield
    finally:
        for node in NODES:
            set_memory(node, FULL_MB)


def only_node_one():
    return shrunk(SPARE, SKEWED)


def start_on_node_one(attempts, steps):
    """tony-submit of the node-loss job, once its AM runs on node 1 and node 3
    is the only room for its second worker. Returns (proc, app, lines)."""
    proc = y.start_submit([nl.job(steps, attempts)])
    lines = y.read_until(proc, r"submitted application_", 120)
    app = y.app_id_of("".join(lines))
    assert y.wait_until(lambda: nl.am_host(app) is not None, 120), "no AM process"
    assert nl.am_host(app) == FIRST, (nl.am_host(app), FIRST)
    set_memory(SKEWED, FULL_MB)
    return proc, app, lines


def blacklisted(app):
    """The nodes the RM keeps the application's current attempt off."""
    with urllib.request.urlopen(f"http://{y.rm_web()}/ws/v1/cluster/apps/{app}/appattempts",
                                timeout=10) as r:
        attempts = json.load(r)["appAttempts"]["appAttempt"]
    return [n for n in attempts[-1].get("blacklistedNodes", "").split(",") if n]


def on_skewed_node():
    """Processes of any container on the skewed node (its environment says so)."""
    mark = f"NM_HOST={SKEWED}".encode()
    return nl.pids_where(lambda env: mark in env)


def test_a_node_clock_ahead_fails_the_attempt_naming_it_and_the_next_runs_elsewhere():
    with only_node_one():
        proc, app, lines = start_on_node_one(2, 3)
        try:
            lines += y.read_until(proc, r"could not be launched", 120)
            # Node 3 is the only room for the next attempt's second worker
            # until node 2 is back: the RM must hold it in the job's
            # blacklist, or that worker would go there again.
            assert y.wait_until(lambda: SKEWED in blacklisted(app), 30), blacklisted(app)
            set_memory(SPARE, FULL_MB)
        finally:
            after = nl.finish(proc)
    text = "".join(lines) + after
    assert proc.returncode == 0, text
    assert "FINISHED/SUCCEEDED" in text, text
    # Why the first attempt failed: the node, its clock, YARN's own words.
    assert re.search(r"attempt 2 starts \(attempt 1 failed: " + CLOCK.pattern, text), text
    # The second attempt's workers run on the other nodes.
    second = dict(nl.RUNNING.findall(text.split("attempt 2 starts", 1)[1]))
    assert sorted(second) == ["worker:0", "worker:1"], text
    assert SKEWED not in second.values(), (SKEWED, second)
    # A NodeManager whose clock is behind starts its worker like any other.
    assert SPARE in second.values(), (SPARE, second)
    assert re.search(r"worker:0\s+SUCCEEDED", after), after
    assert re.search(r"worker:1\s+SUCCEEDED", after), after
    # The process table: nothing of the job is left, nothing runs there.
    assert y.wait_until(lambda: not nl.app_pids(app), 60), y.commands_of(nl.app_pids(app))
    assert not on_skewed_node(), y.commands_of(on_skewed_node())


def test_a_node_clock_ahead_without_an_attempt_left_fails_the_job_naming_it():
    with only_node_one():
        proc, app, lines = start_on_node_one(1, 60)
        after = nl.finish(proc)
    text = "".join(lines) + after
    assert proc.returncode == 1, text
    assert re.search(r"FINISHED/FAILED|job \S+ FAILED", text), text
    assert re.search(r"diagnostics: " + CLOCK.pattern, text), text
    # The other worker was stopped, not left to run its 60 steps.
    assert not re.search(r"worker:\d\s+SUCCEEDED", after), after
    assert y.wait_until(lambda: not nl.app_pids(app), 60), y.commands_of(nl.app_pids(app))
    assert not on_skewed_node(), y.commands_of(on_skewed_node())


def test_a_node_clock_ahead_under_the_am_fails_the_job_at_once_saying_so():
    # Nodes 1 and 2 shrunk: node 3 is the only room for the AM, which the
    # ResourceManager starts itself ([am] max_app_attempts = 1).
    with shrunk(FIRST, SPARE):
        code, out, _ = y.submit([nl.job(3, 2)])
    app = y.app_id_of(out)
    assert code == 1, out
    assert "FAILED/FAILED" in out, out
    assert re.search(r"This token is expired", out), out
    assert re.search(r"the ResourceManager could not start the AM: the clock of the node it "
                     r"chose is about (59 min|1 h \d+ min) .*ahead of the ResourceManager's",
                     out), out
    assert y.wait_until(lambda: not nl.app_pids(app), 60), y.commands_of(nl.app_pids(app))
    assert not on_skewed_node(), y.commands_of(on_skewed_node())
