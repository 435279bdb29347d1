"""Users of TonY, YARN-DTF and tf-yarn on the local backend (doc/migrating.md):
TonY's command line and tony.xml, ytf-submit, shipped files and archives,
Python environments in TonY's layouts and as a pex, --print-toml, and every
bad input they can bring. The jobs here train nothing (test_migrate_ml.py
does); they check what the tasks see."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import tonyjob

HERE = Path(__file__).resolve().parent


def run_tool(sandbox, tool, *args, timeout=60, cwd=None, env=None, replace_env=False):
    """Runs tony-submit or ytf-submit with the sandbox's jobs_dir, to the end;
    `env` adds variables (is the whole environment with `replace_env`)."""
    argv = [str(tonyjob.bin_dir() / tool), *args,
            "--set", f'cluster.jobs_dir="{sandbox.jobs_dir}"']
    env = dict(env) if replace_env else {**tonyjob.task_environment(), **(env or {})}
    old = os.getcwd()
    os.chdir(cwd or sandbox.root)
    try:
        r = tonyjob.Running(sandbox, argv, env)
    finally:
        os.chdir(old)
    sandbox.running.append(r)
    return r.wait(timeout)


def tony_xml(path, props):
    lines = ["<configuration>"]
    for k, v in props.items():
        lines += ["  <property>", f"    <name>{k}</name>", f"    <value>{v}</value>",
                  "  </property>"]
    path.write_text("\n".join(lines + ["</configuration>", ""]))


def tony_venv_zip(root, name="my-venv.zip", top="Python"):
    """A small venv zipped in TonY's layout (<top>/bin/python at the top):
    --copies, because Hadoop's unzip does not restore symlinks, and
    --system-site-packages plus a .pth onto the test venv for TensorFlow. A
    marker module proves which interpreter ran."""
    build = root / "venv-build"
    venv = build / top
    subprocess.run(["/usr/bin/python3", "-m", "venv",
                    "--copies", "--without-pip", "--system-site-packages", str(venv)],
                   check=True)
    site = next((venv / "lib").glob("python3*")) / "site-packages"
    outer = Path(os.environ.get("TONY_VENV", tonyjob.SOURCE_DIR / ".venv"))
    outer_site = next((outer / "lib").glob("python3*")) / "site-packages"
    (site / "outer.pth").write_text(str(outer_site) + "\n")
    (site / "tony_venv_marker.py").write_text("WHERE = 'the zipped venv'\n")
    out = root / name
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(venv.rglob("*")):
            if p.is_symlink() and p.is_dir():
                continue  # lib64 -> lib
            info = zipfile.ZipInfo.from_file(p, p.relative_to(build))
            if p.is_dir():
                z.writestr(info, "")
            else:
                with open(p, "rb") as f:
                    z.writestr(info, f.read(), zipfile.ZIP_DEFLATED)
    shutil.rmtree(build)
    return out


def tasks_stdout(out):
    st = out.status()
    assert st is not None, out.describe()
    return {f"{t['type']}:{t['index']}": Path(t["log_dir"], "stdout").read_text()
            for t in st["tasks"]}


def without_comments(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("#")).strip()


# -- TonY ------------------------------------------------------------------------------


def tonys_readme(sandbox, python_binary_path="Python/bin/python"):
    """TonY's README job: tony/tony.xml, src/ and a zipped venv; the task
    reports which interpreter ran it."""
    (sandbox.root / "tony").mkdir()
    tony_xml(sandbox.root / "tony" / "tony.xml", {
        "tony.worker.instances": "2", "tony.worker.memory": "256m",
        "tony.ps.memory": "3g", "tony.application.framework": "standalone"})
    models = sandbox.root / "src" / "models"
    models.mkdir(parents=True)
    (models / "report.py").write_text(
        "import os, sys, tony_venv_marker\n"
        "print('REPORT', os.environ['JOB_NAME'], os.environ['TASK_INDEX'], sys.argv[1:],\n"
        "      tony_venv_marker.WHERE, os.environ['LD_LIBRARY_PATH'], flush=True)\n")
    tony_venv_zip(sandbox.root)
    return ["-executes", "src/models/report.py",
            "-task_params", "--steps 2500 --batch_size 64",
            "-python_venv", "my-venv.zip",
            "-python_binary_path", python_binary_path,
            "-src_dir", "src",
            "-shell_env", "LD_LIBRARY_PATH=/usr/java/latest/jre/lib/amd64/server",
            "-conf_file", "tony/tony.xml"]


def test_tonys_readme_command_line_runs(sandbox):
    out = run_tool(sandbox, "tony-submit", *tonys_readme(sandbox), timeout=120)
    assert out.rc == 0, out.describe()
    assert "note: tony.ps.* ignored" in out.stderr, out.stderr
    outs = tasks_stdout(out)
    assert set(outs) == {"worker:0", "worker:1"}, outs
    for name, text in outs.items():
        assert "REPORT worker" in text, (name, text)
        assert "['--steps', '2500', '--batch_size', '64']" in text, text
        assert "the zipped venv" in text, text
        assert "/usr/java/latest/jre/lib/amd64/server" in text, text


def test_missing_python_binary_path_fails_the_task_clearly(sandbox):
    out = run_tool(sandbox, "tony-submit", *tonys_readme(sandbox, "Python/bin/pyhton"),
                   timeout=120)
    assert out.rc == 1, out.describe()
    assert ("python_binary_path 'Python/bin/pyhton' does not exist in the unpacked "
            "python_venv") in out.output, out.output
    assert "the venv holds: Python/" in out.output, out.output


def test_tony_xml_as_the_job_file_and_print_toml_round_trip(sandbox):
    args = tonys_readme(sandbox)
    printed = run_tool(sandbox, "tony-submit", *args, "--print-toml")
    assert printed.rc == 0, printed.describe()
    assert printed.app_id is None, "--print-toml submits nothing"
    assert "# note: tony.ps.* ignored" in printed.stdout, printed.stdout
    elsewhere = sandbox.root / "kept"
    elsewhere.mkdir()
    (elsewhere / "job.toml").write_text(printed.stdout)
    again = run_tool(sandbox, "tony-submit", str(elsewhere / "job.toml"), "--print-toml",
                     cwd=elsewhere)
    assert again.rc == 0, again.describe()
    assert without_comments(again.stdout) == without_comments(printed.stdout)
    # And the kept job.toml runs.
    out = run_tool(sandbox, "tony-submit", str(elsewhere / "job.toml"), timeout=120)
    assert out.rc == 0, out.describe()


def test_tony_xml_alone_is_read_as_tonys_configuration(sandbox):
    tony_xml(sandbox.root / "tony.xml", {"tony.worker.instances": "1",
                                         "tony.application.framework": "standalone",
                                         "tony.containers.command": "echo from-xml $GREETING"})
    # --shell_env right before the file: it takes one value, not the file too.
    out = run_tool(sandbox, "tony-submit", "--shell_env", "GREETING=hi",
                   str(sandbox.root / "tony.xml"))
    assert out.rc == 0, out.describe()
    assert "from-xml hi" in tasks_stdout(out)["worker:0"]


def test_unknown_tony_key_names_its_place_and_the_closest_key(sandbox):
    tony_xml(sandbox.root / "tony.xml", {"tony.worker.instances": "1",
                                         "tony.worker.memroy": "4g"})
    out = run_tool(sandbox, "tony-submit", "--conf_file", "tony.xml", "--executes", "x.py",
                   "--conf", "tony.application.nmae=x")
    assert out.rc == 2, out.describe()
    assert ("tony.xml:6:3: tony.worker.memroy=4g: unknown TonY key 'tony.worker.memroy'; "
            "did you mean 'tony.worker.memory'?") in out.stderr, out.stderr
    assert ("--conf tony.application.nmae=x: unknown TonY key 'tony.application.nmae'; did "
            "you mean 'tony.application.name'?") in out.stderr, out.stderr
    assert out.app_id is None


def test_malformed_tony_xml_names_file_and_line(sandbox):
    (sandbox.root / "tony.xml").write_text(
        "<configuration>\n  <property>\n    <name>tony.worker.instances</name>\n"
        "    <value>2</value>\n  </propery>\n</configuration>\n")
    out = run_tool(sandbox, "tony-submit", "tony.xml")
    assert out.rc == 2, out.describe()
    assert out.stderr.startswith("tony.xml:5:"), out.stderr
    assert "malformed XML" in out.stderr, out.stderr


def test_set_with_a_tony_key_says_what_to_do(sandbox):
    job = sandbox.job('[code]\ncommand = "true"\n[tasks.worker]\n')
    out = run_tool(sandbox, "tony-submit", str(job), "--set", "tony.worker.instances=2")
    assert out.rc == 2, out.describe()
    assert "--conf tony.worker.instances=2" in out.stderr, out.stderr
    assert "--set tasks.worker.instances=2" in out.stderr, out.stderr


def test_tony_fail_on_worker_failure_false_tolerates_a_failed_worker(sandbox):
    # TonY's fail-on-worker-failure-enabled=false is [policy] tolerated_failures.
    out = run_tool(sandbox, "tony-submit", "--conf",
                   'tony.containers.command=if [ "$TASK_INDEX" = 1 ]; then exit 1; fi',
                   "--conf", "tony.worker.instances=3", "--conf",
                   "tony.application.fail-on-worker-failure-enabled=false")
    assert out.rc == 0, out.describe()
    assert "tolerated" in out.stdout + out.stderr, out.describe()


def test_tony_execution_timeout_ms_stops_a_task_that_runs_longer(sandbox):
    # TonY 0.4.8's tony.task.executor.execution-timeout-ms: every type's
    # execution_timeout; the job fails with the reason.
    out = run_tool(sandbox, "tony-submit", "--conf", "tony.containers.command=exec sleep 60",
                   "--conf", "tony.worker.instances=1", "--conf",
                   "tony.task.executor.execution-timeout-ms=2000",
                   env=no_hadoop_env(), replace_env=True)
    assert out.rc == 1, out.describe()
    assert out.elapsed < 30, out.describe()
    assert "worker:0 ran longer than its execution_timeout of 2s" in out.stdout, \
        out.describe()


def test_tony_am_startup_timeout_is_refused_by_name(sandbox):
    out = run_tool(sandbox, "tony-submit", "--conf", "tony.containers.command=true",
                   "--conf", "tony.worker.instances=1", "--conf",
                   "tony.am.startup-timeout=60000", env=no_hadoop_env(), replace_env=True)
    assert out.rc == 2, out.describe()
    assert ("--conf tony.am.startup-timeout=60000: tony-submit does not give up on an "
            "application whose ApplicationMaster has not started") in out.stderr, out.stderr
    assert out.app_id is None


# -- ytf-submit ------------------------------------------------------------------------


def ytf(sandbox, *args, timeout=60, env=None):
    return run_tool(sandbox, "ytf-submit", "-m", "256", *args, timeout=timeout, env=env)


@pytest.mark.parametrize("spec,message", [
    ("ps:x", "-r ps:x: the number of ps tasks must be a positive integer, got 'x'"),
    ("worker:0", "-r worker:0: the number of worker tasks must be a positive integer, got '0'"),
    ("", "-r : needs job_name:num_tasks pairs"),
])
def test_ytf_bad_cluster_requirement(sandbox, spec, message):
    out = ytf(sandbox, "-r", spec, "true")
    assert out.rc == 2, out.describe()
    assert message in out.stderr, out.stderr
    assert out.app_id is None


def test_ytf_tensorboard_needs_an_output(sandbox):
    out = ytf(sandbox, "-t", "-r", "worker:1", "true")
    assert out.rc == 2, out.describe()
    assert "-t/--tensorboard: needs -o/--output" in out.stderr, out.stderr


def test_ytf_docker_image_is_checked_then_run_in_a_container(sandbox):
    out = ytf(sandbox, "--docker_image", "Not/Valid Image", "-r", "worker:1", "true")
    assert out.rc == 2, out.describe()
    assert "--docker_image Not/Valid Image: 'image' \"Not/Valid Image\" is not a Docker " \
           "image name" in out.stderr, out.stderr
    # A valid one runs the task in the image (doc/docker.md); with no
    # container runtime the task fails saying so.
    out = ytf(sandbox, "--docker_image", "tensorflow/tensorflow:2.15.0", "-r", "worker:1",
              "true", env={"TONY_CONTAINER_RUNTIME": "/nonexistent/docker"})
    assert out.rc == 1, out.describe()
    assert "worker:0 runs in the Docker image tensorflow/tensorflow:2.15.0" in out.stdout, \
        out.describe()


def test_ytf_environment_script_and_task_level_resources(sandbox):
    script = sandbox.root / "show.sh"
    script.write_text('echo "SHOW $DTF_TASK_JOB_NAME:$DTF_TASK_INDEX script=$DTF_TASK_SCRIPT '
                      'in=$DTF_INPUT_PATH out=$DTF_OUTPUT_PATH ps=$DTF_PS_HOSTS '
                      'workers=$DTF_WORKER_HOSTS"\n'
                      'test -f "$DTF_TASK_SCRIPT" && echo "SCRIPT HERE"\n')
    out = ytf(sandbox, "-r", "ps:1,worker:2", "-s", "show.sh", "-i", "/data/in", "-o",
              "/data/out", "-m", "worker[1]:300", "-c", "ps:2", "-n", "dtf-env",
              "--set", "framework=\"standalone\"", "--set", "tasks.ps.tracked=true",
              "sh ${DTF_TASK_SCRIPT}")
    assert out.rc == 0, out.describe()
    outs = tasks_stdout(out)
    assert set(outs) == {"ps:0", "worker:0", "worker:1"}
    for name, text in outs.items():
        assert f"SHOW {name} script=show.sh in=/data/in out=/data/out" in text, text
        assert "SCRIPT HERE" in text, text
        assert "workers=127.0.0.1:" in text, text
    st = out.status()
    assert st["name"] == "dtf-env", st


def test_ytf_client_runs_here_outside_the_cluster(sandbox):
    # The servers wait for the client's file; the client ends the job.
    flag = sandbox.root / "client-was-here"
    cmd = (f'if [ "$DTF_TASK_JOB_NAME" = client ]; then echo "CLIENT sees $DTF_WORKER_HOSTS '
           f'index=$DTF_TASK_INDEX"; touch {flag}; exit 0; fi; '
           f'while [ ! -e {flag} ]; do sleep 0.1; done; sleep 30')
    out = ytf(sandbox, "--client", "-r", "worker:2", "--set", 'framework="standalone"', cmd,
              timeout=90)
    assert out.rc == 0, out.describe()
    assert "client:0 started" in out.stdout, out.stdout
    assert "CLIENT sees 127.0.0.1:" in out.stdout and "index=0" in out.stdout, out.stdout
    assert "client:0 exited with code 0: stopping the job" in out.stdout, out.stdout
    assert out.elapsed < 60, out.describe()


def test_ytf_print_toml_round_trip(sandbox):
    (sandbox.root / "mnist.py").write_text("print('x')\n")
    # -c right before the command: it takes one value, not the command too.
    printed = ytf(sandbox, "-t", "-o", "/tmp/out", "-r", "ps:1,worker:2", "-s", "mnist.py",
                  "--print-toml", "-c", "worker[1]:2",
                  "python ${DTF_TASK_SCRIPT} --job_name ${DTF_TASK_JOB_NAME}")
    assert printed.rc == 0, printed.describe()
    assert "[tasks.worker.index.1]" in printed.stdout, printed.stdout
    (sandbox.root / "job.toml").write_text(printed.stdout)
    again = run_tool(sandbox, "tony-submit", "job.toml", "--print-toml")
    assert again.rc == 0, again.describe()
    assert without_comments(again.stdout) == without_comments(printed.stdout)


# -- shipped files -----------------------------------------------------------------------


def test_files_and_archives_appear_in_the_working_directory(sandbox):
    root = sandbox.root
    (root / "vocab.txt").write_text("the vocabulary\n")
    (root / "helpers").mkdir()
    (root / "helpers" / "shipped_helper.py").write_text("GREETING = 'helper imported'\n")
    (root / "ps.conf").write_text("ps only\n")
    with zipfile.ZipFile(root / "data.zip", "w") as z:
        z.writestr("part-0.csv", "1,2\n")
    subprocess.run(["tar", "-czf", str(root / "model.tgz"), "-C", str(root), "vocab.txt"],
                   check=True)
    job = sandbox.job("""
