"""doc/python.md's examples run as written (each block marked
<!-- doc-test: NAME --> is one test), in a fresh HOME so their jobs and
caches stay inside the test's directory."""

import os
import re
import subprocess
import sys

import pytest

import conftest
import tonyjob

DOC = conftest.SOURCE_DIR / "doc" / "python.md"
BLOCK = re.compile(r"<!-- doc-test: (\w+) -->\n```python\n(.*?)\n```", re.S)


def blocks():
    return dict(BLOCK.findall(DOC.read_text()))


def run_block(name, tmp_path, timeout=800, extra_env=None):
    code = blocks()[name]
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    env = dict(os.environ)
    env.pop("TONY_CACHE_DIR", None)  # the example's cache is under its HOME
    env.update({"HOME": str(home), "PYTHONPATH": str(conftest.SOURCE_DIR / "python")})
    env.update(extra_env or {})
    try:
        proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=timeout)
    finally:
        left = []
        for d in (home / ".tony" / "jobs").glob("application_*"):
            left += tonyjob.job_processes(d)
            for p in tonyjob.job_processes(d):
                os.kill(p.pid, 9)
    assert proc.returncode == 0, f"doc example '{name}' failed:\n{proc.stdout}\n{proc.stderr}"
    assert not left, f"doc example '{name}' left processes running: {left}"
    return proc.stdout


def test_doc_every_example_has_a_test():
    names = set(blocks())
    tested = {m for m in re.findall(r"^def test_doc_(\w+)\(", open(__file__).read(), re.M)}
    assert names, "no doc-test blocks found in doc/python.md"
    assert names <= tested, f"examples without a test: {sorted(names - tested)}"


def test_doc_jobs(tmp_path):
    out = run_block("jobs", tmp_path)
    assert "application_" in out and "worker:1 SUCCEEDED 0" in out


def test_doc_experiment(tmp_path):
    pytest.importorskip("tensorflow")
    out = run_block("experiment", tmp_path)
    assert "'chief:0': 'trained'" in out


def test_doc_files(tmp_path):
    run_block("files", tmp_path)


def test_doc_multiple_workers(tmp_path):
    pytest.importorskip("tf_keras")
    run_block("multiple_workers", tmp_path)


def test_doc_pack_env(tmp_path):
    venv = tmp_path / "small-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True)
    # "The active virtualenv": a small one, as `source small-env/bin/activate`
    # would make it (the project's own venv is gigabytes of TensorFlow).
    run_block("pack_env", tmp_path, extra_env={
        "VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{os.environ['PATH']}"})
    assert list((tmp_path / "home" / ".cache" / "tony" / "envs").glob("small-env-*.tar.gz"))


def test_doc_gpu(tmp_path):
    run_block("gpu", tmp_path)


def test_doc_env(tmp_path):
    run_block("env", tmp_path)


def test_doc_evaluation_alone(tmp_path):
    run_block("evaluation_alone", tmp_path)


def test_doc_pytorch(tmp_path):
    pytest.importorskip("torch")
    run_block("pytorch", tmp_path)
