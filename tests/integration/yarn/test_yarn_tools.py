"""YARN's own tools and tony's on the real local YARN (fixture `yarn`): an
executor that cannot start says why, the job's progress reaches the RM,
`yarn logs` and `tony-submit --logs` show every task while the job runs and
after it ended (aggregated logs), and no staging dir is left behind however
a job ends (doc/operations.md)."""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import yarnlib as y

HERE = Path(__file__).resolve().parent


# -- an executor that cannot start --------------------------------------------------


def broken_install(tmp_path):
    """An install_dir whose tony-executor needs a library that is not there
    (tony-am and tony-guard are the real ones)."""
    d = tmp_path / "install"
    d.mkdir()
    (tmp_path / "gone.c").write_text("int tony_gone(void) { return 0; }\n")
    (tmp_path / "main.c").write_text("int tony_gone(void);\nint main(void) { return tony_gone(); }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "libtony_gone.so"),
                    str(tmp_path / "gone.c")], check=True)
    subprocess.run(["cc", "-o", str(d / "tony-executor"), str(tmp_path / "main.c"),
                    "-L", str(tmp_path), "-ltony_gone"], check=True)
    (tmp_path / "libtony_gone.so").unlink()
    for name in ("tony-am", "tony-guard"):
        (d / name).symlink_to(Path(y.BIN) / name)
    return d


