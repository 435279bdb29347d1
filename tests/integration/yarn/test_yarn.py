"""tony on a real YARN: the local ResourceManager + NodeManager (+ HDFS for
staging) started by scripts/yarn/cluster.sh (ctest fixture `yarn`)."""

import os
import re
import shutil
import subprocess
import tempfile
import time

import yarnlib as y


def test_env_check_job_succeeds_on_yarn():
    code, out, secs = y.submit([y.env_check_job()])
    assert code == 0, out
    app = y.app_id_of(out)
    st = y.app_status(app)
    assert st["State"] == "FINISHED", st
    assert st["Final-State"] == "SUCCEEDED", st
    assert st["Application-Type"] == "TENSORFLOW", st
    # Every task saw a complete environment and reached every peer.
    # The NodeManager aggregates the logs a moment after the application ends.
    said = []

    def aggregated():
        said[:] = [y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")]
        return said[0].count("CHECK_ENV_SUMMARY") == 4
    y.wait_until(aggregated, 60)
    logs = said[0]
    assert logs.count("CHECK_ENV_SUMMARY") == 4, logs[-3000:]
    assert '"failed": 0' in logs or "FAILED [" not in logs, logs[-3000:]


def across_hosts_job(tmp_path, framework):
    """Four workers of check_env.py, each so large that a node holds two at
    most: the tasks land on at least two hosts, and (four tasks, at most
    three nodes) two of them share one."""
    nodes = y.running_nodes()
    assert len(nodes) >= 2, f"the cluster has {len(nodes)} node(s); this test needs several"
    per_node = min(n["availableVirtualCores"] + n["usedVirtualCores"] for n in nodes)
    vcores = per_node // 3 + 1
    job = tmp_path / "job.toml"
    job.write_text(f"""
name = "across-hosts-{framework}"
framework = "{framework}"
[code]
src_dir = "{os.path.dirname(y.env_check_job())}"
command = "python3 check_env.py --expect-framework {framework} --expect-types worker:4"
[tasks.worker]
instances = 4
memory = "256m"
vcores = {vcores}
""")
    return str(job)


def check_across_hosts(out, code):
    assert code == 0, out
    summaries = y.env_summaries(y.app_id_of(out), 4)
    assert all(s["ok"] for s in summaries), summaries
    per_node = {}
    for s in summaries:
        per_node.setdefault(s["node"], []).append(s["task"])
    # The tasks' own NM_HOST: several hosts, one of them with two tasks, so
    # LOCAL_RANK 1 and LOCAL_WORLD_SIZE 2 (or Horovod's local slots) were
    # checked by the tasks themselves against CLUSTER_SPEC.
    assert len(per_node) >= 2, per_node
    assert max(len(tasks) for tasks in per_node.values()) == 2, per_node


def test_pytorch_ranks_are_right_across_hosts(tmp_path):
    code, out, _ = y.submit([across_hosts_job(tmp_path, "pytorch")])
    check_across_hosts(out, code)


def test_horovod_slots_are_right_across_hosts(tmp_path):
    code, out, _ = y.submit([across_hosts_job(tmp_path, "horovod")])
    check_across_hosts(out, code)


def test_a_default_sized_job_spreads_over_the_nodes(tmp_path):
    """Four small workers (256 MB, 1 vcore: a node could hold them all)
    land on at least two hosts, as TonY's and Spark's do: each node is asked
    for its share, strictly at first (the first node to heartbeat took the
    whole gang before). Read from the tasks' own NM_HOST."""
    nodes = y.running_nodes()
    assert len(nodes) >= 2, f"the cluster has {len(nodes)} node(s); this test needs several"
    job = tmp_path / "job.toml"
    job.write_text(f"""
name = "spread"
framework = "tensorflow"
[code]
src_dir = "{os.path.dirname(y.env_check_job())}"
command = "python3 check_env.py --expect-framework tensorflow --expect-types worker:4"
[tasks.worker]
instances = 4
memory = "256m"
""")
    code, out, _ = y.submit([str(job)])
    assert code == 0, out
    summaries = y.env_summaries(y.app_id_of(out), 4)
    hosts = {s["node"] for s in summaries}
    assert len(hosts) >= 2, summaries


def placement_job(tmp_path, name, workers, extra):
    job = tmp_path / f"{name}.toml"
    job.write_text(f"""
name = "{name}"
framework = "tensorflow"
[code]
src_dir = "{os.path.dirname(y.env_check_job())}"
command = "python3 check_env.py --expect-framework tensorflow --expect-types worker:{workers}"
[tasks.worker]
instances = {workers}
memory = "256m"
{extra}
""")
    return str(job)


def test_placement_pack_keeps_a_small_gang_on_one_node(tmp_path):
    """placement = "pack": each node is asked for the whole gang, so the
    first node to heartbeat with room takes all four small workers (what
    every job did before spread placement), e.g. for NCCL on one host."""
    assert len(y.running_nodes()) >= 2
    code, out, _ = y.submit([placement_job(tmp_path, "pack", 4, 'placement = "pack"')])
    assert code == 0, out
    summaries = y.env_summaries(y.app_id_of(out), 4)
    hosts = {s["node"] for s in summaries}
    assert len(hosts) == 1, summaries


def test_max_per_node_puts_each_task_on_its_own_node_or_refuses(tmp_path):
    """max_per_node = 1: one worker per node, however small, even packed; a gang the
    listed nodes cannot hold ends at once with the numbers instead of
    waiting for ever. The cluster's ResourceManager enables placement
    constraints (tests/integration/CMakeLists.txt), so the AM asks with a
    SchedulingRequest, YARN's anti-affinity, and its log says so."""
    handler = y.conf_value("yarn-site.xml",
                           "yarn.resourcemanager.placement-constraints.handler")
    assert handler == "scheduler", handler
    k = len(y.running_nodes())
    assert k >= 2, f"the cluster has {k} node(s); this test needs several"
    code, out, _ = y.submit([placement_job(tmp_path, "too-many", k + 1, "max_per_node = 1")],
                            timeout=120)
    assert code == 1, out
    assert (f"tasks.worker has {k + 1} tasks, at most 1 per node (max_per_node), which "
            f"needs {k + 1} nodes, but the ResourceManager listed {k} running") in out, out
    # Packed, as it would be on one node, but capped: one on each node.
    code, out, _ = y.submit([placement_job(tmp_path, "one-each", k,
                                           'placement = "pack"\nmax_per_node = 1')])
    assert code == 0, out
    app = y.app_id_of(out)
    summaries = y.env_summaries(app, k)
    hosts = [s["node"] for s in summaries]
    assert len(set(hosts)) == k, summaries
    am_log = y.yarn_cli("logs", "-applicationId", app, "-log_files", "am.log")
    assert (f"placement of worker: {k} × 256 MiB, 1 vcores, anti-affinity by "
            "SchedulingRequest (at most 1 per node") in am_log, am_log[-3000:]
    # A capped task that fails is asked for again by the same request, its
    # count from 0 to 1 (the one change YARN allows), and lands on the node
    # its first container left.
    marker = tmp_path / "worker1-failed-once"
    command = (f'command = \'if [ "$TASK_INDEX" = 1 ] && [ ! -e {marker} ]; then '
               f'touch {marker}; exit 3; fi; echo "RAN_ON $NM_HOST"; sleep 8\'')
    code, out, _ = y.submit([placement_job(tmp_path, "restart", k,
                                           'max_per_node = 1\nrestart = "on-failure"\n' +
                                           command)])
    assert code == 0 and marker.exists(), out
    assert "worker:1 RUNNING" in out and "(restart 1)" in out, out
    app = y.app_id_of(out)
    ran_on = []

    def all_ran():
        text = y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")
        ran_on[:] = re.findall(r"^RAN_ON (\S+)$", text, re.M)
        return len(ran_on) >= k
    assert y.wait_until(all_ran, 60, step=1), ran_on
    assert len(ran_on) == k and len(set(ran_on)) == k, ran_on


def test_a_task_over_its_memory_is_killed_and_said_so():
    # worker:1 holds 700 MiB in its 256 MiB container; the others wait.
    code, out, _ = y.submit([
        "--set", 'code.command="sleep 120"',
        "--set", 'tasks.worker.command="if [ $TASK_INDEX = 1 ]; then exec python3 -c '
                 "'b = bytearray(700 << 20); import time; time.sleep(120)'; fi; sleep 120\"",
        y.env_check_job()], timeout=110)
    assert code == 1, out
    assert "worker:1" in out, out
    assert "killed for exceeding its memory limit (exit status -104)" in out, out
    assert "ask for more memory" in out, out
    st = y.app_status(y.app_id_of(out))
    assert st["Final-State"] == "FAILED", st


def test_pytorch_environment_on_yarn():
    code, out, _ = y.submit([
        "--set", "framework=pytorch",
        "--set", 'code.command="python3 check_env.py --expect-framework pytorch '
                 '--expect-types chief:1,worker:2,ps:1"',
        y.env_check_job()])
    assert code == 0, out
    st = y.app_status(y.app_id_of(out))
    assert st["Application-Type"] == "PYTORCH", st


def test_pytorch_ddp_example_trains_on_yarn():
    code, out, _ = y.submit([os.path.join(y.ROOT, "examples", "pytorch", "job.toml")],
                            timeout=600)
    assert code == 0, out
    assert y.app_status(y.app_id_of(out))["Final-State"] == "SUCCEEDED"


def test_tensorflow_multiworker_example_trains_on_yarn():
    code, out, _ = y.submit([os.path.join(y.ROOT, "examples", "tensorflow", "job.toml")],
                            timeout=900)
    assert code == 0, out
    assert y.app_status(y.app_id_of(out))["Final-State"] == "SUCCEEDED"


def test_failing_worker_fails_the_application_and_leaves_nothing():
    code, out, secs = y.submit([
        "--set", 'code.command="sleep 120"',
        "--set", 'tasks.worker.command="if [ $TASK_INDEX = 1 ]; then echo dying >&2; '
                 'exit 3; fi; sleep 120"',
        y.env_check_job()])
    assert code == 1, out
    app = y.app_id_of(out)
    assert secs < 60, f"took {secs:.1f} s to fail:\n{out}"
    st = y.app_status(app)
    assert st["State"] == "FINISHED", st
    assert st["Final-State"] == "FAILED", st
    assert "worker:1" in st.get("Diagnostics", "") or "worker:1" in out, (st, out)
    assert "exit" in out and "3" in out, out
    # No container of the job runs any more, no process of it is left.
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)
    containers = y.yarn_cli("container", "-list", app.replace("application_", "appattempt_")
                            + "_000001")
    assert "RUNNING" not in containers, containers


