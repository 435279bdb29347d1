"""tony.run on the local backend: functions shipped to every task, values
back, remote tracebacks, per-type functions, shipped files, and pack_env."""

import os
import subprocess
import sys
import threading

import pytest

import conftest

import tony


def local(box):
    return tony.Job(cluster={"jobs_dir": str(box.jobs_dir)}, policy={"stop_grace": "1s"})


def test_run_returns_every_tasks_value(box):
    def whoami():
        return {"task": tony.context.task_id(), "square": tony.context.task_index() ** 2,
                "cluster": sorted(tony.context.cluster_spec())}

    results = tony.run(whoami, task_specs={"worker": tony.TaskSpec(instances=3,
                                                                   memory="512m")},
                       framework="standalone", job=local(box), timeout=120)
    assert sorted(results) == ["worker:0", "worker:1", "worker:2"]
    assert [results[f"worker:{i}"]["square"] for i in range(3)] == [0, 1, 4]
    assert results["worker:2"]["task"] == "worker:2"
    assert results["worker:0"]["cluster"] == ["worker"]


def failing_step(batch):
    raise ValueError(f"bad batch {batch}")


def test_a_raising_task_raises_job_failed_with_the_remote_traceback(box):
    def train():
        if tony.context.task_index() == 1:
            failing_step(7)
        import time
        time.sleep(60)

    with pytest.raises(tony.JobFailed) as e:
        tony.run(train, task_specs={"worker": tony.TaskSpec(instances=2, memory="512m")},
                 framework="standalone", job=local(box), timeout=120)
    tb = e.value.remote_traceback
    assert tb is not None, str(e.value)
    assert "ValueError: bad batch 7" in tb and "failing_step" in tb and "in train" in tb
    [failure] = [f for f in e.value.failed_tasks if f.traceback]
    assert failure.task == "worker:1" and failure.exit_code == 1
    assert "ValueError: bad batch 7" in str(e.value)


def test_a_function_that_cannot_be_pickled_is_refused_before_submission(box):
    lock = threading.Lock()

    def uses_a_lock():
        with lock:
            return 1

    with pytest.raises(tony.FunctionNotPicklable) as e:
        tony.run(uses_a_lock, job=local(box))
    assert "uses_a_lock" in str(e.value) and "lock" in str(e.value)
    assert list(box.jobs_dir.iterdir()) == []


def test_each_task_type_can_run_its_own_function(box):
    """tf-yarn's evaluator pattern: training and evaluation functions of one
    job, the evaluator outside the training world."""
    def train():
        return ("trained", tony.context.rank())

    def evaluate():
        return ("evaluated", tony.context.rank())

    results = tony.run({"worker": train},
                       task_specs={"worker": tony.TaskSpec(instances=2, memory="512m"),
                                   "evaluator": tony.TaskSpec(memory="512m", fn=evaluate)},
                       framework="pytorch", job=local(box), timeout=180)
    assert results == {"evaluator:0": ("evaluated", None), "worker:0": ("trained", 0),
                       "worker:1": ("trained", 1)}


def test_files_are_shipped_into_the_working_directory(box, tmp_path):
    module = tmp_path / "winequality.py"
    module.write_text("def columns():\n    return ['acidity', 'sugar']\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.csv").write_text("1,2\n")

    def read():
        import winequality
        with open("data/train.csv") as f:
            return winequality.columns(), f.read()

    results = tony.run(read, files={"winequality.py": str(module), "data": str(data)},
                       framework="standalone", env={"MODE": "x"}, job=local(box),
                       timeout=120)
    assert results == {"worker:0": (["acidity", "sugar"], "1,2\n")}


def make_venv(path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(path)], check=True)
    site = next(path.glob("lib/python*/site-packages"))
    (site / "shipped_marker.py").write_text("WHERE = __file__\n")
    return site


def test_pack_env_reuses_an_unchanged_environment(box, tmp_path):
    venv = tmp_path / "myenv"
    site = make_venv(venv)
    first = tony.pack_env(venv)
    stamp = os.stat(first).st_mtime_ns
    assert first.endswith(".tar.gz") and os.path.basename(first).startswith("myenv-")
    again = tony.pack_env(venv)
    assert again == first and os.stat(again).st_mtime_ns == stamp  # not packed again
    (site / "another.py").write_text("X = 1\n")
    changed = tony.pack_env(venv)
    assert changed != first and os.path.exists(changed)

    def where():
        import shipped_marker
        import sys
        return shipped_marker.WHERE, sys.prefix

    results = tony.run(where, python_venv=changed, framework="standalone", job=local(box),
                       timeout=120)
    marker, prefix = results["worker:0"]
    # The task ran the unpacked archive's interpreter and its packages.
    assert prefix.endswith("/venv") and marker.startswith(prefix), results
    assert str(venv) not in marker


def test_pack_env_refuses_what_is_not_an_environment(tmp_path):
    with pytest.raises(tony.TonyError, match="neither a virtualenv"):
        tony.pack_env(tmp_path)


def test_pack_env_leaves_out_an_editable_tony_and_refuses_other_editables(tmp_path):
    import tarfile
    venv = tmp_path / "devenv"
    site = make_venv(venv)
    # What `pip install -e ./python` leaves for tony: a path to the checkout.
    (site / "__editable__.tony-0.1.0.pth").write_text(
        str(conftest.SOURCE_DIR / "python") + "\n")
    archive = tony.pack_env(venv)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert any(n.endswith("shipped_marker.py") for n in names)
    assert not any("__editable__.tony" in n for n in names), names
    (site / "mylib.pth").write_text(str(tmp_path / "mylib-src") + "\n")
    with pytest.raises(tony.TonyError, match="editable packages.*mylib-src"):
        tony.pack_env(venv)
