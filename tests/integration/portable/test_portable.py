"""tony on a node without tony's Debian libraries (doc/operations.md, "What
nodes need"): tony-submit, tony-am and tony-executor start where those
libraries are gone (hide_libs.sh: a mount namespace whose library directory
lacks them), and every library they map but glibc's comes from the bundle
beside them (<bin>/../lib/tony), on the local backend, on YARN with the
shipped archive, and on YARN with [cluster] install_dir.

The YARN test starts a one-node cluster of its own (its NodeManager in such
a namespace) on TONY_YARN_HOST, before the shared cluster of the yarn tier.
"""

import os
import shutil
import signal
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BIN = Path(os.environ.get("TONY_BIN", ROOT / "build" / "bin"))
BUNDLE = (BIN / ".." / "lib" / "tony").resolve()
HIDE = HERE / "hide_libs.sh"
CLUSTER = ROOT / "scripts" / "yarn" / "cluster.sh"

# glibc's own libraries: the system's serve every process.
GLIBC = ("ld-linux", "libc.so", "libm.so", "libmvec.so", "libpthread.so", "libdl.so",
         "librt.so", "libresolv.so", "libutil.so", "libanl.so", "libnss_")


SHARED_OBJECT = re.compile(r"\.so(\.[0-9.]+)?$")