def test_ctrl_c_kills_the_application_and_leaves_nothing():
    proc = y.start_submit(["--set", 'code.command="sleep 300"', y.env_check_job()])
    try:
        lines = y.read_until(proc, r"RUNNING at", 120)
        app = y.app_id_of("".join(lines))
        # Each running task is guarded by tony-guard, shipped beside tony-executor.
        assert y.wait_until(lambda: "tony-guard" in y.commands_of(y.job_processes(app)), 10), \
            y.commands_of(y.job_processes(app))
        y.interrupt(proc)
        rest, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, "".join(lines) + rest
    st = y.app_status(app)
    assert st["State"] == "KILLED" or st["Final-State"] == "KILLED", st
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def test_asking_for_more_than_the_cluster_maximum_fails_at_once():
    before = y.yarn_cli("application", "-list", "-appStates", "ALL")
    code, out, secs = y.submit(["--set", "tasks.worker.memory=\"64g\"", y.env_check_job()])
    assert code == 2, out
    assert secs < 30, secs
    assert "each worker task asks for 65536 MiB" in out, out
    assert "largest container this cluster grants" in out, out
    after = y.yarn_cli("application", "-list", "-appStates", "ALL")
    assert after.count("env-check") == before.count("env-check"), "an application was submitted"


def test_unreachable_resource_manager_exits_3_quickly():
    conf = tempfile.mkdtemp(prefix="tony-dead-rm-")
    try:
        for name in ("core-site.xml",):
            shutil.copy(os.path.join(os.environ["HADOOP_CONF_DIR"], name), conf)
        with open(os.path.join(conf, "yarn-site.xml"), "w") as f:
            f.write("<configuration><property><name>yarn.resourcemanager.address</name>"
                    "<value>127.0.0.1:1</value></property></configuration>")
        code, out, secs = y.submit(["--hadoop-conf", conf, y.env_check_job()], timeout=120)
    finally:
        shutil.rmtree(conf, ignore_errors=True)
    assert code == 3, out
    assert secs < 45, f"{secs:.1f} s"
    assert "127.0.0.1:1" in out, out
    assert "ResourceManager" in out, out


