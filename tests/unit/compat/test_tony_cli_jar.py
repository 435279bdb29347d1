"""TonY's jar (compat/java, doc/migrating.md "TonY's jar") against a fake
tony-submit: a script that records its arguments, its environment and the
tony.xml it was handed, prints a line on each stream and exits 7.

The jar under test is a copy in a scratch directory ($TONY_CLI_JAR is the
built one, whose ../bin holds the real tony-submit)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

JAR = os.environ.get("TONY_CLI_JAR", "")
SUBMITTER = "com.linkedin.tony.cli.ClusterSubmitter"

FAKE = """#!/bin/sh
rec="$TONY_FAKE_RECORD"
echo "$0" > "$rec.self"
for a in "$@"; do printf '%s\\0' "$a"; done > "$rec.argv"
env > "$rec.env"
prev=""
for a in "$@"; do
  if [ "$prev" = --conf_file ]; then cat "$a" > "$rec.conf"; echo "$a" > "$rec.confpath"; fi
  prev="$a"
done
if [ -n "$TONY_FAKE_WAIT" ]; then
  trap 'echo TERM > "$rec.signal"; exit 1' TERM
  : > "$rec.started"
  while :; do sleep 0.1; done
fi
echo "fake tony-submit stdout"
echo "fake tony-submit stderr" >&2
exit 7
"""

TONY_XML = "<configuration><property><name>tony.worker.instances</name>" \
           "<value>3</value></property></configuration>\n"


@pytest.fixture
def box():
    if not JAR or not os.path.exists(JAR):
        pytest.skip("no TONY_CLI_JAR (configure with TONY_BUILD_JAR=ON)")
    d = Path(tempfile.mkdtemp(prefix="tony-cli-jar-"))
    (d / "lib").mkdir()
    shutil.copy(JAR, d / "lib" / "tony-cli-all.jar")
    (d / "work").mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)


def fake_submit(directory):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tony-submit"
    path.write_text(FAKE)
    path.chmod(0o755)
    return path


def java(box, args, classpath=(), env=None, main=SUBMITTER, jar_mode=False):
    """Runs the jar's main; returns (exit code, stdout, stderr)."""
    full_env = {"PATH": "/usr/bin:/bin", "TONY_FAKE_RECORD": str(box / "rec")}
    if "JAVA_HOME" in os.environ:
        full_env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    full_env.update(env or {})
    jar = str(box / "lib" / "tony-cli-all.jar")
    if jar_mode:
        cmd = ["java", "-jar", jar]
    else:
        cmd = ["java", "-cp", ":".join([jar, *map(str, classpath)]), main]
    proc = subprocess.run(cmd + list(args), cwd=box / "work", env=full_env,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def argv(box):
    return (box / "rec.argv").read_text().split("\0")[:-1]


def env_of(box):
    out = {}
    for line in (box / "rec.env").read_text().splitlines():
        k, _, v = line.partition("=")
        out[k] = v
    return out


def test_single_dash_flags_reach_tony_submit_with_its_exit_code_and_streams(box):
    fake_submit(box / "home" / "bin")
    conf = box / "hadoop-conf"
    conf.mkdir()
    args = ["-executes", "src/models/mnist_distributed.py",
            "-task_params", "--input_dir /in --steps 2500",
            "-python_venv", "my-venv.zip", "-python_binary_path", "Python/bin/python",
            "-src_dir", "src", "-shell_env", "LD_LIBRARY_PATH=/x",
            "-conf", "tony.ps.instances=2", "-conf", "tony.worker.instances=2"]
    code, out, err = java(box, args, env={"TONY_HOME": str(box / "home"),
                                          "HADOOP_CONF_DIR": str(conf)})
    assert code == 7, err
    assert out == "fake tony-submit stdout\n", out
    assert "fake tony-submit stderr" in err, err
    assert argv(box) == ["--backend", "yarn", *args]
    assert env_of(box)["HADOOP_CONF_DIR"] == str(conf)


def test_double_dash_equals_flags_reach_tony_submit_unchanged(box):
    fake_submit(box / "home" / "bin")
    (box / "cp").mkdir()
    (box / "cp" / "tony.xml").write_text(TONY_XML)
    args = ["--src_dir=/opt/tony/TonY-samples/jobs/TFJob/src",
            "--task_params=--data_dir /tmp/ --working_dir /tmp/",
            "--conf_file=/opt/tony/TonY-samples/jobs/TFJob/tony.xml",
            "--executes", "mnist_distributed.py",
            "--python_venv=/opt/tony/TonY-samples/deps/tf.zip",
            "--python_binary_path=tf/bin/python3.5"]
    # A --conf_file wins over the classpath's tony.xml, as in TonY.
    code, _, err = java(box, args, classpath=[box / "cp"],
                        env={"TONY_HOME": str(box / "home")})
    assert code == 7, err
    assert argv(box) == ["--backend", "yarn", *args]


def test_a_backend_given_is_left_alone(box):
    fake_submit(box / "home" / "bin")
    code, _, err = java(box, ["--backend=local", "-executes", "x.py"],
                        env={"TONY_HOME": str(box / "home")})
    assert code == 7, err
    assert argv(box) == ["--backend=local", "-executes", "x.py"]


def test_tony_xml_in_a_classpath_directory_is_the_conf_file(box):
    fake_submit(box / "home" / "bin")
    (box / "tony").mkdir()
    (box / "tony" / "tony.xml").write_text(TONY_XML)
    code, _, err = java(box, ["-executes", "x.py"], classpath=[box / "tony"],
                        env={"TONY_HOME": str(box / "home")})
    assert code == 7, err
    assert argv(box) == ["--backend", "yarn", "--conf_file", str(box / "tony" / "tony.xml"),
                         "-executes", "x.py"]
    assert f"tony.xml from the classpath: {box / 'tony' / 'tony.xml'}" in err, err


def test_tony_xml_in_a_classpath_jar_is_copied_out_and_removed_at_exit(box):
    fake_submit(box / "home" / "bin")
    with zipfile.ZipFile(box / "conf.jar", "w") as z:
        z.writestr("tony.xml", TONY_XML)
    code, _, err = java(box, ["-executes", "x.py"], classpath=[box / "conf.jar"],
                        env={"TONY_HOME": str(box / "home")})
    assert code == 7, err
    copy = (box / "rec.confpath").read_text().strip()
    assert argv(box) == ["--backend", "yarn", "--conf_file", copy, "-executes", "x.py"]
    assert (box / "rec.conf").read_text() == TONY_XML
    assert os.path.basename(copy) == "tony.xml"
    assert not os.path.exists(copy) and not os.path.exists(os.path.dirname(copy)), copy


def test_hadoop_conf_on_the_classpath_becomes_hadoop_conf_dir(box):
    fake_submit(box / "home" / "bin")
    conf = box / "etc-hadoop"
    conf.mkdir()
    (conf / "core-site.xml").write_text("<configuration/>\n")
    (conf / "yarn-site.xml").write_text("<configuration/>\n")
    code, _, err = java(box, ["-executes", "x.py"], classpath=[conf],
                        env={"TONY_HOME": str(box / "home")})
    assert code == 7, err
    assert env_of(box)["HADOOP_CONF_DIR"] == str(conf)
    # HADOOP_CONF_DIR, when set, wins over the classpath.
    code, _, err = java(box, ["-executes", "x.py"], classpath=[conf],
                        env={"TONY_HOME": str(box / "home"), "HADOOP_CONF_DIR": "/elsewhere"})
    assert env_of(box)["HADOOP_CONF_DIR"] == "/elsewhere"


def test_yarn_conf_dir_alone_becomes_hadoop_conf_dir(box):
    fake_submit(box / "home" / "bin")
    code, _, err = java(box, ["-executes", "x.py"],
                        env={"TONY_HOME": str(box / "home"), "YARN_CONF_DIR": "/etc/yarn"})
    assert code == 7, err
    assert env_of(box)["HADOOP_CONF_DIR"] == "/etc/yarn"


def test_tony_submit_is_found_beside_the_jar_then_bin_then_tony_home_then_path(box):
    env = {"TONY_HOME": str(box / "home"), "PATH": f"{box / 'path'}:/usr/bin:/bin"}
    places = [box / "path", box / "home" / "bin", box / "bin", box / "lib"]
    for place in places:
        fake_submit(place)
    for place in reversed(places):
        code, _, err = java(box, ["-executes", "x.py"], env=env)
        assert code == 7, err
        assert (box / "rec.self").read_text() == f"{place / 'tony-submit'}\n", place
        (place / "tony-submit").unlink()


def test_a_missing_tony_submit_is_a_clear_error(box):
    code, out, err = java(box, ["-executes", "x.py"], env={"TONY_HOME": str(box / "nowhere")})
    assert code == 2, err
    assert out == ""
    assert "tony-cli: tony-submit not found; looked in " in err, err
    for place in [box / "lib", box / "bin", box / "nowhere" / "bin", "PATH=/usr/bin:/bin",
                  "Set TONY_HOME"]:
        assert str(place) in err, (place, err)
    code, _, err = java(box, ["-executes", "x.py"])
    assert code == 2 and "TONY_HOME is not set" in err, err


def test_tony_client_and_hadoop_jar_forms_run_the_same(box):
    fake_submit(box / "home" / "bin")
    env = {"TONY_HOME": str(box / "home")}
    code, _, err = java(box, ["-executes", "x.py"], env=env, main="com.linkedin.tony.TonyClient")
    assert code == 7 and argv(box) == ["--backend", "yarn", "-executes", "x.py"], err
    # hadoop jar tony-cli.jar CLASS ARGS: the manifest's main gets the class first.
    code, _, err = java(box, [SUBMITTER, "-executes", "x.py"], env=env, jar_mode=True)
    assert code == 7 and argv(box) == ["--backend", "yarn", "-executes", "x.py"], err


def test_a_signalled_jvm_stops_tony_submit(box):
    fake_submit(box / "home" / "bin")
    env = {"PATH": "/usr/bin:/bin", "TONY_FAKE_RECORD": str(box / "rec"),
           "TONY_HOME": str(box / "home"), "TONY_FAKE_WAIT": "1"}
    jar = str(box / "lib" / "tony-cli-all.jar")
    proc = subprocess.Popen(["java", "-cp", jar, SUBMITTER, "-executes", "x.py"],
                            cwd=box / "work", env=env)
    try:
        deadline = time.monotonic() + 30
        while not (box / "rec.started").exists():
            assert time.monotonic() < deadline, "the fake tony-submit never started"
            assert proc.poll() is None, proc.returncode
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
    assert (box / "rec.signal").read_text() == "TERM\n"


def test_the_built_jar_finds_its_tony_submit_which_parses_both_forms(box):
    # The build's own layout: lib/tony-cli-<version>-all.jar, ../bin/tony-submit.
    submit = Path(JAR).parent.parent / "bin" / "tony-submit"
    if not submit.exists():
        pytest.skip(f"no {submit} (build tony-submit)")
    (box / "work" / "src").mkdir()
    (box / "work" / "src" / "train.py").write_text("print('hi')\n")
    (box / "tony").mkdir()
    (box / "tony" / "tony.xml").write_text(TONY_XML)
    forms = [
        ["-executes", "src/train.py", "-task_params", "--steps 5 --lr 0.1", "-src_dir", "src",
         "-shell_env", "A=B", "-conf", "tony.worker.memory=256m", "--dry-run"],
        ["--executes=src/train.py", "--task_params=--steps 5 --lr 0.1", "--src_dir=src",
         "--shell_env", "A=B", "--conf=tony.worker.memory=256m", "--dry-run"],
    ]
    specs = []
    for args in forms:
        proc = subprocess.run(["java", "-cp", f"{JAR}:{box / 'tony'}", SUBMITTER, *args],
                              cwd=box / "work", capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        specs.append(json.loads(proc.stdout))
    assert specs[0] == specs[1]
    job = specs[0]
    assert job["cluster"]["backend"] == "yarn"
    worker = next(t for t in job["tasks"] if t["name"] == "worker")
    assert worker["instances"] == 3, worker  # from the classpath's tony.xml
    assert worker["capability"]["memory_mb"] == 256, worker
    command = worker["command"] or job["code"]["command"]
    assert command.endswith("train.py --steps 5 --lr 0.1"), command
    assert job["env"]["A"] == "B", job["env"]
