"""Submitting and following jobs: `submit`, `attach` and the `JobHandle`.

A submitted job is followed by a `tony-submit --output json` child: it owns
the job's life as the CLI does (Ctrl-C kills the job) and tells this module
what happens, one JSON event per line. A job attached by id is asked with
`tony-submit --status --json`. Nothing of the lifecycle is done here.
"""

import json
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

from . import _cli
from .errors import JobFailed, JobKilled, TaskFailure, TonyError
from .job import Job

FINAL_STATES = ("SUCCEEDED", "FAILED", "KILLED")


@dataclass
class TaskStatus:
    """One task as the AM reports it (doc/operations.md, status.json)."""
    type: str
    index: int
    state: str
    attempt: int = 0
    host: str = ""
    port: int = 0
    container_id: str = ""
    exit_code: int = 0
    tracked: bool = True
    diagnostics: str = ""
    started_ms: int = 0
    finished_ms: int = 0
    log_dir: str = ""

    @property
    def id(self):
        return f"{self.type}:{self.index}"

    @classmethod
    def from_json(cls, d):
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class JobStatus:
    """A job's status: the AM's (live or final), as `tony-submit --status
    --json` prints it."""
    app_id: str
    state: str
    name: str = ""
    diagnostics: str = ""
    attempt: int = 0
    started_ms: int = 0
    finished_ms: int = 0
    tracking_url: str = ""
    backend: str = ""
    tasks: List[TaskStatus] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def finished(self):
        return self.state in FINAL_STATES

    def task(self, task_id):
        """The latest attempt of task "type:index", or None."""
        found = [t for t in self.tasks if t.id == task_id]
        return found[-1] if found else None

    @classmethod
    def from_json(cls, d):
        known = cls.__dataclass_fields__
        plain = {k: v for k, v in d.items() if k in known and k not in ("tasks", "raw")}
        return cls(tasks=[TaskStatus.from_json(t) for t in d.get("tasks", [])], raw=d,
                   **plain)


@dataclass
class Event:
    """One line of `tony-submit --output json`: `kind` is its "event"
    (submitted, yarn_state, job_state, task_started, task_finished, ...,
    finished) and `data` the whole object."""
    kind: str
    data: dict

    @property
    def task(self):
        t = self.data.get("task")
        return TaskStatus.from_json(t) if isinstance(t, dict) else None

    @property
    def state(self):
        if "job" in self.data:
            return self.data["job"].get("state")
        return self.data.get("state")


class JobHandle:
    """A job: submitted from here (followed by a tony-submit child) or
    attached by its application id."""

    def __init__(self, app_id, backend=None, jobs_dir=None, hadoop_conf=None,
                 tony_submit=None, process=None):
        self.app_id = app_id
        self.backend = backend
        self.jobs_dir = jobs_dir
        self.hadoop_conf = hadoop_conf
        self.tony_submit = tony_submit
        self._process = process  # a _Follower, or None when attached
        self._tracking_url = ""

    def __repr__(self):
        return f"<JobHandle {self.app_id} ({self.backend})>"

    # -- what the job is doing -----------------------------------------------------

    def _where(self):
        return _cli.control_args(self.backend, self.jobs_dir, self.hadoop_conf)

    def status(self):
        """The job's status now (JobStatus)."""
        out = _cli.call(["--status", self.app_id, "--json", *self._where()],
                        self.tony_submit, what="id")
        return JobStatus.from_json(json.loads(out))

    @property
    def tracking_url(self):
        """The job's tracking URL (the RM's proxy on YARN), once known."""
        if not self._tracking_url and self._process is not None:
            self._tracking_url = self._process.tracking_url
        if not self._tracking_url:
            self._tracking_url = self.status().tracking_url
        return self._tracking_url

    def events(self, timeout=None):
        """The job's events as they happen (Event), up to "finished". Only for
        a job submitted from here; an attached job has no event stream (poll
        status() instead)."""
        if self._process is None:
            raise TonyError(f"{self.app_id} was attached, not submitted from here: "
                            "it has no event stream; poll status()")
        return self._process.events(timeout)

    def logs(self, task=None, file=None):
        """The task logs as text: every task's stdout and stderr, or those of
        `task` ("worker:1"), or one `file` of its log dir."""
        args = ["--logs", self.app_id, *self._where()]
        if task:
            args += ["--task", task]
        if file:
            args += ["--file", file]
        return _cli.call(args, self.tony_submit, what="id")

    def read_file(self, task, name):
        """The bytes of file `name` in the log dir of `task`."""
        return _cli.call(["--logs", self.app_id, "--task", task, "--file", name,
                          *self._where()], self.tony_submit, what="id", binary=True)

    # -- control ---------------------------------------------------------------------

    def kill(self):
        """Kills the job and waits until it has stopped."""
        if self._process is not None and self._process.running():
            self._process.interrupt()
            if self._process.wait(timeout=120) is not None:
                return
        _cli.call(["--kill", self.app_id, *self._where()], self.tony_submit, what="id")

    def wait(self, timeout=None, poll=1.0):
        """Waits for the job to end. Returns its final JobStatus when it
        SUCCEEDED; raises JobFailed (JobKilled) otherwise, TimeoutError when
        `timeout` seconds pass first (the job runs on). Ctrl-C
        (KeyboardInterrupt) kills the job, then propagates."""
        try:
            if self._process is not None:
                return self._wait_followed(timeout)
            return self._wait_polled(timeout, poll)
        except KeyboardInterrupt:
            self.kill()
            raise

    def _wait_followed(self, timeout):
        code = self._process.wait(timeout)
        if code is None:
            raise TimeoutError(f"{self.app_id} still runs after {timeout} s")
        final = self._process.final
        if code == _cli.EXIT_SUCCEEDED and final is not None:
            return JobStatus.from_json(final["status"])
        if final is None:  # tony-submit gave up: the AM or the RM failed
            raise _cli.error_for(code if code > 1 else _cli.EXIT_INFRA,
                                 self._process.stderr(), "id")
        raise _failure(final)

    def _wait_polled(self, timeout, poll):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            st = self.status()
            if st.finished:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"{self.app_id} still runs after {timeout} s")
            time.sleep(poll)
        if st.state == "SUCCEEDED":
            return st
        failed = [TaskFailure(t.id, t.state, t.exit_code, t.diagnostics,
                              log_dir=t.log_dir)
                  for t in st.tasks if t.state in ("FAILED", "LOST")]
        kind = JobKilled if st.state == "KILLED" else JobFailed
        raise kind(st.app_id, st.state, st.diagnostics, failed, st)