def test_kill_and_status_work_on_their_own():
    code, out, _ = y.submit(["--detach", "--set", 'code.command="sleep 300"',
                             y.env_check_job()])
    assert code == 0, out
    app = y.app_id_of(out)
    status = subprocess.run([y.SUBMIT, "--status", app], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=60)
    assert status.returncode == 0, status.stdout
    assert app in status.stdout and "state:" in status.stdout, status.stdout
    kill = subprocess.run([y.SUBMIT, "--kill", app], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60)
    assert kill.returncode == 0, kill.stdout
    assert y.wait_until(lambda: y.app_status(app)["State"] == "KILLED", 30)
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def test_a_job_over_the_queues_maximum_is_warned_at_submit_and_waits():
    """A gang larger than the whole cluster (the default queue's maximum is
    100%) is submitted, not refused, with a warning: clusters grow. It waits
    until killed."""
    nodes = y.running_nodes()
    total_mb = sum(n["availMemoryMB"] + n["usedMemoryMB"] for n in nodes)
    workers = total_mb // 1024 + 1
    code, out, _ = y.submit(["--detach", "--set", f"tasks.worker.instances={workers}",
                             "--set", 'tasks.worker.memory="1g"',
                             "--set", 'code.command="sleep 300"', y.env_check_job()])
    assert code == 0, out
    app = y.app_id_of(out)
    try:
        assert (f"more than queue 'default' may ever use on today's cluster: 100% of "
                f"{total_mb} MiB = {total_mb} MiB") in out, out
        assert "waits until the cluster grows" in out, out
        assert y.app_status(app)["State"] in ("ACCEPTED", "RUNNING"), y.app_status(app)
    finally:
        subprocess.run([y.SUBMIT, "--kill", app], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def test_the_job_secret_travels_in_container_tokens_only():
    """The secret of the AM's gate: kept by tony-submit in a 0600 file, in
    every container's token file, and in no launch script, command line or
    environment (doc/architecture.md, "The job secret")."""
    code, out, _ = y.submit(["--detach", "--set", 'code.command="sleep 300"',
                             y.env_check_job()])
    assert code == 0, out
    app = y.app_id_of(out)
    try:
        kept = os.path.join(os.path.expanduser("~"), ".tony", "secrets", app)
        assert os.stat(kept).st_mode & 0o777 == 0o600, oct(os.stat(kept).st_mode)
        assert os.stat(os.path.dirname(kept)).st_mode & 0o777 == 0o700
        secret = open(kept, "rb").read()
        assert len(secret) == 64, secret
        # Every node's local dirs are under nm-local/ (one node: nm-local/
        # itself; several: nm-local/<address>/, scripts/yarn/lib.sh).
        app_dir = os.path.join(os.environ["TONY_YARN_DIR"], "nm-local")

        def files(name):
            found = []
            for d, _, names in os.walk(app_dir):
                if app in d and name in names:
                    found.append(os.path.join(d, name))
            return found
        # The AM and the four executors' containers are up, their token
        # files written (a NodeManager creates the file, then fills it: one
        # was read empty once in CI).
        def written(path):
            try:
                with open(path, "rb") as f:
                    return len(f.read()) > 0
            except OSError:
                return False

        assert y.wait_until(lambda: len(files("container_tokens")) >= 5 and
                            all(written(p) for p in files("container_tokens")), 120), \
            files("container_tokens")
        for path in files("container_tokens"):
            assert secret in open(path, "rb").read(), path
        scripts = files("launch_container.sh")
        assert len(scripts) >= 5, scripts
        for path in scripts:
            assert secret not in open(path, "rb").read(), path
        for pid in y.job_processes(app):
            for what in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{pid}/{what}", "rb") as f:
                        assert secret not in f.read(), (pid, what)
                except OSError:
                    pass
    finally:
        kill = subprocess.run([y.SUBMIT, "--kill", app], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)
    assert kill.returncode == 0, kill.stdout
    assert not os.path.exists(kept), "--kill leaves the kept secret behind"
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)



