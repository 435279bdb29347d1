"""tony's Dataproc initialization action (scripts/dataproc/tony.sh, doc/
dataproc.md) in three containers of the docker tier's Debian image standing
in for a Dataproc master and two workers: each gets the instance metadata
through a get_metadata_value at Dataproc's path that reads files, and the
bundle (`cmake --install` of this build, as a tarball) as a local file. Then
the guide's TonY command line runs the samples from the master container on
the local backend, and on a YARN whose NodeManagers run in the worker
containers.

The image is Debian's python3 and little else; Dataproc's images have bash
and unzip, so the host's are mounted in (the image has their libraries);
for the NodeManagers, also Java, Hadoop's jars, tar and find.
No TensorFlow or PyTorch is in the image: the samples train their plain-
Python stand-in (--standin)."""

import contextlib
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

import tonyjob
from test_docker_daemon import daemon, docker

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / "scripts" / "dataproc" / "tony.sh"
SAMPLES = "/opt/tony/TonY-samples"
FAKE_METADATA = '#!/bin/sh\n# $1: attributes/<key>\nexec cat "/mnt/metadata/$1" 2>/dev/null\n'


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The bundle: this build's `cmake --install` output as a tarball."""
    return tonyjob.bundle_tarball(tmp_path_factory.mktemp("bundle"))


class Node:
    def __init__(self, env, name):
        self.env, self.name = env, name

    def sh(self, script, timeout=120):
        return docker(self.env, "exec", self.name, "/usr/bin/bash", "-c", script,
                      timeout=timeout)


@contextlib.contextmanager
def dataproc_nodes(env, tmp_path, bundle, *options, tools=("/bin/bash", "/usr/bin/unzip")):
    """Three running containers, master ("m") and workers ("w-0", "w-1"),
    each with its metadata directory (node.meta) and the host's tools
    mounted in /usr/bin; `options` go to every `docker run`. Removed after."""
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
            r = docker(env, "run", "-d", "--init", "--name", cname, *options,
                       "-v", f"{bundle}:/mnt/bundle/tony.tar:ro",
                       "-v", f"{ACTION}:/mnt/action/tony.sh:ro",
                       "-v", f"{google}:/usr/share/google:ro",
                       "-v", f"{tmp_path / name}:/mnt/metadata:ro",
                       *[a for tool in tools for a in
                         ("-v", f"{os.path.realpath(tool)}:/usr/bin/{Path(tool).name}:ro")],
                       env["TONY_DOCKER_TEST_IMAGE"], "sleep", "900")
            assert r.returncode == 0, r.stderr
            nodes[name] = Node(env, cname)
            nodes[name].meta = meta
        yield nodes
    finally:
        for n in nodes.values():
            docker(env, "rm", "-f", n.name)


@pytest.fixture
def cluster(tmp_path, bundle):
    """The three nodes, without a network."""
    with dataproc_nodes(daemon(), tmp_path, bundle, "--network=none") as nodes:
        yield nodes


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


def host_java():
    """JAVA_HOME of the test machine's java, and the mounts that run it in
    the image (which has no C++ runtime): a Dataproc image has Java."""
    java = shutil.which("java")
    if not java:
        pytest.fail("no java on PATH: the YARN tier needs one (scripts/setup.sh)")
    home = Path(os.path.realpath(java)).parents[1]
    mounts = ["-v", f"{home.parent}:{home.parent}:ro"]
    etc = Path("/etc") / home.name.replace("-amd64", "").replace("-arm64", "")
    if etc.is_dir():  # Debian's JDK keeps its configuration there
        mounts += ["-v", f"{etc}:{etc}:ro"]
    for lib in ("libstdc++.so.6", "libgcc_s.so.1"):
        for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64"):
            if os.path.exists(f"{d}/{lib}"):
                mounts += ["-v", f"{os.path.realpath(f'{d}/{lib}')}:{d}/{lib}:ro"]
                break
    return home, mounts


