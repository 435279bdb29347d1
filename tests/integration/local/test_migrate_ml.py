"""The YARN-DTF design's four ytf-submit examples and TonY's README example,
training a small TensorFlow model (tests/integration/migrate/dtf_mnist.py:
parameter servers and workers, between-graph replication) on the local
backend. The shapes are the design's, with two workers where its first
example has four (two cores), and -m 1024 where its default is 8 GiB."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tonyjob
from test_migrate import run_tool, tasks_stdout, tony_venv_zip, tony_xml

pytest.importorskip("tensorflow")

SCRIPT = tonyjob.SOURCE_DIR / "tests" / "integration" / "migrate" / "dtf_mnist.py"
CLUSTER_ARGS = ("--job_name ${DTF_TASK_JOB_NAME} --task_index ${DTF_TASK_INDEX} "
                "--ps_hosts ${DTF_PS_HOSTS} --worker_hosts ${DTF_WORKER_HOSTS}")


def mnist_home(sandbox):
    """/home/user1/mnist of the design: the script, data/ and room for train/."""
    home = sandbox.root / "mnist"
    (home / "data").mkdir(parents=True)
    shutil.copy(SCRIPT, home / "mnist.py")
    (home / "data" / "points.csv").write_text("1,3\n2,6\n3,9\n4,12\n")
    return home


def ytf(sandbox, *args):
    return run_tool(sandbox, "ytf-submit", "-m", "1024", *args, timeout=600)


def assert_trained(out, workers, train_dir=None):
    assert out.rc == 0, out.describe()
    outs = tasks_stdout(out)
    for i in range(workers):
        text = outs[f"worker:{i}"]
        assert "dtf example OK" in text and "converged=True" in text, text
        if train_dir is not None:
            assert (Path(train_dir) / f"worker-{i}.done").exists(), list(Path(train_dir).iterdir())
    return outs


def test_ytf_example_simple_submission(sandbox):
    home = mnist_home(sandbox)
    out = ytf(sandbox, "-r", "ps:1,worker:2",
              f"python {home}/mnist.py {CLUSTER_ARGS} "
              f"--data_dir {home}/data --train_dir {home}/train")
    outs = assert_trained(out, 2, home / "train")
    assert "points=4" in outs["worker:0"], outs["worker:0"]
    assert out.status()["name"] == "TensorFlow"


def test_ytf_example_enabling_tensorboard(sandbox):
    home = mnist_home(sandbox)
    out = ytf(sandbox, "--tensorboard", "-i", f"{home}/data", "-o", f"{home}/train10",
              "-r", "ps:1,worker:2",
              f"python {home}/mnist.py {CLUSTER_ARGS} "
              "--data_dir ${DTF_INPUT_PATH} --train_dir ${DTF_OUTPUT_PATH}")
    assert_trained(out, 2, home / "train10")
    types = {t["type"] for t in out.status()["tasks"]}
    assert types == {"ps", "worker", "tensorboard"}, types


def test_ytf_example_passing_the_script_file(sandbox):
    home = mnist_home(sandbox)
    out = ytf(sandbox, "--tensorboard", "-i", f"{home}/data", "-o", f"{home}/train10",
              "-r", "ps:1,worker:2", "-s", f"{home}/mnist.py",
              "python ${DTF_TASK_SCRIPT} " + CLUSTER_ARGS +
              " --data_dir ${DTF_INPUT_PATH} --train_dir ${DTF_OUTPUT_PATH}")
    assert_trained(out, 2, home / "train10")


def test_ytf_example_using_hdfs_paths(sandbox):
    home = mnist_home(sandbox)
    out = ytf(sandbox, "--tensorboard", "-i", "hdfs://users/user1/mnist/data", "-o",
              "hdfs://users/user1/mnist/train10", "-r", "ps:1,worker:2", "-s",
              f"{home}/mnist.py",
              "python ${DTF_TASK_SCRIPT} " + CLUSTER_ARGS +
              " --data_dir ${DTF_INPUT_PATH} --train_dir ${DTF_OUTPUT_PATH}")
    outs = assert_trained(out, 2)
    for i in range(2):
        assert ("data_dir=hdfs://users/user1/mnist/data "
                "train_dir=hdfs://users/user1/mnist/train10") in outs[f"worker:{i}"]


def test_tonys_readme_example_trains(sandbox):
    (sandbox.root / "tony").mkdir()
    tony_xml(sandbox.root / "tony" / "tony.xml", {
        "tony.worker.instances": "4", "tony.worker.memory": "1g", "tony.ps.memory": "1g"})
    models = sandbox.root / "src" / "models"
    models.mkdir(parents=True)
    shutil.copy(SCRIPT, models / "mnist_distributed.py")
    tony_venv_zip(sandbox.root)
    out = run_tool(sandbox, "tony-submit",
                   "-executes", "src/models/mnist_distributed.py",
                   "-task_params", "--steps 25 --batch_size 64",
                   "-python_venv", "my-venv.zip",
                   "-python_binary_path", "Python/bin/python",
                   "-src_dir", "src",
                   "-shell_env", "LD_LIBRARY_PATH=/usr/java/latest/jre/lib/amd64/server",
                   "-conf_file", "tony/tony.xml",
                   "-conf", "tony.ps.instances=1",
                   "-conf", "tony.worker.instances=2",
                   timeout=600)
    outs = assert_trained(out, 2)
    for i in range(2):
        text = outs[f"worker:{i}"]
        assert "extra=['--batch_size', '64']" in text, text
        assert "venv/Python" in text, "the zipped venv's interpreter ran: " + text


def test_the_dataproc_actions_samples_train_with_tensorflow_and_pytorch(sandbox):
    """scripts/dataproc/tony.sh on this machine as a master (its samples'
    deps/ run the node's python3: this test's, which has TensorFlow and
    PyTorch), then the guide's two submissions: each sample trains its
    model with the real framework, two workers together."""
    pytest.importorskip("torch")
    root = sandbox.root
    (root / "bundle").mkdir()
    bundle = tonyjob.bundle_tarball(root / "bundle")
    env = {**os.environ, "TONY_DATAPROC_ROLE": "Master",
           "TONY_DATAPROC_BUNDLE": str(bundle),
           "TONY_DATAPROC_PREFIX": str(root / "opt"), "TONY_DATAPROC_BIN_DIR": str(root / "bin"),
           "TONY_DATAPROC_PROFILE": str(root / "profile.sh"), "TONY_GET_METADATA": "/bin/false",
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    r = subprocess.run(["bash", str(tonyjob.SOURCE_DIR / "scripts" / "dataproc" / "tony.sh")],
                       env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    samples = root / "opt" / "TonY-samples"
    for job, results, params, deps, framework in (
            ("TFJob", root / "tf-out", "--data_dir {root}/ --working_dir {out}", "tf",
             "tensorflow "),
            ("PTJob", root / "pt-out", "--root {out}", "pytorch", "torch ")):
        params = params.format(root=root, out=results)
        out = run_tool(sandbox, "tony-submit", f"--src_dir={samples}/jobs/{job}/src",
                       f"--task_params={params}", f"--conf_file={samples}/jobs/{job}/tony.xml",
                       "--executes", "mnist_distributed.py",
                       f"--python_venv={samples}/deps/{deps}.zip",
                       f"--python_binary_path={deps}/bin/python3", timeout=600)
        assert out.rc == 0, out.describe()
        for i in range(2):
            result = json.loads((results / f"worker-{i}.json").read_text())
            assert result["framework"].startswith(framework), result
            assert result["replicas"] == 2 and result["accuracy"] > 0.9, result
