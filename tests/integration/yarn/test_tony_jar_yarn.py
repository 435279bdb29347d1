"""TonY's two java command lines through tony's jar (compat/java,
doc/migrating.md "TonY's jar") on the real local YARN (ctest fixture
`yarn`): TonY's README submission (`java -cp "`hadoop classpath
--glob`:tony/*:tony" com.linkedin.tony.cli.ClusterSubmitter -executes ...`,
tony.xml found on the classpath, the Hadoop configuration found there too)
and the Dataproc guide's `--flag=value` submission, each unchanged but for
paths, running a tiny job to success.

`hadoop` is scripts/yarn/yarn.sh for the test cluster: its `classpath`
puts the cluster's configuration directory first, as Hadoop's does."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import yarnlib as y

sys.path.insert(0, os.path.join(y.ROOT, "tests", "integration", "local"))
from test_migrate import tony_venv_zip, tony_xml  # noqa: E402

JAR = os.environ.get("TONY_CLI_JAR", "")

# Stands for TonY's mnist_distributed.py: says who ran it, with which
# interpreter and arguments.
SCRIPT = """import os, sys
import tony_venv_marker
print("JAR JOB OK", os.environ["JOB_NAME"], os.environ["TASK_INDEX"], tony_venv_marker.WHERE,
      "argv=" + " ".join(sys.argv[1:]), "LD=" + os.environ.get("LD_LIBRARY_PATH", ""))
"""


@pytest.fixture
def home():
    if not JAR or not os.path.exists(JAR):
        pytest.fail("no TONY_CLI_JAR: the jar was not built (TONY_BUILD_JAR)")
    d = Path(tempfile.mkdtemp(prefix="tony-jar-yarn-"))
    shim = d / "hadoop-bin" / "hadoop"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{y.YARN_SH}" "$@"\n')
    shim.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def java_env(home, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "TONY_HOME")}
    env["PATH"] = f"{home / 'hadoop-bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env.update(extra)
    return env


def bash(command, cwd, env):
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    return proc.returncode, proc.stdout


def worker_lines(app, count):
    said = []

    def aggregated():
        said[:] = [y.yarn_cli("logs", "-applicationId", app, "-log_files", "stdout")]
        return said[0].count("JAR JOB OK") >= count
    y.wait_until(aggregated, 90)
    return [line for line in said[0].splitlines() if line.startswith("JAR JOB OK")]


def test_tonys_readme_java_command_runs_through_the_jar(home):
    # TonY's README layout: tony/ holds the jar and tony.xml, src/models the code.
    (home / "tony").mkdir()
    shutil.copy(JAR, home / "tony" / "tony-cli-0.1.0-SNAPSHOT-all.jar")
    tony_xml(home / "tony" / "tony.xml", {
        "tony.worker.instances": "2", "tony.worker.memory": "256m",
        "tony.ps.memory": "256m"})
    (home / "src" / "models").mkdir(parents=True)
    (home / "src" / "models" / "mnist_distributed.py").write_text(SCRIPT)
    tony_venv_zip(home)
    # tony-submit on PATH; no HADOOP_CONF_DIR: the jar takes the classpath's.
    env = java_env(home)
    env["PATH"] = f"{y.BIN}:{env['PATH']}"
    code, out = bash(
        'java -cp "`hadoop classpath --glob`:tony/*:tony" \\\n'
        '            com.linkedin.tony.cli.ClusterSubmitter \\\n'
        '            -executes src/models/mnist_distributed.py \\\n'
        "            -task_params '--input_dir /path/to/hdfs/input --output_dir "
        "/path/to/hdfs/output --steps 2500 --batch_size 64' \\\n"
        '            -python_venv my-venv.zip \\\n'
        '            -python_binary_path Python/bin/python \\\n'
        '            -src_dir src \\\n'
        '            -shell_env LD_LIBRARY_PATH=/usr/java/latest/jre/lib/amd64/server\n',
        home, env)
    assert code == 0, out
    assert f"tony.xml from the classpath: {home / 'tony' / 'tony.xml'}" in out, out
    conf_dir = os.environ["HADOOP_CONF_DIR"]
    assert f"Hadoop configuration from the classpath: HADOOP_CONF_DIR={conf_dir}" in out, out
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "SUCCEEDED"
    lines = worker_lines(app, 2)
    # Two workers: tony.xml's tony.worker.instances (TonY's default is one).
    assert sorted(line.split()[4] for line in lines) == ["0", "1"], lines
    for line in lines:
        assert "the zipped venv" in line, line
        assert ("argv=--input_dir /path/to/hdfs/input --output_dir /path/to/hdfs/output "
                "--steps 2500 --batch_size 64") in line, line
        assert "LD=/usr/java/latest/jre/lib/amd64/server" in line, line


def test_dataproc_guide_flag_equals_submission_runs_through_the_jar(home):
    # The guide's samples folder, in TonY's layout, under home instead of /opt/tony.
    samples = home / "TonY-samples"
    (samples / "jobs" / "TFJob" / "src").mkdir(parents=True)
    (samples / "deps").mkdir()
    shutil.copy(JAR, samples / "tony-cli-0.1.0-all.jar")
    tony_xml(samples / "jobs" / "TFJob" / "tony.xml", {
        "tony.worker.instances": "2", "tony.worker.memory": "256m"})
    (samples / "jobs" / "TFJob" / "src" / "mnist_distributed.py").write_text(SCRIPT)
    tony_venv_zip(samples / "deps", name="tf.zip", top="tf")
    # What the cluster's job driver does with --class and --jars: the class
    # on Hadoop's classpath plus the jar, HADOOP_CONF_DIR set, tony-submit
    # found at TONY_HOME.
    env = java_env(home, HADOOP_CONF_DIR=os.environ["HADOOP_CONF_DIR"],
                   TONY_HOME=str(Path(y.BIN).parent), TONY_JARFILE="tony-cli-0.1.0-all.jar")
    code, out = bash(
        f'java -cp "`hadoop classpath --glob`:{samples}/${{TONY_JARFILE}}" '
        'com.linkedin.tony.cli.ClusterSubmitter \\\n'
        f'--src_dir={samples}/jobs/TFJob/src \\\n'
        "--task_params='--data_dir /tmp/ --working_dir /tmp/' \\\n"
        f'--conf_file={samples}/jobs/TFJob/tony.xml \\\n'
        '--executes mnist_distributed.py \\\n'
        f'--python_venv={samples}/deps/tf.zip \\\n'
        '--python_binary_path=tf/bin/python3\n',
        home, env)
    assert code == 0, out
    assert "tony.xml from the classpath" not in out, out
    app = y.app_id_of(out)
    assert y.app_status(app)["Final-State"] == "SUCCEEDED"
    lines = worker_lines(app, 2)
    assert sorted(line.split()[4] for line in lines) == ["0", "1"], lines
    for line in lines:
        assert "the zipped venv" in line and "argv=--data_dir /tmp/ --working_dir /tmp/" in line
