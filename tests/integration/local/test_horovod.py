"""Horovod that starts: `framework = "horovod"` on the local backend. The AM
serves Horovod's gloo rendezvous (doc/task-environment.md, Horovod); three
tasks run hvd.init() and an allreduce with a real Horovod build
(scripts/setup-horovod.sh). Skipped, saying why, where Horovod is not
installed."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tonyjob

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "horovod" / "hvd_allreduce.py"


def horovod_or_skip():
    """Skips (exit 77, with the reason) where the tasks' python3 has no
    Horovod built with gloo and PyTorch."""
    probe = subprocess.run(
        ["python3", "-c", "import horovod.torch as hvd; "
         "assert hvd.gloo_built(), 'Horovod is built without gloo'"],
        env=tonyjob.task_environment(), capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        lines = probe.stderr.strip().splitlines() or ["no output"]
        pytest.skip("Horovod with gloo and PyTorch is not installed in the test venv "
                    f"({lines[-1]}); scripts/setup-horovod.sh --build builds it")


def horovod_job(sandbox, extra=""):
    path = sandbox.job(f'''name = "horovod"
framework = "horovod"

[code]
src_dir = "src"
command = "exec python3 hvd_allreduce.py"

[env]
OMP_NUM_THREADS = "1"
HOROVOD_GLOO_TIMEOUT_SECONDS = "60"

[tasks.worker]
instances = 3
memory = "1g"
{extra}
''')
    shutil.copy(SCRIPT, sandbox.root / "src" / "hvd_allreduce.py")
    return path


def test_horovod_allreduce_across_three_tasks(sandbox):
    horovod_or_skip()
    out = sandbox.submit(horovod_job(sandbox), timeout=170)
    assert out.rc == 0, out.describe()
    assert "not been seen to start" not in out.stderr, out.stderr
    seen = {}
    for i in range(3):
        text = out.task_stdout(f"worker:{i}")
        m = re.search(r"^HVD rank=(\d) size=3 local_rank=(\d) sum=6 expected=6 addr=(\S+)$",
                      text, re.M)
        assert m, f"worker:{i}: {text}\n{out.describe()}"
        seen[int(m.group(1))] = m.group(3)
    assert sorted(seen) == [0, 1, 2], seen
    # The AM's rendezvous, with this attempt's token after the port.
    addr = seen[0]
    assert re.fullmatch(r"127\.0\.0\.1:\d+/[0-9a-f]{32}", addr), addr
    # A request without the token is refused, before its body is read.
    outputs = "".join(out.task_stdout(f"worker:{i}") for i in range(3))
    assert "STRANGER status=403" in outputs, outputs
    am_log = (out.job_dir / "am.log").read_text(errors="replace")
    assert "Horovod rendezvous at 127.0.0.1:" in am_log, am_log[-2000:]
    assert not tonyjob.wait_job_gone(out.job_dir, 10)