class Submit:
    """tony-submit in the background, its output collected line by line."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def output(self):
        return "".join(self.lines)

    def running_tasks(self):
        """How many tasks tony-submit has shown RUNNING (their commands run,
        so their executors have loaded every library)."""
        return sum(1 for line in self.lines if re.search(r"worker:\d RUNNING at", line))

    def wait(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
                try:
                    self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.reader.join(10)
        return self.proc.returncode, self.output()


def wait_until(pred, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    return pred()


def mapped_libraries(pid):
    """The shared objects process `pid` has mapped (paths as it sees them)."""
    libs = set()
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and SHARED_OBJECT.search(os.path.basename(parts[5].strip())):
                libs.add(parts[5].strip())
    return libs


def tony_processes(marker, exe_under=None):
    """{pid: program name} of the running tony-am and tony-executor processes
    whose environment or command line holds `marker` (the test's directory)
    and, if given, whose program lies under `exe_under`."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        name = os.path.basename(exe)
        if exe_under is not None and not exe.startswith(str(exe_under) + "/"):
            continue
        if name in ("tony-am", "tony-executor") and (marker.encode() in env or
                                                     marker.encode() in cmd):
            found[int(pid)] = name
    return found


def check_libraries_from(pids, bundle_dir):
    """Every library the processes map is glibc's or lies in bundle_dir;
    CAF, protobuf and the C++ runtime are among them."""
    seen = set()
    for pid, name in pids.items():
        libs = mapped_libraries(pid)
        stray = [lib for lib in libs if not lib.startswith(str(bundle_dir) + "/")
                 and not os.path.basename(lib).startswith(GLIBC)]
        assert not stray, f"{name} ({pid}) maps libraries from outside {bundle_dir}: {stray}"
        seen |= {os.path.basename(lib) for lib in libs}
    for lib in ("libcaf_core.so.0.17.6", "libprotobuf.so.32", "libstdc++.so.6"):
        assert lib in seen, f"{lib} not mapped by {pids}: {sorted(seen)}"


def job_toml(tmp, go):
    """Two workers that wait for the test to let them end."""
    (tmp / "src").mkdir(exist_ok=True)
    job = tmp / "job.toml"
    job.write_text(f"""
name = "portable"
framework = "standalone"
[code]
src_dir = "src"
command = "while [ ! -e {go} ]; do sleep 0.2; done; echo portable-ok $TASK_INDEX"
[tasks.worker]
instances = 2
memory = "256m"
vcores = 1
""")
    return job


def require_bundle():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a mount namespace needs root and unshare (util-linux)")
    assert (BUNDLE / "glibc-floor").is_file(), \
        f"no library bundle in {BUNDLE}: build the tony-bundle target"




def test_the_glibc_floor_is_the_one_documented():
    """doc/operations.md states the oldest glibc the shipped binaries run
    on; the build computes it from what it bundled (cmake/bundle_libs.sh)."""
    floor = (BUNDLE / "glibc-floor").read_text().strip()
    doc = (ROOT / "doc" / "operations.md").read_text()
    stated = re.search(r"\*\*glibc ([0-9.]+) or newer\*\*", doc)
    assert stated, "doc/operations.md states no glibc floor (**glibc X.Y or newer**)"
    assert stated.group(1) == floor, \
        f"the build needs glibc {floor}, doc/operations.md says {stated.group(1)}"


def test_the_bundle_is_readable_by_every_user():
    """It travels as it is into the archive and the install: a directory
    only its owner could enter would fail every other user's containers."""
    assert (BUNDLE.stat().st_mode & 0o777) == 0o755, oct(BUNDLE.stat().st_mode)
    for lib in BUNDLE.iterdir():
        assert lib.stat().st_mode & 0o444 == 0o444, f"{lib} is not readable by all"


def test_a_binary_without_its_bundle_cannot_start_there(tmp_path):
    """The namespace really lacks the libraries: a copy of tony-executor with
    no lib/tony beside it fails to load."""
    require_bundle()
    bare = tmp_path / "bare" / "bin"
    bare.mkdir(parents=True)
    shutil.copy2(BIN / "tony-executor", bare / "tony-executor")
    r = subprocess.run([HIDE, tmp_path / "ns", BUNDLE, bare / "tony-executor", "--help"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    assert r.returncode == 127, r.stdout
    assert "error while loading shared libraries" in r.stdout, r.stdout
    ok = subprocess.run([HIDE, tmp_path / "ns2", BUNDLE, BIN / "tony-executor", "--help"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                        timeout=120)
    assert ok.returncode == 0, ok.stdout


def test_local_job_without_debian_libraries(tmp_path):
    require_bundle()
    go = tmp_path / "go"
    job = job_toml(tmp_path, go)
    submit = Submit([HIDE, tmp_path / "ns", BUNDLE, BIN / "tony-submit", "--backend", "local",
                     "--set", f'cluster.jobs_dir="{tmp_path}/jobs"', job])
    try:
        assert wait_until(lambda: submit.running_tasks() == 2, 120), submit.output()
        pids = tony_processes(str(tmp_path))
        assert sorted(pids.values()) == ["tony-am", "tony-executor", "tony-executor"], pids
        check_libraries_from(pids, BUNDLE)
    finally:
        go.touch()
        code, out = submit.wait(120)
    assert code == 0, out
    assert "SUCCEEDED" in out, out


# -- YARN -------------------------------------------------------------------------------


@pytest.fixture
def bare_cluster(tmp_path):
    """A one-node YARN (file:// staging) whose NodeManager, and so every
    container, runs where tony's Debian libraries are hidden."""
    require_bundle()
    state = tmp_path / "cluster"
    wrapper = tmp_path / "nm-wrapper.sh"
    wrapper.write_text(f'#!/bin/sh\nexec "{HIDE}" "{tmp_path}/nm-ns" "{BUNDLE}" "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ, TONY_YARN_NM_WRAPPER=str(wrapper))
    start = subprocess.run([CLUSTER, "start", "--dir", state], env=env, timeout=300,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert start.returncode == 0, start.stderr[-3000:]
        yield state
    finally:
        subprocess.run([CLUSTER, "stop", "--dir", state], timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def nodemanager_hides(state):
    """The libraries hidden from the NodeManager (hide_libs.sh exports them)."""
    pid = (state / "pids" / "nodemanager.pid").read_text().strip()
    with open(f"/proc/{pid}/environ", "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    return env.get(b"TONY_HIDDEN_LIBS", b"").decode().split()


def run_yarn_job(tmp_path, state, extra, exe_under, bundle_dir_of):
    go = tmp_path / "go"
    if go.exists():
        go.unlink()
    job = job_toml(tmp_path, go)
    env = dict(os.environ, HADOOP_CONF_DIR=str(state / "conf"))
    submit = Submit([BIN / "tony-submit", "--backend", "yarn",
                     "--set", f'cluster.staging_dir="file://{tmp_path}/staging"', *extra, job],
                    env=env)
    try:
        assert wait_until(lambda: submit.running_tasks() == 2, 180), submit.output()
        pids = tony_processes(str(state), exe_under)
        assert sorted(pids.values()) == ["tony-am", "tony-executor", "tony-executor"], pids
        for pid in pids:
            check_libraries_from({pid: pids[pid]}, bundle_dir_of(pid))
        # The AM's token connections load Cyrus SASL's DIGEST-MD5 plug-in,
        # from the bundle: the node's sasl2/ is hidden.
        am = [pid for pid, name in pids.items() if name == "tony-am"][0]
        plugin = str(bundle_dir_of(am) / "sasl2" / "libdigestmd5.so")
        assert plugin in mapped_libraries(am), sorted(mapped_libraries(am))
    finally:
        go.touch()
        code, out = submit.wait(180)
    assert code == 0, out
    assert "FINISHED/SUCCEEDED" in out, out


def test_yarn_job_on_a_node_without_debian_libraries(tmp_path, bare_cluster):
    state = bare_cluster
    hidden = nodemanager_hides(state)
    for lib in ("libcaf_core.so.0.17.6", "libcaf_io.so.0.17.6", "libprotobuf.so.32",
                "libspdlog.so.1.10", "libcurl.so.4", "libssl.so.3", "libsasl2.so.2",
                "sasl2"):
        assert lib in hidden, f"{lib} is not hidden from the node: {hidden}"

    # The shipped archive: each process maps the lib/tony of the archive the
    # NodeManager unpacked (.../filecache/<n>/tony.tgz/lib/tony).
    def shipped(pid):
        exe = Path(os.readlink(f"/proc/{pid}/exe"))
        assert exe.parent.name == "bin" and exe.parent.parent.name == "tony.tgz", exe
        return exe.parent.parent / "lib" / "tony"
    run_yarn_job(tmp_path, state, [], state, shipped)

    # [cluster] install_dir: the binaries and lib/tony installed on the node.
    inst = tmp_path / "inst"
    (inst / "bin").mkdir(parents=True)
    for name in ("tony-am", "tony-executor", "tony-guard"):
        shutil.copy2(BIN / name, inst / "bin" / name)
    shutil.copytree(BUNDLE, inst / "lib" / "tony")
    run_yarn_job(tmp_path, state, ["--set", f'cluster.install_dir="{inst}/bin"'],
                 inst / "bin", lambda pid: inst / "lib" / "tony")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