def _failure(final):
    failed = [TaskFailure(t["task"], t["state"], t.get("exit_code"), t.get("diagnostics", ""),
                          t.get("stderr_tail", ""), t.get("log_dir", ""))
              for t in final.get("failed_tasks", [])]
    status = JobStatus.from_json(final["status"]) if "status" in final else None
    kind = JobKilled if final.get("state") == "KILLED" else JobFailed
    return kind(final.get("app_id"), final.get("state"), final.get("diagnostics", ""),
                failed, status)


class _Follower:
    """The tony-submit --output json child that follows a job, and the
    thread that reads its events."""

    def __init__(self, argv, env):
        # A session of its own: a Ctrl-C in a terminal reaches this Python
        # only, which then stops the job through interrupt(), exactly once.
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        self.queue = queue.Queue()
        self.submitted = threading.Event()
        self.app_id = None
        self.info = {}
        self.final = None
        self.tracking_url = ""
        self._stderr = []
        self.on_exit = []
        self._readers = [threading.Thread(target=self._read_events, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for r in self._readers:
            r.start()

    def _read_events(self):
        for raw in self.proc.stdout:
            try:
                data = json.loads(raw)
            except ValueError:
                continue  # not an event line; tony-submit keeps stdout for events
            ev = Event(data.get("event", ""), data)
            if ev.kind == "submitted":
                self.app_id = data.get("app_id")
                self.info = data
                self.submitted.set()
            elif ev.kind == "finished":
                self.final = data
            url = data.get("tracking_url") or data.get("job", {}).get("tracking_url")
            if url:
                self.tracking_url = url
            self.queue.put(ev)
        self.proc.wait()
        for fn in self.on_exit:
            fn()
        self.queue.put(None)
        self.submitted.set()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self._stderr.append(line.decode(errors="replace"))

    def stderr(self):
        for r in self._readers:
            r.join(5)
        return "".join(self._stderr)

    def running(self):
        return self.proc.poll() is None

    def interrupt(self):
        """What Ctrl-C does to tony-submit: it kills the job and exits."""
        if self.running():
            try:
                self.proc.send_signal(signal.SIGINT)
            except OSError:
                pass

    def wait(self, timeout=None):
        """tony-submit's exit code once it and its readers ended, or None
        after `timeout` seconds."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        for r in self._readers:
            r.join(10)
        return code

    def events(self, timeout):
        while True:
            ev = self.queue.get(timeout=timeout)
            if ev is None:
                return
            yield ev


def submit(job, backend=None, hadoop_conf=None, tony_submit=None, detach=False):
    """Submits `job` (a Job, or the path of a job.toml) and returns its
    JobHandle once the job has an application id. The job is followed by a
    tony-submit child until it ends (`detach=True`: not followed; use
    attach-style polling). Raises JobConfigError for an invalid job,
    ClusterError when it cannot be started, TonySubmitNotFound."""
    exe = _cli.find_tony_submit(tony_submit)
    tmp = tempfile.mkdtemp(prefix="tony-submit-")
    if isinstance(job, Job):
        path = job.for_submission(tmp)
        jobs_dir = job.cluster.get("jobs_dir")
        backend = backend or job.cluster.get("backend")
    else:
        path = Path(job)
        jobs_dir = Job.from_toml(path).cluster.get("jobs_dir")
    argv = [exe, str(path), "--output", "json"]
    if backend:
        argv += ["--backend", backend]
    if hadoop_conf:
        argv += ["--hadoop-conf", str(hadoop_conf)]
    if detach:
        argv.append("--detach")
    follower = _Follower(argv, _cli.environment())
    try:
        follower.submitted.wait()
        if follower.app_id is None:
            code = follower.wait()
            raise _cli.error_for(code, follower.stderr(), "job")
    except KeyboardInterrupt:
        follower.interrupt()
        follower.wait(60)
        raise
    backend = follower.info.get("backend", backend)
    handle = JobHandle(follower.app_id, backend, jobs_dir, hadoop_conf, tony_submit,
                       None if detach else follower)
    if detach:
        # The local backend links the job's code dir into its containers:
        # a detached job keeps its generated directory.
        follower.wait(60)
    else:
        follower.on_exit.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    return handle


def attach(app_id, backend=None, jobs_dir=None, hadoop_conf=None, tony_submit=None):
    """A JobHandle for a job submitted elsewhere. Raises UnknownJob when no
    job has this id."""
    handle = JobHandle(app_id, backend, jobs_dir, hadoop_conf, tony_submit)
    st = handle.status()
    handle.backend = st.backend or backend
    return handle
