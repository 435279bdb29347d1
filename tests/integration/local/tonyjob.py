"""Runs tony-submit on the local backend and inspects what a job leaves behind.

Each test gets a `Sandbox` (see conftest.py): a temporary directory with its
own jobs_dir, so jobs never share state and everything goes away afterwards.
The binaries come from TONY_BIN_DIR (set by ctest); tasks find python3
through PATH, so the checkout's .venv/bin is put first.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_DIR = HERE.parents[2]
CHECK_ENV = SOURCE_DIR / "tests" / "integration" / "env_check" / "check_env.py"
EXAMPLES = SOURCE_DIR / "examples"

_SUBMITTED = re.compile(r"submitted (application_\d+_\d+)")

# A task's program that holds `HOLD_MB` MiB (pages written, so they are
# resident) until the file `RELEASE` appears.
HOLD_MEMORY = """
import os, sys, time
block = b"\\x01" * (int(os.environ["HOLD_MB"]) << 20)
print("holding", len(block) >> 20, "MiB", flush=True)
while not os.path.exists(os.environ["RELEASE"]):
    time.sleep(0.1)
print("released", flush=True)
"""


def bin_dir():
    d = os.environ.get("TONY_BIN_DIR")
    if not d:
        raise RuntimeError("TONY_BIN_DIR is not set: point it at the directory holding "
                           "tony-submit, tony-am and tony-executor (e.g. build-local/bin)")
    d = Path(d)
    if not (d / "tony-submit").exists():
        raise RuntimeError(f"{d}/tony-submit does not exist: build it first "
                           "(ninja -C <build> tony-submit tony-am tony-executor)")
    return d


def bundle_tarball(work):
    """This build's node bundle as the Dataproc action takes it: `cmake
    --install` output under work/prefix, as the tarball work/tony.tar."""
    import tarfile
    prefix = work / "prefix"
    r = subprocess.run([os.environ.get("CMAKE_COMMAND") or shutil.which("cmake") or "cmake",
                        "--install", str(bin_dir().parent), "--prefix", str(prefix)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = work / "tony.tar"
    with tarfile.open(out, "w") as t:
        t.add(prefix, arcname=".")
    return out


def task_environment():
    """The environment tony-submit runs in: the venv's python3 first on PATH."""
    env = dict(os.environ)
    venv = Path(os.environ.get("TONY_VENV", SOURCE_DIR / ".venv"))
    if (venv / "bin").is_dir():
        env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    # CAF keeps singletons alive at exit; in sanitizer builds that is no error.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    # One line per event, immediately, so tests can wait for lines.
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Outcome:
    """A finished tony-submit: exit code, output, elapsed seconds."""

    def __init__(self, sandbox, rc, stdout, stderr, elapsed):
        self.sandbox = sandbox
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.elapsed = elapsed
        m = _SUBMITTED.search(stdout)
        self.app_id = m.group(1) if m else None
        self.job_dir = sandbox.jobs_dir / self.app_id if self.app_id else None

    @property
    def output(self):
        return self.stdout + self.stderr

    def status(self):
        """The AM's final status.json (a dict), or None if there is none."""
        if self.job_dir is None:
            return None
        path = self.job_dir / "status.json"
        if not path.exists():
            return None
        return json.loads(path.read_text())

    def task(self, name):
        """The status.json entry of task "type:index"."""
        st = self.status()
        assert st is not None, f"no status.json in {self.job_dir}\n{self.describe()}"
        for t in st["tasks"]:
            if f"{t['type']}:{t['index']}" == name:
                return t
        raise AssertionError(f"no task {name} in status.json: {st['tasks']}")

    def task_stdout(self, name):
        return Path(self.task(name)["log_dir"], "stdout").read_text(errors="replace")

    def describe(self):
        """Everything useful when an assertion fails."""
        parts = [f"tony-submit exit code {self.rc} after {self.elapsed:.1f} s",
                 "--- stdout ---", self.stdout, "--- stderr ---", self.stderr]
        if self.job_dir is not None:
            parts.append(describe_job_dir(self.job_dir))
        return "\n".join(parts)


def tail(path, limit=3000):
    try:
        data = Path(path).read_text(errors="replace")
    except OSError as e:
        return f"({e})"
    return data[-limit:]


def describe_job_dir(job_dir):
    job_dir = Path(job_dir)
    parts = [f"--- {job_dir}/am.log ---", tail(job_dir / "am.log")]
    for c in sorted(job_dir.glob("container_*")):
        for name in ("executor.log", "stderr", "container.out"):
            p = c / name
            if p.exists() and p.stat().st_size:
                parts += [f"--- {p} ---", tail(p, 1500)]
    return "\n".join(parts)


def am_pid(job_dir):
    """The AM's pid from <job_dir>/am.json, or None if it is not (yet) there."""
    try:
        return json.loads((Path(job_dir) / "am.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def thread_stacks(pid, what):
    """Every thread's stack of a live process (gdb), for hang reports."""
    if process_state(pid) in (None, "Z", "X"):
        return f"--- {what} (pid {pid}) is not running ---"
    gdb = shutil.which("gdb")
    if gdb is None:
        return f"--- {what} (pid {pid}) hangs; install gdb to see its threads ---"
    try:
        r = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return f"--- {what} (pid {pid}): gdb timed out ---"
    # Thread headers and frames, without the sanitizer runtime's.
    lines = [l for l in r.stdout.splitlines()
             if (l.startswith("Thread ") or l.startswith("#")) and "sanitizer" not in l
             and "libasan" not in l]
    return f"--- threads of {what} (pid {pid}) ---\n" + "\n".join(l[:300] for l in lines[:400])


class Running:
    """A tony-submit that runs in the background; its output is collected
    line by line so a test can wait for a line."""

    def __init__(self, sandbox, argv, env):
        self.sandbox = sandbox
        self.started = time.monotonic()
        # A process group of its own, as a shell gives a foreground job, so
        # interrupt() is what Ctrl-C does.
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self.lines = []
        self.err_lines = []
        self.cond = threading.Condition()
        self.readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self.lines),
                                         daemon=True),
                        threading.Thread(target=self._read,
                                         args=(self.proc.stderr, self.err_lines), daemon=True)]
        for r in self.readers:
            r.start()

    def _read(self, stream, into):
        for line in stream:
            with self.cond:
                into.append(line)
                self.cond.notify_all()

    @property
    def pid(self):
        return self.proc.pid

    def stdout(self):
        with self.cond:
            return "".join(self.lines)

    def app_id(self):
        m = _SUBMITTED.search(self.stdout())
        return m.group(1) if m else None

    def job_dir(self):
        app = self.app_id()
        return self.sandbox.jobs_dir / app if app else None

    def wait_for_line(self, pattern, timeout):
        """Waits until a stdout line matches `pattern`; returns the match.
        Fails the test if tony-submit ends first or the time runs out."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        with self.cond:
            while True:
                for line in self.lines[seen:]:
                    m = rx.search(line)
                    if m:
                        return m
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and
                                 not any(r.is_alive() for r in self.readers)):
                    break
                self.cond.wait(min(left, 0.2))
        raise AssertionError(f"no line matching {pattern!r} within {timeout} s "
                             f"(tony-submit {'ended' if self.proc.poll() is not None else 'runs'})"
                             f"\n{self.describe()}")

    def interrupt(self):
        """Ctrl-C: SIGINT to tony-submit's process group."""
        os.killpg(self.proc.pid, signal.SIGINT)

    def wait(self, timeout):
        """Waits for tony-submit to end; a hang is a test failure (and the
        process is killed, so the run goes on)."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # Where it hangs, before anything is killed.
            stacks = [thread_stacks(self.proc.pid, "tony-submit")]
            if self.job_dir() is not None:
                am = am_pid(self.job_dir())
                if am is not None:
                    stacks.append(thread_stacks(am, "tony-am"))
            self.kill()
            for r in self.readers:
                r.join(5)
            raise AssertionError(f"tony-submit did not end within {timeout} s (killed)\n"
                                 f"{self.describe()}\n" + "\n".join(stacks))
        for r in self.readers:
            r.join(5)
        out = Outcome(self.sandbox, rc, self.stdout(), "".join(self.err_lines),
                      time.monotonic() - self.started)
        # Shown by pytest when the test fails (or always with -s).
        print(f"$ {' '.join(self.proc.args)}\n{out.stdout}{out.stderr}"
              f"[exit {rc} after {out.elapsed:.1f} s]")
        return out

    def describe(self):
        parts = ["--- stdout so far ---", self.stdout(), "--- stderr so far ---",
                 "".join(self.err_lines)]
        if self.job_dir() is not None:
            parts.append(describe_job_dir(self.job_dir()))
        return "\n".join(parts)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()


class Sandbox:
    """One test's directory: job files, and the jobs_dir its jobs run in."""

    def __init__(self, root):
        self.root = Path(root)
        self.jobs_dir = self.root / "jobs"
        self.running = []

    def job(self, text, name="job.toml"):
        """Writes a job file next to a src dir (created empty); returns its
        path."""
        path = self.root / name
        path.write_text(text)
        (self.root / "src").mkdir(exist_ok=True)
        return path

    def write_src(self, files):
        """Writes {name: text} into the src dir."""
        src = self.root / "src"
        src.mkdir(exist_ok=True)
        for name, text in files.items():
            (src / name).write_text(text)

    def argv(self, job, *args):
        return [str(bin_dir() / "tony-submit"), str(job),
                "--set", f'cluster.jobs_dir="{self.jobs_dir}"', *args]

    def submit(self, job, *args, timeout, env=None):
        """Runs tony-submit to the end; a run longer than `timeout` fails.
        `env` adds variables to tony-submit's environment."""
        return self.start(job, *args, env=env).wait(timeout)

    def start(self, job, *args, env=None):
        full_env = task_environment()
        full_env.update(env or {})
        r = Running(self, self.argv(job, *args), full_env)
        self.running.append(r)
        return r

    def app_ids(self):
        if not self.jobs_dir.exists():
            return []
        return sorted(p.name for p in self.jobs_dir.glob("application_*"))

    def cleanup(self):
        """Kills whatever a test left running: tony-submit, then every
        process of every job of this sandbox."""
        for r in self.running:
            r.kill()
        leftovers = []
        for app in self.app_ids():
            for p in job_processes(self.jobs_dir / app):
                leftovers.append(p)
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        return leftovers


# -- processes of a job ---------------------------------------------------------


class Proc:
    def __init__(self, pid, cmdline, env, why):
        self.pid = pid
        self.cmdline = cmdline
        self.env = env
        self.why = why

    def __repr__(self):
        return f"pid {self.pid} ({self.why}): {' '.join(self.cmdline)[:200]}"


def _read(path, mode="rb"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:
        return None


def process_state(pid):
    """The state letter of `pid` (R, S, Z, ...), or None if it does not exist."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    return stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3].decode()


def _stat_field(pid, n):
    """Field n of /proc/<pid>/stat after the command name (0: state,
    2: process group, 3: session), or None."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    return int(stat[stat.rfind(b")") + 2:].split()[n])


def session_of(pid):
    """The session id of `pid`, or None."""
    return _stat_field(pid, 3)


def group_of(pid):
    """The process group id of `pid`, or None."""
    return _stat_field(pid, 2)


def all_processes():
    """Every live (not zombie) process but this one: Proc with environment."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        state = process_state(pid)
        if state is None or state in ("Z", "X"):
            continue
        raw_env = _read(f"/proc/{pid}/environ") or b""
        env = {}
        for item in raw_env.split(b"\0"):
            k, sep, v = item.partition(b"=")
            if sep:
                env[k.decode(errors="replace")] = v.decode(errors="replace")
        cmdline = [a.decode(errors="replace")
                   for a in (_read(f"/proc/{pid}/cmdline") or b"").split(b"\0") if a]
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        yield pid, cmdline, env, cwd


def job_processes(job_dir):
    """Live processes that belong to the job in `job_dir`: its AM, its
    containers and everything they started. A process belongs to the job if
    its CONTAINER_ID is one of the job's containers (every container and the
    AM have one, and tasks inherit it), its working directory is in the job
    dir, or its command line names the job dir or the application."""
    job_dir = Path(job_dir)
    app = job_dir.name
    marker = "container_" + app[len("application_"):] + "_"
    found = []
    for pid, cmdline, env, cwd in all_processes():
        why = None
        if env.get("CONTAINER_ID", "").startswith(marker):
            why = f"CONTAINER_ID={env['CONTAINER_ID']}"
        elif cwd == str(job_dir) or cwd.startswith(str(job_dir) + "/"):
            why = f"cwd {cwd}"
        elif any(str(job_dir) in a or app in a for a in cmdline):
            why = "command line"
        if why:
            found.append(Proc(pid, cmdline, env, why))
    return found


def wait_job_gone(job_dir, timeout):
    """Waits until no process of the job is left; returns the leftovers
    (empty on success)."""
    deadline = time.monotonic() + timeout
    while True:
        left = job_processes(job_dir)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def find_task_process(job_dir, task, predicate, timeout):
    """The first process of `task` ("worker:1") of the job that satisfies
    `predicate(Proc)`, waiting up to `timeout` seconds for it to appear."""
    task_type, _, index = task.partition(":")
    deadline = time.monotonic() + timeout
    while True:
        for p in job_processes(job_dir):
            if (p.env.get("TONY_TASK_TYPE", p.env.get("JOB_NAME")) == task_type and
                    p.env.get("TONY_TASK_INDEX", p.env.get("TASK_INDEX")) == index and
                    predicate(p)):
                return p
        if time.monotonic() >= deadline:
            raise AssertionError(f"no matching process of {task} in {job_dir} within "
                                 f"{timeout} s; the job's processes: {job_processes(job_dir)}")
        time.sleep(0.1)


def is_executor(p):
    return bool(p.cmdline) and p.cmdline[0].endswith("tony-executor")