def venv_job(tmp_path, archive, vcores):
    job = tmp_path / "venv-job.toml"
    job.write_text(f"""
name = "venv-cache"
framework = "standalone"
[code]
src_dir = false
python_venv = "{archive}"
command = 'echo "VENV node=$NM_HOST at=$(readlink -f venv)"'
[tasks.worker]
instances = 4
memory = "256m"
vcores = {vcores}
""")
    return str(job)


def test_an_unchanged_venv_is_localized_once_per_node_across_jobs(tmp_path):
    """The environment archive is a PRIVATE local resource at a path named by
    its content: a second job with the same archive finds it in the
    NodeManager's per-user cache instead of localizing it again (an
    APPLICATION resource would be unpacked anew under each job's appcache)."""
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    python = env / "bin" / "python3"
    python.write_text("#!/bin/sh\nexec python3 \"$@\"\n")
    python.chmod(0o755)
    archive = tmp_path / "env.tgz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(env), "."], check=True)
    # Four tasks, a node holding two at most: each job uses two nodes or
    # more of three, so the two jobs share at least one node.
    nodes = y.running_nodes()
    assert len(nodes) >= 2, f"the cluster has {len(nodes)} node(s); this test needs several"
    vcores = min(n["availableVirtualCores"] + n["usedVirtualCores"] for n in nodes) // 3 + 1
    seen = []
    for _ in range(2):
        code, out, _ = y.submit([venv_job(tmp_path, archive, vcores)])
        assert code == 0, out
        app = y.app_id_of(out)
        places = {}

        def aggregated():
            logs = y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")
            found = re.findall(r"^VENV node=(\S+) at=(\S+)$", logs, re.M)
            places.clear()
            for node, at in found:
                places.setdefault(node, set()).add(at)
            return len(found) >= 4
        assert y.wait_until(aggregated, 60, step=1), places
        for node, where in places.items():
            assert len(where) == 1, (node, where)  # one copy per node in a job
            at = next(iter(where))
            assert "/filecache/" in at and "/appcache/" not in at, (node, at)
        seen.append({node: next(iter(w)) for node, w in places.items()})
    shared = set(seen[0]) & set(seen[1])
    assert shared, seen
    for node in shared:
        assert seen[0][node] == seen[1][node], (node, seen)