name = "files"
framework = "standalone"
[code]
src_dir = "src"
command = "sh check.sh"
files = ["vocab.txt", { source = "helpers/shipped_helper.py", name = "shipped_helper.py" }]
archives = ["data.zip", { source = "model.tgz", name = "model" }]
[tasks.worker]
instances = 2
memory = "128m"
[tasks.ps]
memory = "128m"
tracked = true
files = ["ps.conf"]
""")
    (root / "src" / "check.sh").write_text(
        'set -e\n'
        'cat vocab.txt\n'
        'cat data.zip/part-0.csv\n'
        'cat model/vocab.txt\n'
        'test -f check.sh\n'
        'if [ "$JOB_NAME" = ps ]; then cat ps.conf; else test ! -e ps.conf; fi\n'
        'mkdir -p sub && cd sub && python3 -c "import shipped_helper as h; print(h.GREETING)"\n'
        'echo FILES OK\n')
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 0, out.describe()
    for name, text in tasks_stdout(out).items():
        assert "the vocabulary" in text and "1,2" in text and "helper imported" in text, text
        assert "FILES OK" in text, text
    assert "ps only" in tasks_stdout(out)["ps:0"]


def test_a_missing_file_is_refused_before_anything_runs(sandbox):
    job = sandbox.job('[code]\ncommand = "true"\nfiles = ["nowhere.txt"]\n[tasks.worker]\n')
    out = sandbox.submit(job, timeout=30)
    assert out.rc == 2, out.describe()
    assert 'files[0] in [code] "nowhere.txt" does not exist' in out.stderr, out.stderr
    assert out.app_id is None


def test_hdfs_files_need_the_yarn_backend(sandbox):
    job = sandbox.job('[code]\ncommand = "true"\nfiles = ["hdfs:///x/y.txt"]\n[tasks.worker]\n')
    out = sandbox.submit(job, timeout=30)
    assert out.rc == 2, out.describe()
    assert "[code] files hdfs:///x/y.txt: the local backend ships local paths only" \
        in out.stderr, out.stderr


def test_a_pex_is_the_tasks_python(sandbox):
    pex = shutil.which("pex") or str(Path(sys.executable).parent / "pex")
    if not os.access(pex, os.X_OK):
        pytest.skip("pex is not installed (scripts/requirements.txt)")
    lib = sandbox.root / "lib"
    lib.mkdir()
    (lib / "in_the_pex.py").write_text("WHERE = 'inside the pex'\n")
    subprocess.run([pex, "--python", "/usr/bin/python3", "-D", str(lib), "-o",
                    str(sandbox.root / "env.pex")], check=True, timeout=120)
    job = sandbox.job("""
