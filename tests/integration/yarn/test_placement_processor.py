"""tony on a YARN whose ResourceManager runs the placement processor
(yarn.resourcemanager.placement-constraints.handler=placement-processor):
a spread type's strict ask goes as a SchedulingRequest capped at its share,
which the processor places when the AM asks instead of on node heartbeats,
and relaxes to any node when the processor rejects it or after 3 s
(doc/architecture.md "Spread placement"). The module starts a two-node
cluster of its own on TONY_YARN_HOST (tests/integration/yarn/CMakeLists.txt)
and points yarnlib at it."""

import os
import subprocess
import sys

import pytest

import yarnlib as y

CLUSTER = os.path.join(y.ROOT, "scripts", "yarn", "cluster.sh")


@pytest.fixture(scope="module")
def processor_cluster(tmp_path_factory):
    state = tmp_path_factory.mktemp("processor") / "cluster"
    env = dict(os.environ, TONY_YARN_PLACEMENT_CONSTRAINTS="placement-processor",
               TONY_YARN_NM_MEMORY_MB="4096", TONY_YARN_NM_VCORES="8")
    start = subprocess.run([CLUSTER, "start", "--nodes", "2", "--dir", str(state)], env=env,
                           timeout=300, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    saved = {k: os.environ.get(k) for k in ("HADOOP_CONF_DIR", "TONY_YARN_DIR")}
    try:
        assert start.returncode == 0, start.stderr[-3000:]
        os.environ["HADOOP_CONF_DIR"] = str(state / "conf")
        os.environ["TONY_YARN_DIR"] = str(state)
        assert y.conf_value("yarn-site.xml",
                            "yarn.resourcemanager.placement-constraints.handler") == \
            "placement-processor"
        yield state
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        subprocess.run([CLUSTER, "stop", "--dir", str(state)], timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def spread_job(tmp_path, name, workers, memory, am_memory=None):
    job = tmp_path / f"{name}.toml"
    am = f'[am]\nmemory = "{am_memory}"\n' if am_memory else ""
    job.write_text(f"""
name = "{name}"
framework = "tensorflow"
[cluster]
staging_dir = "file://{tmp_path}/staging"
[code]
src_dir = "{os.path.dirname(y.env_check_job())}"
command = "python3 check_env.py --expect-framework tensorflow --expect-types worker:{workers}"
{am}
[tasks.worker]
instances = {workers}
memory = "{memory}"
""")
    return str(job)


def tasks_per_host(app, count):
    per_host = {}
    for s in y.env_summaries(app, count):
        assert s["ok"], s
        per_host[s["node"]] = per_host.get(s["node"], 0) + 1
    return per_host


def test_a_spread_type_goes_to_the_placement_processor(tmp_path, processor_cluster):
    """Four small workers on two nodes: a SchedulingRequest of at most 2 a
    node, placed by the processor; the AM log names that path."""
    code, out, _ = y.submit([spread_job(tmp_path, "spread", 4, "256m")])
    assert code == 0, out
    app = y.app_id_of(out)
    assert sorted(tasks_per_host(app, 4).values()) == [2, 2], out
    am_log = y.yarn_cli("logs", "-applicationId", app, "-log_files", "am.log")
    assert ("placement of worker: spread: at most its share (2) on each of 2 nodes by "
            "SchedulingRequest (the ResourceManager's placement processor") in am_log, am_log


def test_a_share_a_node_cannot_hold_goes_to_the_other(tmp_path, processor_cluster):
    """The AM's container (3.5 GiB of a 4 GiB node) leaves its node room for
    one of the four 384 MiB workers, not its share of 2: the processor
    places three and rejects the fourth, and the ask relaxes, so the other
    node takes 3 and the job runs instead of waiting. (The default queue
    holds 70 % of the cluster, so the job stays below that.)"""
    code, out, _ = y.submit([spread_job(tmp_path, "full", 4, "384m", am_memory="3584m")],
                            timeout=180)
    assert code == 0, out
    assert sorted(tasks_per_host(y.app_id_of(out), 4).values()) == [1, 3], out


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
