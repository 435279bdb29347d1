"""tony on a YARN with ResourceManager HA (fixture `ha`: cluster.sh start
--ha, two RMs with ZooKeeper and work-preserving recovery). The active RM is
killed with SIGKILL mid-job and at submit time; the job goes on and
tony-submit follows it to its final table. HADOOP_CONF_DIR, TONY_YARN_DIR and
TONY_BIN come from ctest."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "yarn"))
import yarnlib as y  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STATE = os.environ.get("TONY_YARN_DIR", "")
CLUSTER_SH = os.path.join(y.ROOT, "scripts", "yarn", "cluster.sh")


def conf_value(name):
    """A property of the cluster's yarn-site.xml."""
    with open(os.path.join(os.environ["HADOOP_CONF_DIR"], "yarn-site.xml")) as f:
        m = re.search(r"<name>" + re.escape(name) + r"</name><value>([^<]*)</value>",
                      f.read())
    return m.group(1) if m else None


def rm_state(rm_id):
    """ACTIVE, STANDBY or DOWN, from the RM's own REST API."""
    web = conf_value("yarn.resourcemanager.webapp.address." + rm_id)
    try:
        with urllib.request.urlopen(f"http://{web}/ws/v1/cluster/info", timeout=3) as r:
            return json.load(r)["clusterInfo"]["haState"]
    except (OSError, ValueError, KeyError):
        return "DOWN"


def rm_pid(rm_id):
    name = "resourcemanager" if rm_id == "rm1" else "resourcemanager2"
    with open(os.path.join(STATE, "pids", name + ".pid")) as f:
        return int(f.read().strip())


def active_rm():
    assert y.wait_until(lambda: any(rm_state(i) == "ACTIVE" for i in ("rm1", "rm2")), 60), \
        "no active ResourceManager"
    return next(i for i in ("rm1", "rm2") if rm_state(i) == "ACTIVE")


def gone(pid):
    """The process ended (no such pid, or a zombie waiting for its parent)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def kill_active():
    """SIGKILL to the active RM; returns its id."""
    victim = active_rm()
    os.kill(rm_pid(victim), signal.SIGKILL)
    return victim


def rm_log(rm_id):
    name = "resourcemanager" if rm_id == "rm1" else "resourcemanager2"
    return os.path.join(STATE, "logs", name + ".log")


def restart(rm_id):
    """Starts a killed RM again, so the next test finds the pair whole: done
    once its elector joined the election (the RM's log says it took a side;
    its REST API says STANDBY before that already)."""
    # The killed JVM first: one in uninterruptible I/O (its state store's
    # fsync on a busy disk) takes SIGKILL only when that returns, and until
    # then `cluster.sh rm-start` rightly says it still runs.
    pid = rm_pid(rm_id)
    assert y.wait_until(lambda: gone(pid), 60), f"{rm_id} (pid {pid}) outlived SIGKILL"
    log = rm_log(rm_id)
    offset = os.path.getsize(log) if os.path.exists(log) else 0
    subprocess.run([CLUSTER_SH, "rm-start", rm_id, "--dir", STATE], check=True,
                   stdout=subprocess.DEVNULL, timeout=60)

    def joined():
        with open(log, errors="replace") as f:
            f.seek(offset)
            text = f.read()
        return re.search(r"Transitioned to (standby|active) state", text) is not None
    assert y.wait_until(joined, 120, step=0.5), rm_id + " did not join the election"


def steps_job(steps):
    d = tempfile.mkdtemp(prefix="tony-ha-")
    path = os.path.join(d, "job.toml")
    with open(path, "w") as f:
        f.write(f'''name = "ha-steps"
framework = "tensorflow"

[code]
src_dir = "{HERE}"
command = "exec python3 steps.py {steps}"

[tasks.worker]
instances = 2
memory = "256m"
''')
    return path


def stdouts(app, want):
    """The tasks' aggregated stdout once `want(text)` holds."""
    said = [""]

    def aggregated():
        said[0] = y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")
        return want(said[0])
    y.wait_until(aggregated, 90, step=1)
    return said[0]


