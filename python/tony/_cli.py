"""tony-submit as a library: finding it, running its one-shot commands and
turning its exit codes (doc/operations.md) into exceptions."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from .errors import ClusterError, JobConfigError, TonyError, TonySubmitNotFound, UnknownJob

EXIT_SUCCEEDED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INFRA = 3

# Every one-shot call is bounded: the RM and the AM are asked with deadlines
# of their own (10-30 s), so this only catches a hang.
_CALL_TIMEOUT = 120


def find_tony_submit(explicit=None):
    """The tony-submit to run: `explicit` (a path), else $TONY_BIN_DIR/tony-submit,
    else tony-submit on PATH."""
    if explicit:
        path = Path(explicit)
        if path.is_dir():
            path = path / "tony-submit"
        if not os.access(path, os.X_OK):
            raise TonySubmitNotFound(f"tony_submit={explicit!s}: {path} is not an "
                                     "executable tony-submit")
        return str(path)
    bin_dir = os.environ.get("TONY_BIN_DIR")
    if bin_dir:
        path = Path(bin_dir) / "tony-submit"
        if not os.access(path, os.X_OK):
            raise TonySubmitNotFound(f"TONY_BIN_DIR={bin_dir}: there is no executable "
                                     f"{path}; build tony or fix TONY_BIN_DIR")
        return str(path)
    found = shutil.which("tony-submit")
    if found is None:
        raise TonySubmitNotFound("tony-submit is not on PATH; install tony, set "
                                 "TONY_BIN_DIR to the directory holding tony-submit, "
                                 "or pass tony_submit=PATH")
    return found


def environment():
    """tony-submit's environment: ours, with the sanitizer builds' leak
    check off (CAF keeps singletons alive at exit)."""
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    return env


def error_for(code, stderr, what):
    """The exception for a tony-submit exit code other than 0 and 1."""
    message = stderr.strip() or f"tony-submit exited with code {code}"
    message = "\n".join(line[len("tony-submit: "):] if line.startswith("tony-submit: ")
                        else line for line in message.splitlines())
    if code == EXIT_USAGE:
        return (JobConfigError if what == "job" else UnknownJob)(message)
    if code == EXIT_INFRA:
        return ClusterError(message)
    return TonyError(f"tony-submit exited with code {code}: {message}")


def call(argv, tony_submit=None, what="job", binary=False, timeout=_CALL_TIMEOUT):
    """Runs tony-submit with `argv` to its end; returns its stdout (bytes
    with `binary`). Raises by its exit code."""
    exe = find_tony_submit(tony_submit)
    try:
        proc = subprocess.run([exe, *argv], capture_output=True, env=environment(),
                              stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ClusterError(f"tony-submit {' '.join(argv)} did not answer within "
                           f"{timeout} s") from None
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise error_for(proc.returncode, stderr, what)
    return proc.stdout if binary else proc.stdout.decode(errors="replace")


def dry_run(job_path, tony_submit=None):
    """tony-submit --dry-run: the resolved job spec, or JobConfigError with
    job.toml's messages."""
    return json.loads(call([str(job_path), "--dry-run"], tony_submit, what="job"))


def control_args(backend=None, jobs_dir=None, hadoop_conf=None):
    """The flags that tell --status/--kill/--logs where a job is."""
    args = []
    if backend:
        args += ["--backend", backend]
    if jobs_dir:
        args += ["--jobs-dir", str(jobs_dir)]
    if hadoop_conf:
        args += ["--hadoop-conf", str(hadoop_conf)]
    return args