def test_an_executor_that_cannot_start_says_why_on_yarn(tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(f"""
name = "cannot-start"
[code]
command = "true"
[tasks.worker]
memory = "256m"
[cluster]
install_dir = "{broken_install(tmp_path)}"
""")
    code, out, _ = y.submit([str(job)])
    assert code == 1, out
    # The real cause, from the NodeManager's diagnostics of the container.
    assert "worker:0 failed: its container exited with status 127 before its executor " \
           "registered" in out, out
    assert "--- last lines of prelaunch.err ---" in out, out
    assert "error while loading shared libraries: libtony_gone.so" in out, out
    assert y.app_status(y.app_id_of(out))["Final-State"] == "FAILED"


# -- progress and logs ----------------------------------------------------------------


def tools_job(tmp_path, ctl):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(HERE / "tools_task.py", src)
    job = tmp_path / "job.toml"
    job.write_text(f"""
name = "tools"
[code]
src_dir = "{src}"
command = "exec python3 tools_task.py {ctl}"
[tasks.worker]
instances = 2
memory = "256m"
""")
    return str(job)


def logs(*args):
    proc = subprocess.run([y.SUBMIT, "--logs", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=180)
    return proc.returncode, proc.stdout, proc.stderr


def rm_progress(app):
    return y.rm_app(app)["progress"]


def test_progress_and_logs_of_a_running_and_an_ended_job(tmp_path):
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    proc = y.start_submit(["--no-follow", tools_job(tmp_path, ctl)])
    try:
        lines = y.read_until(proc, r"worker:1 RUNNING", 300)
        app = y.app_id_of("".join(lines))
        # worker:0 ended at once, worker:1 writes nothing yet: the fraction
        # of tracked tasks that finished.
        assert y.wait_until(lambda: rm_progress(app) == 50.0, 60), rm_progress(app)
        # worker:1 writes its own progress: the job's is the training's.
        (ctl / "progress").write_text("0.8")
        assert y.wait_until(lambda: abs(rm_progress(app) - 80.0) < 0.01, 60), \
            rm_progress(app)
        assert y.app_status(app)["Progress"] == "80%"
        status = subprocess.run([y.SUBMIT, "--status", app], stdout=subprocess.PIPE,
                                text=True, timeout=120).stdout
        assert "progress: 80%" in status, status

        # --logs while the job runs: from the NodeManagers.
        code, out, err = logs(app)
        assert code == 0, err
        for task in ("worker:0", "worker:1"):
            assert f"==> {task} stdout" in out and f"TOOLS stdout of {task}" in out, out
            assert f"TOOLS stderr of {task}" in out, out
        code, out, err = logs(app, "--task", "worker:1")
        assert code == 0, err
        assert "TOOLS stdout of worker:1" in out and "worker:0" not in out, out
        code, out, err = logs(app, "--task", "worker:1", "--file", "executor.log")
        assert code == 0, err
        assert "executor: worker:1 started" in out, out
        code, out, err = logs(app, "--task", "worker:7")
        assert code == 2 and "no task worker:7 in " + app in err, (code, err)
        code, out, err = logs(app, "--task", "worker:1", "--file", "nosuch.log")
        assert code == 2 and "has no file nosuch.log" in err, (code, err)

        (ctl / "finish").write_text("")
        rest, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, "".join(lines) + rest

    # After the end: from the aggregated logs (the wait for the upload is
    # bounded and built into --logs).
    code, out, err = logs(app, "--task", "worker:1")
    assert code == 0, err
    assert re.search(r"^==> worker:1 stdout \((hdfs|file)://\S+ container_\S+/stdout\) <==$",
                     out, re.M), out
    assert "TOOLS worker:1 finishing" in out and "TOOLS stderr of worker:1" in out, out
    code, out, err = logs(app, "--task", "worker:0", "--file", "stdout")
    assert code == 0 and out == "TOOLS stdout of worker:0\n", (out, err)
    code, out, err = logs(app, "--task", "worker:1", "--file", "executor.log")
    assert code == 0 and "executor: worker:1 command ended with code 0" in out, (out, err)
    code, out, err = logs(app, "--task", "worker:7")
    assert code == 2 and "no task worker:7" in err, (code, err)
    code, out, err = logs(app, "--task", "worker:0", "--file", "nosuch.log")
    assert code == 2 and "has no file nosuch.log" in err, (code, err)

    # `yarn logs` shows the AM's log and every task's files.
    text = y.yarn_cli("logs", "-applicationId", app)
    files = re.findall(r"^LogType:(\S+)$", text, re.M)
    assert files.count("am.log") == 1, files
    assert files.count("executor.log") == 2 and files.count("prelaunch.err") == 3, files
    for task in ("worker:0", "worker:1"):
        assert f"TOOLS stdout of {task}" in text and f"TOOLS stderr of {task}" in text
    assert "job " + app + " SUCCEEDED" in text, text[-3000:]
    # tony-submit left only once it had the AM's own final status, so the
    # AM did not wait out its linger (5 s) for it.
    assert "tony-am: every client has the final status" in text, text[-3000:]
    assert "not every client confirmed" not in text, text[-3000:]


# -- nothing left behind ------------------------------------------------------------------


def sleeper_job(tmp_path, extra=""):
    job = tmp_path / "sleeper.toml"
    job.write_text(f"""
name = "sleeper"
[code]
command = "exec sleep 600"
[tasks.worker]
memory = "256m"
{extra}
""")
    return str(job)


def start_sleeper(tmp_path, extra=""):
    """tony-submit following a one-task job, once the task runs: (proc, app,
    staging dir)."""
    proc = y.start_submit(["--no-follow", sleeper_job(tmp_path, extra)])
    try:
        out = "".join(y.read_until(proc, r"worker:0 RUNNING", 300))
    except BaseException:
        proc.kill()
        raise
    staged = y.staged_uri(out)
    assert y.staged_exists(staged), staged
    return proc, y.app_id_of(out), staged


def ended_without_leftovers(proc, app, staged):
    try:
        rest, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, rest
    assert y.wait_until(lambda: not y.staged_exists(staged), 30), staged
    assert y.wait_until(lambda: not y.job_processes(app), 30), y.job_processes(app)
    return rest


def test_the_staging_dir_is_gone_after_yarn_application_kill(tmp_path):
    proc, app, staged = start_sleeper(tmp_path)
    y.yarn_cli("application", "-kill", app)
    ended_without_leftovers(proc, app, staged)
    assert y.app_status(app)["State"] == "KILLED"


def test_the_staging_dir_is_gone_after_ctrl_c(tmp_path):
    proc, app, staged = start_sleeper(tmp_path)
    y.interrupt(proc)
    ended_without_leftovers(proc, app, staged)


def test_the_staging_dir_is_gone_after_the_am_is_killed(tmp_path):
    proc, app, staged = start_sleeper(tmp_path, "[am]\nmax_app_attempts = 1")
    pid = y.am_pid(app)
    assert pid, "no tony-am of " + app
    os.kill(pid, signal.SIGKILL)
    ended_without_leftovers(proc, app, staged)
    assert y.app_status(app)["Final-State"] == "FAILED"


def test_the_next_submit_sweeps_ended_jobs_and_spares_running_ones(tmp_path):
    # A runs (detached: nobody follows it).
    code, out_a, _ = y.submit(["--detach", sleeper_job(tmp_path)])
    assert code == 0, out_a
    app_a, staged_a = y.app_id_of(out_a), y.staged_uri(out_a)
    root = staged_a.rsplit("/", 1)[0]
    cluster_ts = app_a.split("_")[1]
    # B was killed while nobody followed it, and its AM had no time to
    # clean up: its dir is left (made here, whatever the AM managed).
    code, out_b, _ = y.submit(["--detach", sleeper_job(tmp_path)])
    assert code == 0, out_b
    app_b, staged_b = y.app_id_of(out_b), y.staged_uri(out_b)
    # Unknown to the RM: another RM's (a cluster sharing the root, or this
    # RM before a restart), and one of its own in flight (fresh): both stay.
    extra = [root + "/application_1000000000000_0001",
             root + f"/application_{cluster_ts}_9999"]
    try:
        assert y.wait_until(lambda: y.app_status(app_b)["State"] == "RUNNING", 120)
        y.yarn_cli("application", "-kill", app_b)
        assert y.wait_until(lambda: y.app_status(app_b)["State"] == "KILLED", 60)
        for uri in [staged_b] + extra:
            y.make_staged_dir(uri)
        # C's submit sweeps; C itself runs to its end and removes its own.
        job_c = tmp_path / "quick.toml"
        job_c.write_text('name = "quick"\n[code]\ncommand = "true"\n'
                         '[tasks.worker]\nmemory = "256m"\n')
        code, out_c, _ = y.submit([str(job_c)])
        assert code == 0, out_c
        assert re.search(r"removed the staging dirs of \d+ ended jobs? under " +
                         re.escape(root), out_c), out_c
        assert not y.staged_exists(staged_b), staged_b
        assert y.staged_exists(extra[0]), extra[0]
        assert y.staged_exists(extra[1]), extra[1]
        assert y.staged_exists(staged_a), "the running job's files were touched"
        assert y.rm_app(app_a)["state"] == "RUNNING"
        assert not y.staged_exists(y.staged_uri(out_c))
    finally:
        subprocess.run([y.SUBMIT, "--kill", app_a], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
        for uri in [staged_a, staged_b] + extra:
            y.remove_staged(uri)


# -- a shared cache another user planted a bundle in --------------------------------


def quick_job(tmp_path):
    """A one-task job that does nothing."""
    job = tmp_path / "quick.toml"
    job.write_text('name = "quick"\n[code]\ncommand = "exec true"\n'
                   '[tasks.worker]\nmemory = "256m"\n')
    return job


def planted_bundle(tmp_path, mark):
    """An archive whose tony-am and tony-executor only leave a mark."""
    planted = tmp_path / "planted"
    (planted / "bin").mkdir(parents=True)
    for name in ("tony-am", "tony-executor", "tony-guard"):
        exe = planted / "bin" / name
        exe.write_text(f"#!/bin/sh\necho {name} >> {mark}\nexit 3\n")
        exe.chmod(0o755)
    archive = tmp_path / "planted.tgz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(planted), "bin"], check=True)
    return archive


def test_a_node_bundle_another_user_planted_in_a_shared_root_is_not_run(tmp_path):
    """A staging root every user can write (mode 1777, as a shared /tmp
    dir). A first job caches tony's binaries there as bin/<hash>/tony.tgz.
    Another user (uid 65534) then owns that copy and has swapped it for an
    archive whose tony-am and tony-executor only leave a mark. The next job
    of the same build must not run it: tony-submit says which copy it does
    not trust and why, stages a copy of its own, and the job succeeds with
    no mark left."""
    os.chmod(tmp_path, 0o755)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    args = ["--set", f'cluster.staging_dir="file://{shared}"', str(quick_job(tmp_path))]
    code, out, _ = y.submit(args)
    assert code == 0, out
    cached = list((shared / "bin").glob("*/tony.tgz"))
    assert len(cached) == 1, out
    mark = tmp_path / "planted-ran"
    swapped = cached[0].with_name("tony.tgz.planted")
    shutil.copyfile(planted_bundle(tmp_path / "p", mark), swapped)
    os.replace(swapped, cached[0])
    for path in (cached[0], cached[0].parent):
        os.chown(path, 65534, 65534)

    code, out, _ = y.submit(args)
    assert code == 0, out
    assert f"not using the cached file://{cached[0]}: {cached[0]} is owned by uid 65534" \
        in out, out
    assert "FINISHED/SUCCEEDED" in out, out
    assert not mark.exists(), mark.read_text()


# -- a cached copy whose content is not what its name promises ------------------------


def hdfs_put(uri, local):
    """Writes `local` over the hdfs:// file `uri` as this user (WebHDFS
    CREATE, the DataNode named by noredirect)."""
    import json
    import urllib.request
    status, body = y.webhdfs("PUT", uri, "CREATE", "&overwrite=true&noredirect=true")
    assert status == 200, f"CREATE {uri}: HTTP {status} {body!r}"
    req = urllib.request.Request(json.loads(body)["Location"], data=local.read_bytes(),
                                 method="PUT")
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 201, r.status


def test_a_users_own_cached_bundle_with_other_bytes_is_not_run(tmp_path):
    """The submitting user's own cached bin/<hash>/tony.tgz (owner and
    modes as tony-submit left them) whose bytes were swapped afterwards,
    on file:// and on HDFS: the next job of the same build compares the
    copy's content with its own bundle (SHA-256 on file://, the
    FileChecksum the DataNodes keep on HDFS), says that the copy is not
    this build's, stages a copy of its own, and succeeds without running
    the swapped binaries."""
    default_fs = y.conf_value("core-site.xml", "fs.defaultFS").rstrip("/")
    os.chmod(tmp_path, 0o755)
    local_root = tmp_path / "cache"
    local_root.mkdir(mode=0o700)
    for root in (f"file://{local_root}", f"{default_fs}/tmp/tony-cache-{tmp_path.name}"):
        args = ["--set", f'cluster.staging_dir="{root}"', str(quick_job(tmp_path))]
        try:
            code, out, _ = y.submit(args)
            assert code == 0, out
            assert "not using the cached" not in out, out
            # The same build again: the copy is checked and reused.
            code, out, _ = y.submit(args)
            assert code == 0, out
            assert "not using the cached" not in out, out
            mark = tmp_path / f"ran-{len(root)}"
            planted = planted_bundle(tmp_path / f"p{len(root)}", mark)
            if root.startswith("file://"):
                cached = list((local_root / "bin").glob("*/tony.tgz"))
                assert len(cached) == 1, out
                uri = f"file://{cached[0]}"
                mode = cached[0].stat().st_mode
                shutil.copyfile(planted, cached[0])
                os.chmod(cached[0], mode)
            else:
                status, body = y.webhdfs("GET", root + "/bin", "LISTSTATUS")
                assert status == 200, body
                import json
                (entry,) = json.loads(body)["FileStatuses"]["FileStatus"]
                uri = f"{root}/bin/{entry['pathSuffix']}/tony.tgz"
                hdfs_put(uri, planted)
            code, out, _ = y.submit(args)
            assert code == 0, out
            assert f"not using the cached {uri}: its content is not this build's" in out, out
            assert "FINISHED/SUCCEEDED" in out, out
            assert not mark.exists(), mark.read_text()
        finally:
            y.remove_staged(root)


def chown_tree(root, uid):
    for dirpath, dirnames, filenames in os.walk(root):
        os.chown(dirpath, uid, uid)
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), uid, uid)
            os.chmod(os.path.join(dirpath, name), 0o644)


def test_an_operators_shared_cache_is_used_when_its_content_checks(tmp_path):
    """[cluster] shared_cache names a root an operator (uid 65534 here)
    filled by submitting a job with staging_dir set to it. A user's job
    takes tony's binaries from there (owned by the root's owner, writable
    by nobody else, content checked) and uploads none into the user's own
    staging root. Once the operator's copy holds other bytes, the job says
    so, uses the user's own cache instead, and does not run them."""
    os.chmod(tmp_path, 0o755)
    shared = tmp_path / "shared"
    own = tmp_path / "own"
    shared.mkdir()
    own.mkdir(mode=0o700)
    job = quick_job(tmp_path)
    code, out, _ = y.submit(["--set", f'cluster.staging_dir="file://{shared}"', str(job)])
    assert code == 0, out
    (cached,) = list((shared / "bin").glob("*/tony.tgz"))
    chown_tree(shared, 65534)

    args = ["--set", f'cluster.staging_dir="file://{own}"',
            "--set", f'cluster.shared_cache="file://{shared}"', str(job)]
    code, out, _ = y.submit(args)
    assert code == 0, out
    assert "not using the cached" not in out and "[cluster] shared_cache" not in out, out
    assert "FINISHED/SUCCEEDED" in out, out
    assert not (own / "bin").exists(), list(own.rglob("*"))

    mark = tmp_path / "ran"
    planted = planted_bundle(tmp_path / "p", mark)
    shutil.copyfile(planted, cached)
    code, out, _ = y.submit(args)
    assert code == 0, out
    assert (f"not using the cached file://{cached}: its content is not this build's"
            in out), out
    assert "tell whoever manages [cluster] shared_cache" in out, out
    assert "FINISHED/SUCCEEDED" in out, out
    assert not mark.exists(), mark.read_text()
    assert list((own / "bin").glob("*/tony.tgz")), list(own.rglob("*"))