def test_a_job_succeeds_when_the_active_rm_is_killed_mid_job():
    proc = y.start_submit([steps_job(25)])
    victim = None
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        time.sleep(2)  # a few steps into the training
        victim = kill_active()
        out, _ = proc.communicate(timeout=300)
        text = "".join(lines) + out
        assert proc.returncode == 0, text
        assert re.search(r"FINISHED/SUCCEEDED", text), text
        # The tasks' final states, from the AM that kept running through the
        # failover (a terminal gets them as a table).
        assert re.search(r"worker:0\s+SUCCEEDED", text), text
        assert re.search(r"worker:1\s+SUCCEEDED", text), text
        app = y.app_id_of(text)
        # Work-preserving: each task ran once, every step once.
        logs = stdouts(app, lambda t: t.count("TASK_DONE") >= 2)
        assert logs.count("TASK_START") == 2, logs[-3000:]
        assert logs.count("STEP 24\n") == 2, logs[-3000:]
        # The RM that took over had lost the AM's registration: the AM
        # registered again with it (work-preserving failover).
        said = [""]

        def am_log():
            said[0] = y.yarn_cli("logs", "-applicationId", app, "-log_files", "am.log")
            return "registered again" in said[0]
        assert y.wait_until(am_log, 60, step=1), said[0][-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # The next tests need both RMs, whatever this one found.
        if victim is not None:
            restart(victim)


def test_submit_finds_the_other_rm_when_the_active_one_is_down():
    victim = kill_active()
    try:
        code, out, _ = y.submit([steps_job(2)], timeout=300)
        assert code == 0, out
        assert "FINISHED/SUCCEEDED" in out, out
    finally:
        restart(victim)


def dead_port():
    """A port that refuses: bound, never listening, and held (closed, it
    was taken once by another test's process that accepted and kept quiet,
    so tony-submit saw no answer instead of a refusal)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s


def test_both_rms_down_is_a_clear_error_in_bounded_time():
    """No cluster needed: an HA configuration whose two RMs refuse."""
    conf = tempfile.mkdtemp(prefix="tony-ha-down-")
    held = [dead_port(), dead_port()]
    ports = [s.getsockname()[1] for s in held]
    props = {
        "yarn.resourcemanager.ha.enabled": "true",
        "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
        "yarn.resourcemanager.address.rm1": f"127.0.0.1:{ports[0]}",
        "yarn.resourcemanager.address.rm2": f"127.0.0.1:{ports[1]}",
    }
    with open(os.path.join(conf, "yarn-site.xml"), "w") as f:
        f.write("<configuration>\n")
        for k, v in props.items():
            f.write(f"<property><name>{k}</name><value>{v}</value></property>\n")
        f.write("</configuration>\n")
    with open(os.path.join(conf, "core-site.xml"), "w") as f:
        f.write("<configuration></configuration>\n")
    env = dict(os.environ, HADOOP_CONF_DIR=conf)
    try:
        code, out, _ = y.submit([steps_job(1)], timeout=120, env=env)
    finally:
        for s in held:
            s.close()
    assert code == 3, out
    assert "cannot reach the ResourceManagers: no ResourceManager answered" in out, out
    for rm_id, port in zip(("rm1", "rm2"), ports):
        assert f"ResourceManager {rm_id} at 127.0.0.1:{port}" in out, out


def restart_zookeeper():
    subprocess.run([CLUSTER_SH, "zk-start", "--dir", STATE], check=True,
                   stdout=subprocess.DEVNULL, timeout=60)
    active_rm()  # an RM took the lead again


def test_a_job_whose_two_rms_are_down_for_30_s_fails_clearly_and_leaves_nothing():
    """Both RMs killed for 30 s mid-job: the AM's allocate finds no RM for
    its rm_failure_limit (30 s), the job ends FAILED with that diagnostic,
    tony-submit follows it to the end, no process is left. The AM tries to
    unregister for another 30 s: when the restarted RMs take longer than
    that to come back (two loaded cores), YARN records the attempt as
    FAILED instead of FINISHED/FAILED, and tony-submit still shows the AM's
    own diagnostic (it keeps following while the AM answers, and 60 s
    after)."""
    import test_am_attempts as attempts
    proc = y.start_submit([steps_job(120)])
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        app = y.app_id_of("".join(lines))
        for rm_id in ("rm1", "rm2"):
            os.kill(rm_pid(rm_id), signal.SIGKILL)
        time.sleep(30)
        for rm_id in ("rm1", "rm2"):
            restart(rm_id)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = "".join(lines) + out
    assert proc.returncode == 1, text
    assert re.search(r"(FINISHED|FAILED)/FAILED", text), text
    assert "the resource manager did not answer allocate for 30 s" in text, text
    assert re.search(r"ResourceManager scheduler rm1 at .*ResourceManager scheduler rm2 at",
                     text), text
    assert y.wait_until(lambda: not attempts.job_processes(app), 60), \
        y.commands_of(attempts.job_processes(app))


def test_a_job_whose_rms_stay_down_ends_with_its_ams_final_status():
    """Both RMs killed for good mid-job: the AM gives up on them after its
    rm_failure_limit (30 s), tries to unregister for 30 s more and exits;
    tony-submit keeps following while the AM answers, then waits 60 s for an
    RM, and ends with the AM's own final status and diagnostic (exit 1, not
    "lost the ResourceManager"), saying YARN's record is unknown."""
    import test_am_attempts as attempts
    proc = y.start_submit([steps_job(300)])
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        app = y.app_id_of("".join(lines))
        for rm_id in ("rm1", "rm2"):
            os.kill(rm_pid(rm_id), signal.SIGKILL)
        out, _ = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for rm_id in ("rm1", "rm2"):
            restart(rm_id)
    text = "".join(lines) + out
    assert proc.returncode == 1, text
    assert "FAILED (its AM's final status: no ResourceManager answered for 60 s" in text, text
    assert "lost the ResourceManager" not in text, text
    assert "the resource manager did not answer allocate for 30 s" in text, text
    assert y.wait_until(lambda: not attempts.job_processes(app), 90), \
        y.commands_of(attempts.job_processes(app))


