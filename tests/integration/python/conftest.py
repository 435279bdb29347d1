"""Fixtures of the Python API tests: a sandbox per test (its own jobs dir,
so nothing touches ~/.tony), the venv first on PATH (tasks run `python3`),
and a check that no process of the test's jobs is left at its end."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE_DIR = HERE.parents[2]
sys.path.insert(0, str(SOURCE_DIR / "python"))
sys.path.insert(0, str(SOURCE_DIR / "tests" / "integration" / "local"))

import tonyjob  # noqa: E402  (job_processes: what a job left running)

import tony  # noqa: E402


def _prepare_environment():
    venv = Path(os.environ.get("TONY_VENV", SOURCE_DIR / ".venv"))
    if (venv / "bin").is_dir() and not os.environ.get("PATH", "").startswith(str(venv)):
        os.environ["PATH"] = f"{venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    os.environ["PYTHONUNBUFFERED"] = "1"
    # tony.pack_env's cache stays inside the test run.
    os.environ.setdefault("TONY_CACHE_DIR", tempfile.mkdtemp(prefix="tony-envs-"))


_prepare_environment()


class Box:
    """One test's directory and jobs dir."""

    def __init__(self, root):
        self.root = Path(root)
        self.jobs_dir = self.root / "jobs"
        self.jobs_dir.mkdir()

    def job(self, **keys):
        """A tony.Job running on the local backend inside this box."""
        cluster = dict(keys.pop("cluster", {}))
        cluster.setdefault("jobs_dir", str(self.jobs_dir))
        keys.setdefault("framework", "standalone")
        return tony.Job(cluster=cluster, **keys)

    def job_dir(self, app_id):
        return self.jobs_dir / app_id

    def leftovers(self):
        found = []
        for d in self.jobs_dir.glob("application_*"):
            for p in tonyjob.job_processes(d):
                found.append(p)
                try:
                    os.kill(p.pid, 9)
                except OSError:
                    pass
        return found


@pytest.fixture
def box(request):
    root = tempfile.mkdtemp(prefix=f"tony-py-{request.node.name[:40]}-")
    b = Box(root)
    yield b
    left = b.leftovers()
    if os.environ.get("TONY_TEST_KEEP") == "1":
        print(f"\nkept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    assert not left, f"processes of the test's jobs were still running at its end: {left}"


def pytest_sessionfinish(session, exitstatus):
    # A file whose every test was skipped reports 77: ctest shows "skipped".
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    if reporter.stats.get("skipped") and not reporter.stats.get("passed"):
        session.exitstatus = 77