def hadoop_jars():
    """The folder holding every jar the test cluster's daemons run (a
    Dataproc image has Hadoop installed)."""
    r = subprocess.run([ROOT / "scripts" / "yarn" / "jars.sh"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    jars = Path(r.stdout.split()[-1]).read_text().strip().split(":")
    return os.path.commonpath(jars)


# Runs the NodeManager of node TONY_YARN_NM_NODE (cluster.sh's
# TONY_YARN_NM_WRAPPER) in that node's worker container, on the same paths.
NM_IN_CONTAINER = """#!/bin/sh
case "$TONY_YARN_NM_NODE" in
{cases}
  *) echo "nm-in-container: no worker container for node '$TONY_YARN_NM_NODE'" >&2; exit 2 ;;
esac
shift  # the host's java: the container runs $JAVA_HOME's
exec docker exec -i -w "$PWD" -e HADOOP_CONF_DIR -e JAVA_HOME -e HADOOP_HOME \
  -e HADOOP_COMMON_HOME "$container" "$JAVA_HOME/bin/java" "$@"
"""


# A job run by the workers' install of tony; each task says where it runs
# and what its parent (tony-executor) is.
OWN_INSTALL_JOB = """name = "own-install"
[cluster]
backend = "yarn"
install_dir = "/opt/tony/TonY/bin"
[tasks.worker]
instances = 2
memory = "256m"
command = '''cat /etc/tony-test-image; echo "parent: $(tr '\\0' ' ' < /proc/$PPID/cmdline)"'''
"""


@contextlib.contextmanager
def yarn_on(env, nodes, state, tmp_path):
    """A YARN with HDFS in state whose NodeManagers run in the containers
    `nodes` ({address: Node}); stopped after."""
    wrapper = tmp_path / "nm-in-container"
    wrapper.write_text(NM_IN_CONTAINER.format(cases="\n".join(
        f"  {a}) container={n.name} ;;" for a, n in nodes.items())))
    wrapper.chmod(0o755)
    cluster_sh = ROOT / "scripts" / "yarn" / "cluster.sh"
    env = {**os.environ, "DOCKER_HOST": env["DOCKER_HOST"], "TONY_YARN_NM_WRAPPER": str(wrapper)}
    try:
        start = subprocess.run([cluster_sh, "start", "--hdfs", "--nodes", str(len(nodes)),
                                "--dir", state], capture_output=True, text=True, timeout=300,
                               env=env)
        assert start.returncode == 0, start.stderr[-3000:]
        yield
    finally:
        subprocess.run([cluster_sh, "stop", "--dir", state], capture_output=True, timeout=120,
                       env=env)


def test_the_samples_run_on_yarn_in_the_actions_worker_containers(tmp_path, bundle):
    """A Dataproc cluster in containers: the action runs on a master and two
    workers, then each worker container runs a NodeManager of a real YARN
    (its ResourceManager and HDFS on the test machine, standing in for the
    master's daemons). From the master container the guide's submission
    runs through the jar, TonY's tony-submit command line runs the PyTorch
    sample, and a job.toml uses the workers' own install (install_dir): the
    AM and the tasks run inside the worker containers."""
    if not os.environ.get("TONY_YARN_HOST"):
        pytest.skip("TONY_YARN_HOST is not set: ctest gives the address of this test's YARN")
    env = daemon()
    java_home, java_mounts = host_java()
    jars = hadoop_jars()
    host = os.environ["TONY_YARN_HOST"]
    prefix, last = host.rsplit(".", 1)
    workers = {f"{prefix}.{int(last) + 1 + i}": f"w-{i}" for i in range(2)}
    shared = tmp_path / "shared"  # the cluster's state: the same path everywhere
    shared.mkdir()
    state = shared / "yarn"
    # A Dataproc node's tools, which the image lacks: the NodeManager's
    # launch script runs find, its localization tar and gzip.
    tools = ("/bin/bash", "/usr/bin/unzip", "/usr/bin/gzip", "/bin/tar", "/usr/bin/find")
    with dataproc_nodes(env, tmp_path, bundle, "--network=host",
                        "-e", f"HADOOP_CONF_DIR={state}/conf", "-v", f"{shared}:{shared}",
                        "-v", f"{jars}:{jars}:ro", *java_mounts, tools=tools) as nodes:
        for name, node in nodes.items():
            r = init(node)
            assert r.returncode == 0, f"{name}: {r.stdout}{r.stderr}"
        with yarn_on(env, {a: nodes[n] for a, n in workers.items()}, state, tmp_path):
            m = nodes["m"]
            java = f"{java_home}/bin/java"

            # The guide's submission as Dataproc's job driver runs it on the
            # master: the class on the cluster's configuration and the jar.
            jar = f"$(ls {SAMPLES}/tony-cli-*-all.jar)"
            r = m.sh(f"cd /tmp && {java} -cp \"$HADOOP_CONF_DIR:{jar}\" "
                     "com.linkedin.tony.cli.ClusterSubmitter "
                     f"--src_dir={SAMPLES}/jobs/TFJob/src "
                     "--task_params='--data_dir /tmp/ --working_dir /tmp/tf-out --standin' "
                     f"--conf_file={SAMPLES}/jobs/TFJob/tony.xml --executes mnist_distributed.py "
                     f"--python_venv={SAMPLES}/deps/tf.zip --python_binary_path=tf/bin/python3",
                     timeout=240)
            text = r.stdout + r.stderr
            assert r.returncode == 0, text
            assert "to YARN queue default; staged in hdfs://" in text, text
            assert "(TFJob) FINISHED/SUCCEEDED" in text, text
            tf_app = text.split("tony: submitted ")[1].split()[0]

            # TonY's command line for the PyTorch sample.
            r = m.sh(f"cd /tmp && tony-submit --src_dir={SAMPLES}/jobs/PTJob/src "
                     "--task_params='--root /tmp/pt-out --standin' "
                     f"--conf_file={SAMPLES}/jobs/PTJob/tony.xml --executes mnist_distributed.py "
                     f"--python_venv={SAMPLES}/deps/pytorch.zip "
                     "--python_binary_path=pytorch/bin/python3", timeout=240)
            text = r.stdout + r.stderr
            assert r.returncode == 0, text
            assert "(PTJob) FINISHED/SUCCEEDED" in text, text

            # Each sample's two workers ran in the worker containers, one on each
            # (spread placement), with the image's Python; nothing on the master.
            for out, framework in (("tf-out", "stand-in (no TensorFlow)"),
                                   ("pt-out", "stand-in (no PyTorch)")):
                seen = []
                for name in ("w-0", "w-1"):
                    r = nodes[name].sh(f"ls /tmp/{out}")
                    seen += r.stdout.split()
                    r = nodes[name].sh(f"cat /tmp/{out}/worker-*.json")
                    assert r.stdout.count(f'"framework": "{framework}"') == 1, name + r.stdout
                assert sorted(seen) == ["worker-0.json", "worker-1.json"], seen
                r = m.sh(f"test -e /tmp/{out} && echo there || echo none")
                assert r.stdout.strip() == "none", r.stdout
            assert not (shared / "tf-out").exists()

            # The master reads the aggregated logs.
            r = m.sh(f"tony-submit --logs {tf_app}", timeout=90)
            assert r.returncode == 0, r.stdout + r.stderr
            for i in (0, 1):
                assert f"mnist_distributed: worker:{i} trained with stand-in" in r.stdout, r.stdout

            # The workers' install runs a job that ships no binaries: its AM is
            # the workers' /opt/tony/TonY/bin/tony-am.
            own = shared / "own"
            own.mkdir()
            (own / "job.toml").write_text(OWN_INSTALL_JOB)
            r = m.sh(f"cd {own} && tony-submit job.toml", timeout=180)
            text = r.stdout + r.stderr
            assert r.returncode == 0, text
            assert "(own-install) FINISHED/SUCCEEDED" in text, text
            own_app = text.split("tony: submitted ")[1].split()[0]
            r = m.sh(f"tony-submit --logs {own_app}", timeout=90)
            assert r.returncode == 0, r.stdout + r.stderr
            assert r.stdout.count("tony-test bookworm") == 2, r.stdout
            assert r.stdout.count("parent: /opt/tony/TonY/bin/tony-executor ") == 2, r.stdout
