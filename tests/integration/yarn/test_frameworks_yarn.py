"""Horovod and Docker on the real local YARN (fixture `yarn`, several
NodeManager hosts): a Horovod allreduce across three tasks on at least two
hosts through the AM's rendezvous, and a task with a Docker image whose
launch context reaches the NodeManager with YARN's Docker runtime variables
(doc/docker.md)."""

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import yarnlib as y

SCRIPT = os.path.join(y.ROOT, "tests", "integration", "horovod", "hvd_allreduce.py")
VENV = os.environ.get("TONY_VENV", os.path.join(y.ROOT, ".venv"))


def job_dir(toml, files=()):
    d = Path(tempfile.mkdtemp(prefix="tony-fw-"))
    (d / "src").mkdir()
    for f in files:
        shutil.copy(f, d / "src")
    (d / "job.toml").write_text(toml)
    return d


def aggregated_logs(app, log_file, want):
    """The aggregated `log_file` of every container of `app`, once `want`
    holds of the text."""
    text = {"out": ""}

    def ready():
        text["out"] = y.yarn_cli("logs", "-applicationId", app, "-log_files", log_file)
        return want(text["out"])
    y.wait_until(ready, 90)
    return text["out"]


def test_horovod_allreduce_across_three_tasks_on_yarn():
    probe = subprocess.run([os.path.join(VENV, "bin", "python3"), "-c",
                            "import horovod.torch as hvd; assert hvd.gloo_built()"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip("Horovod with gloo and PyTorch is not installed in the test venv; "
                    "scripts/setup-horovod.sh --build builds it")
    # Each task takes more than a third of a node's vcores, so a node holds
    # two at most and the three ranks span at least two hosts.
    nodes = y.running_nodes()
    assert len(nodes) >= 2, f"the cluster has {len(nodes)} node(s); this test needs several"
    vcores = min(n["availableVirtualCores"] + n["usedVirtualCores"] for n in nodes) // 3 + 1
    d = job_dir(f'''name = "horovod-yarn"
framework = "horovod"

[code]
src_dir = "src"
command = "exec python3 hvd_allreduce.py"

[env]
PATH = "{VENV}/bin:/usr/local/bin:/usr/bin:/bin"
OMP_NUM_THREADS = "1"
HOROVOD_GLOO_TIMEOUT_SECONDS = "90"

[tasks.worker]
instances = 3
memory = "1g"
vcores = {vcores}
''', [SCRIPT])
    try:
        code, out, _ = y.submit([str(d / "job.toml")], timeout=600)
        assert code == 0, out
        app = y.app_id_of(out)
        logs = aggregated_logs(app, "stdout", lambda t: t.count("HVD rank=") >= 3)
        ranks = re.findall(r"HVD rank=(\d) size=3 local_rank=\d sum=6 expected=6 "
                           r"addr=(\S+)", logs)
        assert sorted(r for r, _ in ranks) == ["0", "1", "2"], logs
        assert all(re.fullmatch(r"[^:/]+:\d+/[0-9a-f]{32}", a) for _, a in ranks), ranks
        hosts = dict(re.findall(r"HVD host rank=(\d) node=(\S+)", logs))
        assert sorted(hosts) == ["0", "1", "2"], logs
        assert len(set(hosts.values())) >= 2, hosts
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_docker_task_reaches_the_nodemanager_with_yarns_docker_runtime():
    """The test cluster's NodeManager runs the DefaultContainerExecutor, which
    ignores YARN's runtime variables and starts the container on the node
    itself: the executor sees it is not in a container and fails the task
    saying why. The launch script the NodeManager wrote (kept with the
    container's logs) shows the runtime variables tony set, and the
    NodeManager's Docker runtime accepts them and turns them into the docker
    run command (image, host network, every mount)."""
    d = job_dir('''name = "docker-yarn"
framework = "standalone"

[code]
src_dir = false
command = "echo not in docker"

[data]
output_path = "/tmp/tony-docker-out"

[docker]
image = "registry.example:5000/team/train:1"
mounts = ["/etc/passwd:/etc/passwd:ro"]

[tasks.worker]
instances = 1
memory = "256m"
''')
    try:
        code, out, _ = y.submit([str(d / "job.toml")], timeout=300)
        assert code == 1, out
        assert ("worker:0 was to run in the Docker image registry.example:5000/team/train:1, "
                "but its NodeManager started it on the node itself") in out, out
        assert "not in docker" not in out
        app = y.app_id_of(out)
        logs = aggregated_logs(app, "launch_container.sh",
                               lambda t: "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE" in t)
        assert 'export YARN_CONTAINER_RUNTIME_TYPE="docker"' in logs, logs[-3000:]
        assert ('export YARN_CONTAINER_RUNTIME_DOCKER_IMAGE='
                '"registry.example:5000/team/train:1"') in logs
        assert 'export YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK="host"' in logs
        mounts = re.search(r'export YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS="([^"]*)"', logs)
        assert mounts, logs[-3000:]
        listed = mounts.group(1).split(",")
        assert "/tmp/tony-docker-out:/tmp/tony-docker-out:rw" in listed, listed
        assert "/etc/passwd:/etc/passwd:ro" in listed, listed
        conf = os.environ["HADOOP_CONF_DIR"]
        assert any(m.startswith("/") and m.endswith(":ro") and "conf" in m
                   for m in listed), (listed, conf)
        # The NodeManager's own Docker runtime takes that environment and
        # writes the docker command container-executor would run.
        runtime_env = dict(re.findall(r'export (YARN_CONTAINER_RUNTIME_\w+)="([^"]*)"', logs))
        code, cmd = nodemanager_docker_launch(app, runtime_env)
        assert code == 0, cmd
        assert "docker-command=run" in cmd, cmd
        assert "image=registry.example:5000/team/train:1" in cmd, cmd
        assert "net=host" in cmd, cmd
        run_mounts = re.search(r"^\s*mounts=(.*)$", cmd, re.M).group(1).split(",")
        for m in listed:
            assert m in run_mounts, (m, run_mounts)
        # The same runtime refuses what the cluster does not allow: a check
        # that can fail.
        code, cmd = nodemanager_docker_launch(app, runtime_env, networks="bridge,none")
        assert code == 3 and "Disallowed network" in cmd, cmd
    finally:
        shutil.rmtree(d, ignore_errors=True)


def nodemanager_docker_launch(app, env, networks="host,bridge,none"):
    """Runs YarnDockerLaunch.java (the NodeManager's Linux container runtimes
    on the container's environment, see its comment) against the cluster's
    Hadoop jars; returns (exit code, its output)."""
    with tempfile.TemporaryDirectory(prefix="tony-nm-docker-") as tmp:
        cp = y.yarn_cli("classpath").strip().splitlines()[-1]
        src = os.path.join(os.path.dirname(__file__), "YarnDockerLaunch.java")
        subprocess.run(["javac", "-nowarn", "-d", tmp, "-cp", cp, src], check=True,
                       timeout=120)
        env_file = os.path.join(tmp, "env")
        with open(env_file, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in env.items())
        container = "container_" + app[len("application_"):] + "_01_000002"
        scratch = os.path.join(tmp, "scratch")
        os.mkdir(scratch)
        # The job's user here is root, whom YARN's Docker runtime refuses by
        # default (uid below yarn.nodemanager.runtime.linux.docker.
        # userremapping-uid-threshold): launch as an ordinary user.
        proc = subprocess.run(["java", "-cp", f"{tmp}:{cp}", "YarnDockerLaunch", env_file,
                               container, "nobody", scratch, networks],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=120)
        return proc.returncode, proc.stdout + proc.stderr[-2000:]