framework = "standalone"
[code]
src_dir = "src"
python_venv = "env.pex"
command = "python3 -c 'import in_the_pex, sys; print(in_the_pex.WHERE, sys.argv)' x"
[tasks.worker]
memory = "128m"
""")
    out = sandbox.submit(job, timeout=60)
    assert out.rc == 0, out.describe()
    assert "inside the pex" in tasks_stdout(out)["worker:0"]


# -- where the job goes ------------------------------------------------------------------


def no_hadoop_env(**extra):
    """No Hadoop configuration anywhere: no HADOOP_CONF_DIR, YARN_CONF_DIR or
    HADOOP_HOME, and a PATH without a hadoop command."""
    env = {k: v for k, v in tonyjob.task_environment().items()
           if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "HADOOP_HOME", "TONY_BACKEND")}
    venv = Path(os.environ.get("TONY_VENV", tonyjob.SOURCE_DIR / ".venv"))
    env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"
    env.update(extra)
    return env


def test_tony_and_ytf_without_a_hadoop_configuration_run_here_and_say_so(sandbox):
    out = run_tool(sandbox, "ytf-submit", "-m", "256", "-r", "worker:1", "true",
                   env=no_hadoop_env(), replace_env=True)
    assert out.rc == 0, out.describe()
    assert out.stderr.splitlines()[0] == (
        "ytf-submit: backend local: no Hadoop configuration is found (no --hadoop-conf, "
        "HADOOP_CONF_DIR, YARN_CONF_DIR or hadoop command); --backend yarn with "
        "--hadoop-conf DIR (or HADOOP_CONF_DIR) submits to YARN"), out.stderr
    out = run_tool(sandbox, "tony-submit", *tonys_readme(sandbox), timeout=120,
                   env=no_hadoop_env(), replace_env=True)
    assert out.rc == 0, out.describe()
    assert out.stderr.splitlines()[0].startswith(
        "tony-submit: backend local: no Hadoop configuration is found"), out.stderr


def test_with_a_hadoop_configuration_backend_local_keeps_the_job_here(sandbox):
    conf = sandbox.root / "hadoop-conf"
    conf.mkdir()
    out = run_tool(sandbox, "ytf-submit", "--backend", "local", "-m", "256", "-r",
                   "worker:1", "true", env=no_hadoop_env(HADOOP_CONF_DIR=str(conf)),
                   replace_env=True)
    assert out.rc == 0, out.describe()
    assert out.stderr.splitlines()[0] == "ytf-submit: backend local: --backend local", \
        out.stderr
    # TONY_BACKEND=local does the same, and says so.
    out = run_tool(sandbox, "ytf-submit", "-m", "256", "-r", "worker:1", "true",
                   env=no_hadoop_env(HADOOP_CONF_DIR=str(conf), TONY_BACKEND="local"),
                   replace_env=True)
    assert out.rc == 0, out.describe()
    assert out.stderr.splitlines()[0] == "ytf-submit: backend local: TONY_BACKEND=local", \
        out.stderr


def test_a_job_toml_goes_where_its_cluster_backend_says(sandbox):
    conf = sandbox.root / "hadoop-conf"
    conf.mkdir()
    job = sandbox.root / "job.toml"
    job.write_text('[code]\ncommand = "true"\nsrc_dir = false\n'
                   '[tasks.worker]\nmemory = "256m"\n')
    out = run_tool(sandbox, "tony-submit", str(job),
                   env=no_hadoop_env(HADOOP_CONF_DIR=str(conf)), replace_env=True)
    assert out.rc == 0, out.describe()
    assert out.stderr.splitlines()[0] == (
        "tony-submit: backend local: the job.toml's [cluster] backend (local unless it "
        f"says yarn); a Hadoop configuration is found (HADOOP_CONF_DIR={conf}): "
        "--backend yarn or TONY_BACKEND=yarn submits to YARN"), out.stderr
    # On a machine without Hadoop (the README's example) nothing is said.
    out = run_tool(sandbox, "tony-submit", str(job), env=no_hadoop_env(), replace_env=True)
    assert out.rc == 0, out.describe()
    assert "backend" not in out.stderr, out.stderr
    out = run_tool(sandbox, "tony-submit", str(job),
                   env=no_hadoop_env(TONY_BACKEND="yran"), replace_env=True)
    assert out.rc == 2, out.describe()
    assert ("tony-submit: TONY_BACKEND=yran: the backend is local or yarn; set "
            "TONY_BACKEND=yarn, TONY_BACKEND=local, or unset it") in out.stderr, out.stderr


def test_a_job_too_large_for_here_is_refused_in_its_front_ends_words(sandbox):
    """The seed's ytf-submit command keeps YARN-DTF's 8 GiB per task; on a
    machine whose pool is smaller than the gang, the refusal names
    ytf-submit's own option, and TonY's command line gets TonY's keys."""
    small = ["--set", 'cluster.local.memory="16g"']
    out = run_tool(sandbox, "ytf-submit", "-r", "ps:1,worker:4", *small, "true",
                   env=no_hadoop_env(), replace_env=True)
    assert out.rc == 1, out.describe()
    assert ("the job needs 40960 MiB, 5 vcores in all, but the cluster has only 16384 MiB"
            in out.stdout + out.stderr), out.describe()
    assert ("it can never be scheduled: lower -m/--task_memory or -r/--cluster_requirement"
            in out.stdout + out.stderr), out.describe()
    (sandbox.root / "train.py").write_text("print('never runs')\n")
    out = run_tool(sandbox, "tony-submit", "-executes", "train.py", "--conf",
                   "tony.worker.instances=2", "--conf", "tony.worker.memory=20g",
                   "--conf", "tony.ps.instances=0", *small,
                   env=no_hadoop_env(), replace_env=True)
    assert out.rc == 1, out.describe()
    assert ("each worker task asks for 20480 MiB, 1 vcores, but the largest container this "
            "cluster grants is 16384 MiB" in out.stdout + out.stderr), out.describe()
    assert "; lower tony.worker.memory or use a larger queue/cluster" in \
        out.stdout + out.stderr, out.describe()
