"""The exceptions of the tony package. Every one is a TonyError; each also
derives from the built-in exception a caller would expect (ValueError for bad
input, LookupError for an unknown id, ...)."""


class TonyError(Exception):
    """Base of every tony error."""


class TonySubmitNotFound(TonyError, FileNotFoundError):
    """The tony-submit program cannot be found."""


class JobConfigError(TonyError, ValueError):
    """The job is not valid (tony-submit exit code 2 on a job): the message
    is job.toml's, one problem per line."""


class UnknownJob(TonyError, LookupError):
    """No job has this application id (or no task / file of that name)."""


class ClusterError(TonyError):
    """The infrastructure failed (tony-submit exit code 3): the
    ResourceManager is unreachable, the ApplicationMaster could not start,
    staging failed, ..."""


class FunctionNotPicklable(TonyError, TypeError):
    """tony.run could not serialize the function (or what it refers to)."""


class TaskFailure:
    """One failed task of a job: its id ("worker:1"), state, exit code, the
    signal that killed it (or None), the AM's diagnostics, the tail of its
    stderr and, for tony.run, the Python traceback it raised."""

    def __init__(self, task, state, exit_code, diagnostics="", stderr_tail="",
                 log_dir="", traceback=None):
        self.task = task
        self.state = state
        self.exit_code = exit_code
        self.diagnostics = diagnostics
        self.stderr_tail = stderr_tail
        self.log_dir = log_dir
        self.traceback = traceback

    @property
    def signal(self):
        """The signal number that killed the task's command, or None."""
        if self.exit_code is not None and self.exit_code > 128:
            return self.exit_code - 128
        return None

    def __repr__(self):
        return f"TaskFailure({self.task!r}, {self.state!r}, exit_code={self.exit_code})"


class JobFailed(TonyError):
    """The job ended FAILED (or KILLED: JobKilled). Carries the AM's
    diagnostics, the failed tasks (TaskFailure, with their stderr tails) and
    the final status."""

    def __init__(self, app_id, state, diagnostics, failed_tasks=(), status=None):
        self.app_id = app_id
        self.state = state
        self.diagnostics = diagnostics
        self.failed_tasks = list(failed_tasks)
        self.status = status
        super().__init__(self._message())

    @property
    def remote_traceback(self):
        """The first traceback a task of tony.run raised, or None."""
        for t in self.failed_tasks:
            if t.traceback:
                return t.traceback
        return None

    def _message(self):
        lines = [f"job {self.app_id} {self.state}: {self.diagnostics}".rstrip(": ")]
        for t in self.failed_tasks:
            if t.traceback:
                lines += [f"--- {t.task} raised ---", t.traceback.rstrip()]
            elif t.stderr_tail and t.stderr_tail not in self.diagnostics:
                lines += [f"--- {t.task}: last lines of its stderr ---",
                          t.stderr_tail.rstrip()]
        return "\n".join(lines)


class JobKilled(JobFailed):
    """The job ended KILLED (tony-submit --kill, Ctrl-C, its timeout)."""
