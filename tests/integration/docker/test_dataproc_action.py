"""tony's Dataproc initialization action (scripts/dataproc/tony.sh, doc/
dataproc.md) in three containers of the docker tier's Debian image standing
in for a Dataproc master and two workers: each gets the instance metadata
through a get_metadata_value at Dataproc's path that reads files, and the
bundle (`cmake --install` of this build, as a tarball) as a local file. Then
the guide's TonY command line runs the samples from the master container on
the local backend.

The image is Debian's python3 and little else; Dataproc's images have bash
and unzip, so the host's are mounted in (the image has their libraries).
No TensorFlow or PyTorch is in the image: the samples train their plain-
Python stand-in (--standin)."""

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from test_docker_daemon import daemon, docker

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "scripts" / "dataproc" / "tony.sh"
SAMPLES = "/opt/tony/TonY-samples"
FAKE_METADATA = '#!/bin/sh\n# $1: attributes/<key>\nexec cat "/mnt/metadata/$1" 2>/dev/null\n'


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The bundle: this build's `cmake --install` output as a tarball."""
    build = Path(os.environ["TONY_BIN_DIR"]).parent
    work = tmp_path_factory.mktemp("bundle")
    prefix = work / "prefix"
    r = subprocess.run([os.environ.get("CMAKE_COMMAND", "cmake"), "--install", str(build),
                        "--prefix", str(prefix)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = work / "tony.tar"
    with tarfile.open(out, "w") as t:
        t.add(prefix, arcname=".")
    return out


class Node:
    def __init__(self, env, name):
        self.env, self.name = env, name

    def sh(self, script, timeout=120):
        return docker(self.env, "exec", self.name, "/usr/bin/bash", "-c", script,
                      timeout=timeout)


@pytest.fixture
def cluster(tmp_path, bundle):
    """Three running containers, master and workers, with their metadata
    directories; removed after the test."""
    env = daemon()
    google = tmp_path / "google"
    google.mkdir()
    (google / "get_metadata_value").write_text(FAKE_METADATA)
    (google / "get_metadata_value").chmod(0o755)
    nodes = {}
    tag = f"{os.getpid()}-{tmp_path.name}"[-40:]
    try:
        for role, name in (("Master", "m"), ("Worker", "w-0"), ("Worker", "w-1")):
            meta = tmp_path / name / "attributes"
            meta.mkdir(parents=True)
            (meta / "dataproc-role").write_text(role)
            (meta / "tony-bundle").write_text("file:///mnt/bundle/tony.tar")
            cname = f"tony-dataproc-{name}-{tag}"
            r = docker(env, "run", "-d", "--init", "--network=none", "--name", cname,
                       "-v", f"{bundle}:/mnt/bundle/tony.tar:ro",
                       "-v", f"{ACTION}:/mnt/action/tony.sh:ro",
                       "-v", f"{google}:/usr/share/google:ro",
                       "-v", f"{tmp_path / name}:/mnt/metadata:ro",
                       "-v", "/bin/bash:/usr/bin/bash:ro",
                       "-v", "/usr/bin/unzip:/usr/bin/unzip:ro",
                       env["TONY_DOCKER_TEST_IMAGE"], "sleep", "600")
            assert r.returncode == 0, r.stderr
            nodes[name] = Node(env, cname)
            nodes[name].meta = meta
        yield nodes
    finally:
        for n in nodes.values():
            docker(env, "rm", "-f", n.name)


def init(node, timeout=180):
    return node.sh("/mnt/action/tony.sh", timeout=timeout)


def test_the_action_makes_a_master_and_two_workers_and_the_samples_run(cluster):
    m = cluster["m"]
    (m.meta / "worker_instances").write_text("3")
    (m.meta / "worker_memory").write_text("512m")
    for name, node in cluster.items():
        r = init(node)
        assert r.returncode == 0, f"{name}: {r.stdout}{r.stderr}"
        assert "done (" + ("Master" if name == "m" else "Worker") + ")" in r.stderr, r.stderr
        r = node.sh(". /etc/profile.d/tony.sh && echo $TONY_HOME && command -v tony-executor"
                    " && test -x /opt/tony/TonY/bin/tony-am && test -d /opt/tony/TonY/lib/tony")
        assert r.returncode == 0, f"{name}: {r.stdout}{r.stderr}"
        assert r.stdout.split() == ["/opt/tony/TonY", "/opt/tony/TonY/bin/tony-executor"]
    for w in ("w-0", "w-1"):
        r = cluster[w].sh(f"test -e /usr/local/bin/tony-submit || test -e {SAMPLES} || echo bare")
        assert r.stdout.strip() == "bare", f"{w} got the master's part: {r.stdout}{r.stderr}"

    # The master: commands on PATH, the jar and the samples in TonY's layout.
    r = m.sh("command -v tony-submit ytf-submit tony-history && "
             # The jar's ../bin: where TonySubmitLauncher looks first.
             f"test -x {SAMPLES}/../bin/tony-submit && "
             f"cd {SAMPLES} && ls tony-cli-*-all.jar jobs/TFJob/tony.xml "
             "jobs/TFJob/src/mnist_distributed.py jobs/PTJob/tony.xml "
             "jobs/PTJob/src/mnist_distributed.py deps/tf.zip deps/pytorch.zip && "
             "cat jobs/TFJob/tony.xml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "/usr/local/bin/tony-submit" in r.stdout and "/usr/local/bin/ytf-submit" in r.stdout
    assert "<name>tony.worker.instances</name>\n    <value>3</value>" in r.stdout, r.stdout
    assert "<value>512m</value>" in r.stdout, r.stdout

    # The guide's TensorFlow submission, but for the stand-in flag and the
    # environment's interpreter path.
    r = m.sh(f"tony-submit --src_dir={SAMPLES}/jobs/TFJob/src "
             "--task_params='--data_dir /tmp/ --working_dir /tmp/tf-out --standin' "
             f"--conf_file={SAMPLES}/jobs/TFJob/tony.xml --executes mnist_distributed.py "
             f"--python_venv={SAMPLES}/deps/tf.zip --python_binary_path=tf/bin/python3 "
             "&& cat /tmp/tf-out/worker-*.json", timeout=200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(TFJob) SUCCEEDED" in r.stdout + r.stderr, r.stdout + r.stderr
    assert r.stdout.count('"framework": "stand-in (no TensorFlow)"') == 3, r.stdout

    # The guide's PyTorch submission.
    r = m.sh(f"tony-submit --src_dir={SAMPLES}/jobs/PTJob/src "
             "--task_params='--root /tmp/pt-out --standin' "
             f"--conf_file={SAMPLES}/jobs/PTJob/tony.xml --executes mnist_distributed.py "
             f"--python_venv={SAMPLES}/deps/pytorch.zip --python_binary_path=pytorch/bin/python3 "
             "&& cat /tmp/pt-out/worker-*.json", timeout=200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(PTJob) SUCCEEDED" in r.stdout + r.stderr, r.stdout + r.stderr
    assert r.stdout.count('"framework": "stand-in (no PyTorch)"') == 3, r.stdout

    # Without the framework and without --standin a sample says what to do.
    r = m.sh(f"cd /tmp && {SAMPLES}/jobs/TFJob/src/mnist_distributed.py 2>&1; echo rc=$?"
             .replace(f"{SAMPLES}/jobs", f"python3 {SAMPLES}/jobs"))
    assert "tensorflow is not installed" in r.stdout and "--standin" in r.stdout, r.stdout
    assert "rc=3" in r.stdout, r.stdout

    # Again: the same bundle is not unpacked twice, and all still works.
    r = init(m)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "is already file:///mnt/bundle/tony.tar" in r.stderr, r.stderr
    r = m.sh("tony-submit --version || tony-submit --help | head -n 1")
    assert r.returncode == 0, r.stdout + r.stderr


def test_bad_metadata_is_a_clear_error_with_its_exit_code(cluster):
    w = cluster["w-0"]
    (w.meta / "dataproc-role").write_text("Edge")
    r = init(w)
    assert r.returncode == 2 and "dataproc-role is 'Edge'; expected Master or Worker" in r.stderr
    (w.meta / "dataproc-role").write_text("Worker")
    (w.meta / "tony-bundle").unlink()
    r = init(w)
    assert r.returncode == 2 and "no tony-bundle in the instance metadata" in r.stderr, r.stderr
    (w.meta / "tony-bundle").write_text("/mnt/bundle/missing.tar")
    r = init(w)
    assert r.returncode == 3 and "cannot copy the bundle /mnt/bundle/missing.tar" in r.stderr
    assert "No such file or directory" in r.stderr, r.stderr
    (w.meta / "tony-bundle").write_text("/mnt/action/tony.sh")
    r = init(w)
    assert r.returncode == 3 and "is not a tarball" in r.stderr, r.stderr
    # A gzip'd tarball on a node without gzip (the image has none): Python
    # unpacks it, and it is not tony's.
    small = w.meta.parent / "small.tar.gz"
    with tarfile.open(small, "w:gz") as t:
        info = tarfile.TarInfo("bin/readme")
        t.addfile(info)
    (w.meta / "tony-bundle").write_text("/mnt/metadata/small.tar.gz")
    r = init(w)
    assert r.returncode == 3 and "has no bin/tony-submit" in r.stderr, r.stderr
    (w.meta / "tony-bundle").write_text("/mnt/bundle/tony.tar")
    (w.meta / "worker_memory").write_text("lots")
    r = init(w)
    assert r.returncode == 2 and "metadata worker_memory='lots' is malformed" in r.stderr
    r = w.sh("test -e /opt/tony/TonY || echo nothing installed")
    assert r.stdout.strip() == "nothing installed", r.stdout + r.stderr


@pytest.fixture
def yarn(tmp_path):
    """A one-node YARN with HDFS of the test's own on TONY_YARN_HOST; its
    configuration directory."""
    if not os.environ.get("TONY_YARN_HOST"):
        pytest.skip("TONY_YARN_HOST is not set: ctest gives the address of this test's YARN")
    state = tmp_path / "yarn"
    start = subprocess.run([ROOT / "scripts" / "yarn" / "cluster.sh", "start", "--hdfs",
                            "--dir", state], capture_output=True, text=True, timeout=300)
    try:
        assert start.returncode == 0, start.stderr[-3000:]
        yield state / "conf"
    finally:
        subprocess.run([ROOT / "scripts" / "yarn" / "cluster.sh", "stop", "--dir", state],
                       capture_output=True, timeout=120)


def test_the_samples_run_from_the_master_container_on_yarn(tmp_path, bundle, yarn):
    """The master container on the host's network with the cluster's client
    configuration, as on Dataproc's master: the guide's submission goes to
    YARN, tony-submit stages its bundle to HDFS, and the NodeManager (on the
    host, not in a container) runs the sample's workers."""
    env = daemon()
    (tmp_path / "google").mkdir()
    (tmp_path / "google" / "get_metadata_value").write_text(FAKE_METADATA)
    (tmp_path / "google" / "get_metadata_value").chmod(0o755)
    meta = tmp_path / "meta" / "attributes"
    meta.mkdir(parents=True)
    (meta / "dataproc-role").write_text("Master")
    (meta / "tony-bundle").write_text("/mnt/bundle/tony.tar")
    out = tmp_path / "out"
    out.mkdir()
    name = f"tony-dataproc-yarn-m-{os.getpid()}"
    r = docker(env, "run", "-d", "--init", "--network=host", "--name", name,
               "-e", "HADOOP_CONF_DIR=/etc/hadoop/conf",
               "-v", f"{bundle}:/mnt/bundle/tony.tar:ro",
               "-v", f"{ACTION}:/mnt/action/tony.sh:ro",
               "-v", f"{tmp_path / 'google'}:/usr/share/google:ro",
               "-v", f"{tmp_path / 'meta'}:/mnt/metadata:ro",
               "-v", f"{yarn}:/etc/hadoop/conf:ro",
               "-v", "/bin/bash:/usr/bin/bash:ro",
               "-v", "/usr/bin/gzip:/usr/bin/gzip:ro",
               env["TONY_DOCKER_TEST_IMAGE"], "sleep", "600")
    assert r.returncode == 0, r.stderr
    m = Node(env, name)
    try:
        r = init(m)
        assert r.returncode == 0, r.stdout + r.stderr
        r = m.sh(f"cd /tmp && tony-submit --src_dir={SAMPLES}/jobs/TFJob/src "
                 f"--task_params='--data_dir /tmp/ --working_dir {out} --standin' "
                 f"--conf_file={SAMPLES}/jobs/TFJob/tony.xml --executes mnist_distributed.py "
                 f"--python_venv={SAMPLES}/deps/tf.zip --python_binary_path=tf/bin/python3",
                 timeout=240)
        text = r.stdout + r.stderr
        assert r.returncode == 0, text
        assert "to YARN queue default; staged in hdfs://" in text, text
        assert "(TFJob) FINISHED/SUCCEEDED" in text, text
        app = text.split("tony: submitted ")[1].split()[0]
        # The workers ran on the NodeManager: their results are on the host.
        assert sorted(p.name for p in out.iterdir()) == ["worker-0.json", "worker-1.json"]
        r = m.sh(f"tony-submit --logs {app}", timeout=90)
        assert r.returncode == 0, r.stdout + r.stderr
        for i in (0, 1):
            assert f"mnist_distributed: worker:{i} trained with stand-in" in r.stdout, r.stdout
    finally:
        docker(env, "rm", "-f", name)