def test_a_job_goes_on_when_zookeeper_is_down_for_10_s():
    """ZooKeeper killed mid-job: both RMs lose the lead (STANDBY) within its
    4 s session timeout; back after 10 s, one takes over, recovers the
    application from the store and the AM registers again: the job
    SUCCEEDS and its tasks ran once, every step once. The AM gives up on
    the RMs 30 s after its first refused allocate (rm_failure_limit), and
    the election and recovery after ZooKeeper returns took over 14 s on
    two loaded cores, so the outage is 10 s, not 20."""
    proc = y.start_submit([steps_job(40)])
    zk_down = False
    try:
        lines = y.read_until(proc, r"worker:\d RUNNING at", 180)
        with open(os.path.join(STATE, "pids", "zookeeper.pid")) as f:
            os.kill(int(f.read().strip()), signal.SIGKILL)
        zk_down = True
        assert y.wait_until(lambda: all(rm_state(i) == "STANDBY" for i in ("rm1", "rm2")),
                            30), (rm_state("rm1"), rm_state("rm2"))
        time.sleep(20)
        restart_zookeeper()
        zk_down = False
        out, _ = proc.communicate(timeout=300)
    finally:
        if zk_down:  # the next test needs it
            restart_zookeeper()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = "".join(lines) + out
    assert proc.returncode == 0, text
    assert "FINISHED/SUCCEEDED" in text, text
    app = y.app_id_of(text)
    logs = stdouts(app, lambda t: t.count("TASK_DONE") >= 2)
    assert logs.count("TASK_START") == 2, logs[-3000:]
    assert logs.count("STEP 39\n") == 2, logs[-3000:]
