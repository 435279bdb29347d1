"""TonY's, YARN-DTF's and tf-yarn's users on the real local YARN (ctest
fixture `yarn`): the design's four ytf-submit examples and TonY's README
example training a small TensorFlow model, and files and archives shipped
from local paths, from HDFS and through a viewfs:// mount table."""

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

import yarnlib as y

sys.path.insert(0, os.path.join(y.ROOT, "tests", "integration", "local"))
from test_migrate import tony_venv_zip, tony_xml  # noqa: E402

SCRIPT = os.path.join(y.ROOT, "tests", "integration", "migrate", "dtf_mnist.py")
YTF = os.path.join(y.BIN, "ytf-submit")
CLUSTER_ARGS = ("--job_name ${DTF_TASK_JOB_NAME} --task_index ${DTF_TASK_INDEX} "
                "--ps_hosts ${DTF_PS_HOSTS} --worker_hosts ${DTF_WORKER_HOSTS}")


def conf_value(file, name, default=""):
    path = Path(os.environ["HADOOP_CONF_DIR"]) / file
    if not path.exists():
        return default
    for prop in ET.parse(path).getroot().iter("property"):
        if prop.findtext("name") == name:
            return prop.findtext("value") or default
    return default


def hdfs_put(path, data):
    """Writes `data` to HDFS `path` through WebHDFS (CREATE, then the
    DataNode it redirects to)."""
    http = conf_value("hdfs-site.xml", "dfs.namenode.http-address")
    user = os.environ.get("USER") or "root"
    url = f"http://{http}/webhdfs/v1{path}?op=CREATE&overwrite=true&user.name={user}"

    class no_redirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    opener = urllib.request.build_opener(no_redirect)
    try:
        opener.open(urllib.request.Request(url, method="PUT"), timeout=30)
        raise AssertionError("WebHDFS CREATE did not redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 307, e
        location = e.headers["Location"]
    with urllib.request.urlopen(urllib.request.Request(location, data=data, method="PUT"),
                                timeout=60) as r:
        assert r.status == 201, r.status


def run(tool_args, cwd, timeout=900):
    start = __import__("time").monotonic()
    proc = subprocess.run(tool_args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout, cwd=cwd)
    return proc.returncode, proc.stdout, __import__("time").monotonic() - start


def ytf(cwd, *args):
    # No --backend: with HADOOP_CONF_DIR set ytf-submit goes to YARN, as
    # YARN-DTF's does (doc/migrating.md).
    return run([YTF, "-m", "1024", *args], cwd)


def task_logs(app, expect, line="dtf example OK"):
    """Every container's stdout, once the NodeManager aggregated `expect`
    lines holding `line`."""
    said = []

    def aggregated():
        said[:] = [y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")]
        return said[0].count(line) >= expect
    y.wait_until(aggregated, 90)
    return said[0]


@pytest.fixture
def home():
    d = Path(tempfile.mkdtemp(prefix="tony-migrate-yarn-"))
    (d / "data").mkdir()
    shutil.copy(SCRIPT, d / "mnist.py")
    (d / "data" / "points.csv").write_text("1,3\n2,6\n3,9\n4,12\n")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def assert_succeeded(code, out):
    assert code == 0, out
    st = y.app_status(y.app_id_of(out))
    assert st["Final-State"] == "SUCCEEDED", st
    return y.app_id_of(out)


def test_ytf_example_simple_submission_on_yarn(home):
    code, out, _ = ytf(home, "-r", "ps:1,worker:2",
                       f"python {home}/mnist.py {CLUSTER_ARGS} "
                       f"--data_dir {home}/data --train_dir {home}/train")
    assert_succeeded(code, out)
    assert sorted(os.listdir(home / "train")) == ["worker-0.done", "worker-1.done"]


def test_ytf_example_enabling_tensorboard_on_yarn(home):
    code, out, _ = ytf(home, "--tensorboard", "-i", f"{home}/data", "-o", f"{home}/train10",
                       "-r", "ps:1,worker:2",
                       f"python {home}/mnist.py {CLUSTER_ARGS} "
                       "--data_dir ${DTF_INPUT_PATH} --train_dir ${DTF_OUTPUT_PATH}")
    assert_succeeded(code, out)
    assert "tensorboard" in out, out
    assert sorted(os.listdir(home / "train10")) == ["worker-0.done", "worker-1.done"]


def test_ytf_example_passing_the_script_file_on_yarn(home):
    code, out, _ = ytf(home, "--tensorboard", "-i", f"{home}/data", "-o", f"{home}/train10",
                       "-r", "ps:1,worker:2", "-s", f"{home}/mnist.py",
                       "python ${DTF_TASK_SCRIPT} " + CLUSTER_ARGS +
                       " --data_dir ${DTF_INPUT_PATH} --train_dir ${DTF_OUTPUT_PATH}")
    app = assert_succeeded(code, out)
    logs = task_logs(app, 2)
    assert logs.count("points=4") == 2, logs[-3000:]
    assert logs.count("converged=True") == 2, logs[-3000:]


def test_ytf_example_using_hdfs_paths_on_yarn(home):
    code, out, _ = ytf(home, "--tensorboard", "-i", "hdfs://users/user1/mnist/data", "-o",
                       "hdfs://users/user1/mnist/train10", "-r", "ps:1,worker:2", "-s",
                       f"{home}/mnist.py",
                       "python ${DTF_TASK_SCRIPT} " + CLUSTER_ARGS +
                       " --data_dir ${DTF_INPUT_PATH} --train_dir ${DTF_OUTPUT_PATH}")
    app = assert_succeeded(code, out)
    logs = task_logs(app, 2)
    assert logs.count("train_dir=hdfs://users/user1/mnist/train10") == 2, logs[-3000:]


def test_tonys_readme_example_trains_on_yarn(home):
    (home / "tony").mkdir()
    tony_xml(home / "tony" / "tony.xml", {
        "tony.worker.instances": "4", "tony.worker.memory": "1g", "tony.ps.memory": "1g"})
    (home / "src" / "models").mkdir(parents=True)
    shutil.copy(SCRIPT, home / "src" / "models" / "mnist_distributed.py")
    tony_venv_zip(home)
    code, out, _ = run([y.SUBMIT, "--backend", "yarn",
                        "-executes", "src/models/mnist_distributed.py",
                        "-task_params", "--steps 25 --batch_size 64",
                        "-python_venv", "my-venv.zip",
                        "-python_binary_path", "Python/bin/python",
                        "-src_dir", "src",
                        "-shell_env", "LD_LIBRARY_PATH=/usr/java/latest/jre/lib/amd64/server",
                        "-conf_file", "tony/tony.xml",
                        "-conf", "tony.ps.instances=1",
                        "-conf", "tony.worker.instances=2"], home)
    app = assert_succeeded(code, out)
    logs = task_logs(app, 2)
    assert logs.count("venv/Python") >= 2, "the zipped venv's interpreter ran:\n" + logs[-3000:]


FILES_JOB = """
name = "files-yarn"
framework = "standalone"
[code]
src_dir = "src"
command = "sh check.sh"
files = ["vocab.txt", "hdfs:///tmp/tony-migrate-test/dict.txt",
         { source = "helpers", name = "helpers" }]
archives = [{ source = "hdfs:///tmp/tony-migrate-test/data.zip", name = "data" },
            "model.tgz"]
[tasks.worker]
instances = 2
memory = "256m"
[tasks.ps]
memory = "256m"
tracked = true
files = [{ source = "VIEWFS", name = "ps.conf" }]
"""

CHECK = """set -e
cat vocab.txt dict.txt data/part-0.csv model.tgz/vocab.txt helpers/h.txt
if [ "$JOB_NAME" = ps ]; then cat ps.conf; fi
echo FILES OK $JOB_NAME
"""


def test_files_and_archives_from_local_hdfs_and_viewfs_on_yarn(home):
    hdfs_put("/tmp/tony-migrate-test/dict.txt", b"from hdfs\n")
    hdfs_put("/tmp/tony-migrate-test/ps.conf", b"ps conf through viewfs\n")
    buf = home / "data.zip"
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("part-0.csv", "1,2\n")
    hdfs_put("/tmp/tony-migrate-test/data.zip", buf.read_bytes())
    (home / "vocab.txt").write_text("local vocabulary\n")
    (home / "helpers").mkdir()
    (home / "helpers" / "h.txt").write_text("a shipped directory\n")
    subprocess.run(["tar", "-czf", str(home / "model.tgz"), "-C", str(home), "vocab.txt"],
                   check=True)
    (home / "src").mkdir()
    (home / "src" / "check.sh").write_text(CHECK)
    # A configuration with a viewfs mount table: viewfs://test/conf -> HDFS.
    conf = home / "conf"
    shutil.copytree(os.environ["HADOOP_CONF_DIR"], conf)
    fs = conf_value("core-site.xml", "fs.defaultFS")
    core = (conf / "core-site.xml").read_text().replace(
        "</configuration>",
        f"<property><name>fs.viewfs.mounttable.test.link./conf</name>"
        f"<value>{fs}/tmp/tony-migrate-test</value></property></configuration>")
    (conf / "core-site.xml").write_text(core)
    (home / "job.toml").write_text(FILES_JOB.replace("VIEWFS", "viewfs://test/conf/ps.conf"))
    code, out, _ = run([y.SUBMIT, "--backend", "yarn", "--hadoop-conf", str(conf),
                        str(home / "job.toml")], home, timeout=300)
    app = assert_succeeded(code, out)
    logs = task_logs(app, 3, "FILES OK")
    assert logs.count("FILES OK") == 3, logs[-3000:]
    for line in ["local vocabulary", "from hdfs", "1,2", "a shipped directory",
                 "ps conf through viewfs"]:
        assert line in logs, (line, logs[-3000:])


def test_a_missing_hdfs_file_is_refused_before_submission(home):
    (home / "job.toml").write_text('[code]\ncommand = "true"\nsrc_dir = false\n'
                                   'files = ["hdfs:///tmp/tony-migrate-test/nowhere.txt"]\n'
                                   '[tasks.worker]\nmemory = "256m"\n')
    code, out, secs = run([y.SUBMIT, "--backend", "yarn", str(home / "job.toml")], home,
                          timeout=120)
    assert code == 2, out
    assert "[code] files: hdfs:///tmp/tony-migrate-test/nowhere.txt does not exist" in out, out
    assert "submitted" not in out, out


def test_ytf_client_runs_beside_a_yarn_job(home):
    # The workers wait for the client's file; the client ends the job.
    flag = home / "client-was-here"
    cmd = (f'if [ "$DTF_TASK_JOB_NAME" = client ]; then echo "CLIENT sees $DTF_WORKER_HOSTS"; '
           f'touch {flag}; exit 0; fi; while [ ! -e {flag} ]; do sleep 0.2; done; sleep 120')
    code, out, secs = run([YTF, "-m", "256", "--client", "-r",
                           "worker:2", "--set", 'framework="standalone"', cmd], home,
                          timeout=300)
    assert code == 0, out
    assert out.splitlines()[0] == (
        "ytf-submit: backend yarn: a Hadoop configuration is found (HADOOP_CONF_DIR="
        f"{os.environ['HADOOP_CONF_DIR']}); --backend local runs the job on this machine"), out
    assert "client:0 started" in out, out
    # The workers' hosts are the cluster's nodes, as YARN names them (a node
    # on 127.0.0.1 "localhost", one on another address by it).
    names = {n["nodeHostName"] for n in y.running_nodes()}
    assert any(f"CLIENT sees {name}:" in out for name in names), (names, out)
    assert "client:0 exited with code 0: stopping the job" in out, out
    app = y.app_id_of(out)
    def killed():
        st = y.app_status(app)
        return st["State"] == "KILLED" or st.get("Final-State") == "KILLED"
    assert y.wait_until(killed, 30), y.app_status(app)
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)


def test_tonys_command_line_goes_to_yarn_when_hadoop_is_configured(home):
    # TonY's README command as its users type it (no --backend): with
    # HADOOP_CONF_DIR set it goes to YARN, as TonY's ClusterSubmitter does.
    (home / "tony").mkdir()
    tony_xml(home / "tony" / "tony.xml", {
        "tony.worker.instances": "2", "tony.worker.memory": "256m",
        "tony.application.framework": "standalone"})
    (home / "src" / "models").mkdir(parents=True)
    (home / "src" / "models" / "report.py").write_text(
        "import os, sys, tony_venv_marker\n"
        "print('REPORT', os.environ['JOB_NAME'], os.environ['TASK_INDEX'], sys.argv[1:],\n"
        "      tony_venv_marker.WHERE, flush=True)\n")
    tony_venv_zip(home)
    code, out, _ = run([y.SUBMIT,
                        "-executes", "src/models/report.py",
                        "-task_params", "--steps 2500 --batch_size 64",
                        "-python_venv", "my-venv.zip",
                        "-python_binary_path", "Python/bin/python",
                        "-src_dir", "src",
                        "-shell_env", "LD_LIBRARY_PATH=/usr/java/latest/jre/lib/amd64/server",
                        "-conf_file", "tony/tony.xml"], home, timeout=300)
    assert out.splitlines()[0] == (
        "tony-submit: backend yarn: a Hadoop configuration is found (HADOOP_CONF_DIR="
        f"{os.environ['HADOOP_CONF_DIR']}); --backend local runs the job on this machine"), out
    app = assert_succeeded(code, out)  # the RM knows the application
    logs = task_logs(app, 2, "REPORT worker")
    assert logs.count("the zipped venv") == 2, logs[-3000:]
