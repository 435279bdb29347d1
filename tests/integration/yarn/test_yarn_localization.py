"""Registration's timeout counts from the container running, not from its
start (doc/lifecycle.md rule 9), on the real local YARN: a task whose
archive the NodeManager unpacks for longer than [policy]
registration_timeout still runs (before, it failed with "registration
timeout"). About 25 s."""

import subprocess
import time

import pytest
import yarnlib as y


def test_a_task_localizing_longer_than_the_registration_timeout_runs(tmp_path):
    # 1 GiB of zeros: a 1 MiB upload, seconds of unpacking on the node.
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "zeros.bin", "wb") as f:
        f.truncate(0)
        chunk = b"\0" * (1 << 20)
        for _ in range(1024):
            f.write(chunk)
    (data / "stamp").write_text(str(time.time()))  # a new archive: no cache hit
    archive = tmp_path / "big.tgz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(data), "."], check=True)
    (data / "zeros.bin").unlink()
    job = tmp_path / "job.toml"
    job.write_text(f"""name = "slow-localization"
framework = "standalone"

[code]
src_dir = false
archives = ["{archive}"]
command = 'test -s big.tgz/zeros.bin'

[tasks.worker]
memory = "256m"

[policy]
registration_timeout = "5s"
""")
    proc = y.start_submit([str(job)])
    try:
        lines = y.read_until(proc, r"worker:0 LAUNCHED", 120)
        launched = time.monotonic()
        lines += y.read_until(proc, r"worker:0 (SUCCEEDED|RUNNING|REGISTERED|FAILED|KILLED)",
                              180)
        took = time.monotonic() - launched
        proc.wait(timeout=120)
        rest = proc.stdout.read() or ""
    finally:
        if proc.poll() is None:
            proc.kill()
    out = "".join(lines) + rest
    assert proc.returncode == 0, out
    assert "registration timeout" not in out, out
    if took <= 5:
        pytest.skip(f"the node localized the archive in {took:.1f} s, within the "
                    "registration timeout: nothing to show on this machine")
