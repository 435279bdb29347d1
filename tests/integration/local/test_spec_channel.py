"""The cluster spec through the AM's spec channel (doc/architecture.md, "The
spec channel"), with real tony-am and tony-executor processes: every task of
a job of many tasks gets the whole spec, a restarted task's new address
reaches the others through the channel, and with the channel turned off
(TONY_SPEC_CHANNEL=off) the specs go over the registry's connections as
before. Asserted from the tasks' own output, their executors' logs and the
AM's log."""

import json
import re
import shutil
from pathlib import Path

import tonyjob

HERE = Path(__file__).resolve().parent
MANY = 50

FROM_CHANNEL = re.compile(
    r"cluster spec of attempt (\d+) \((\d+) bytes\) from the AM's spec channel")


def executor_log(out, task):
    return Path(out.task(task)["log_dir"], "executor.log").read_text(errors="replace")


def channel_specs(out, task):
    """(attempt, bytes) of every spec task's executor read from the channel."""
    return [(int(a), int(b)) for a, b in FROM_CHANNEL.findall(executor_log(out, task))]


def am_log(out):
    return (out.job_dir / "am.log").read_text(errors="replace")


def printed_spec(out, task):
    """The cluster spec file as the task printed it (SPEC {...})."""
    for line in out.task_stdout(task).splitlines():
        if line.startswith("SPEC "):
            return json.loads(line[len("SPEC "):])
    raise AssertionError(f"{task} printed no spec:\n{out.task_stdout(task)}")


def test_every_task_of_a_job_of_many_gets_the_whole_spec_through_the_channel(sandbox):
    # 50 workers that print their spec file and end: each must hold all 50
    # addresses, the ones the AM's status shows, read from the channel.
    path = sandbox.job(f'''name = "many"
framework = "tensorflow"

[code]
src_dir = "src"
command = "echo SPEC $(cat \\"$TONY_CLUSTER_SPEC_FILE\\")"

[tasks.worker]
instances = {MANY}
memory = "200m"

[cluster.local]
vcores = {MANY}
''')
    out = sandbox.submit(path, timeout=600)
    assert out.rc == 0, out.describe()
    st = out.status()
    assert st["state"] == "SUCCEEDED", out.describe()
    workers = sorted((t for t in st["tasks"] if t["type"] == "worker"),
                     key=lambda t: t["index"])
    assert len(workers) == MANY
    addresses = [f"{t['host']}:{t['port']}" for t in workers]
    assert len(set(addresses)) == MANY, addresses
    for i in range(MANY):
        task = f"worker:{i}"
        assert printed_spec(out, task) == {"worker": addresses}, task
        specs = channel_specs(out, task)
        assert len(specs) == 1 and specs[0][0] == 1, (task, executor_log(out, task))
    # The AM wrote one spec to each of the 50 channel connections.
    m = re.search(r"spec channel: (\d+) connections \((\d+) open\), (\d+) specs written",
                  am_log(out))
    assert m, am_log(out)[-3000:]
    assert int(m.group(1)) == MANY and int(m.group(3)) == MANY, m.group(0)
    assert tonyjob.wait_job_gone(out.job_dir, 10) == []


def lifecycle_job(sandbox):
    """chief + 2 workers running lifecycle_task.py; worker:1 fails on its
    first run and is restarted; the chief and worker:0 wait for the spec
    signal that says it moved."""
    path = sandbox.job('''name = "moved"
framework = "tensorflow"

[code]
src_dir = "src"
command = "exec python3 lifecycle_task.py --wait-spec"

[tasks.chief]
memory = "256m"
spec_signal = "USR1"

[tasks.worker]
instances = 2
memory = "256m"
command = "exec python3 lifecycle_task.py --fail worker:1:3 --fail-after 3 --wait-spec"
restart = "on-failure"
max_restarts = 2
spec_signal = "USR1"

[policy]
stop_grace = "2s"
''')
    shutil.copy(HERE / "lifecycle_task.py", sandbox.root / "src" / "lifecycle_task.py")
    return path


def test_a_restarted_tasks_new_address_reaches_the_others_through_the_channel(sandbox):
    out = sandbox.submit(lifecycle_job(sandbox), timeout=150)
    assert out.rc == 0, out.describe()
    w1 = out.task("worker:1")
    assert w1["restarts"] == 1 and w1["state"] == "SUCCEEDED", w1
    moved = f"{w1['host']}:{w1['port']}"
    for name in ("chief:0", "worker:0"):
        # Two specs on the one channel connection: the first, and the one
        # with worker:1's new address, which the task saw in its file.
        specs = channel_specs(out, name)
        assert [a for a, _ in specs] == [1, 1], (name, executor_log(out, name))
        text = out.task_stdout(name)
        m = re.search(r"^spec signals=(\d+) before=(.*) after=(.*)$", text, re.M)
        assert m and int(m.group(1)) >= 1, text
        before, after = json.loads(m.group(2)), json.loads(m.group(3))
        assert after["worker"][1] == moved, (before, after, moved)
        assert before["worker"][1] != moved, (before, moved)
        assert after["worker"][0] == before["worker"][0]
    # The restarted run started with the new spec, read from its own channel.
    assert len(channel_specs(out, "worker:1")) == 1, executor_log(out, "worker:1")
    assert tonyjob.wait_job_gone(out.job_dir, 10) == []


def test_with_the_channel_off_the_specs_go_over_the_registry_connections(sandbox):
    out = sandbox.submit(lifecycle_job(sandbox), timeout=150,
                         env={"TONY_SPEC_CHANNEL": "off"})
    assert out.rc == 0, out.describe()
    assert "TONY_SPEC_CHANNEL=off" in am_log(out), am_log(out)[-3000:]
    moved = "{host}:{port}".format(**out.task("worker:1"))
    for name in ("chief:0", "worker:0", "worker:1"):
        log = executor_log(out, name)
        assert "(no spec channel)" in log and not channel_specs(out, name), (name, log)
    for name in ("chief:0", "worker:0"):
        m = re.search(r"^spec signals=(\d+) before=(.*) after=(.*)$",
                      out.task_stdout(name), re.M)
        assert m and json.loads(m.group(3))["worker"][1] == moved, out.task_stdout(name)
    assert tonyjob.wait_job_gone(out.job_dir, 10) == []
