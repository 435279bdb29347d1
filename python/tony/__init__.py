"""tony from Python: jobs as objects, submitted, followed and controlled
through tony-submit; a Python function run in every task of a cluster; the
current environment packed for shipping. See doc/python.md."""

from . import context
from .client import Event, JobHandle, JobStatus, TaskStatus, attach, submit
from .errors import (ClusterError, FunctionNotPicklable, JobConfigError, JobFailed,
                     JobKilled, TaskFailure, TonyError, TonySubmitNotFound, UnknownJob)
from .job import SCHEMA, TASK_KEYS, Job, TaskSpec
from .pack import pack_env
from .run import run

__version__ = "0.1.0"

__all__ = [
    "ClusterError", "Event", "FunctionNotPicklable", "Job", "JobConfigError", "JobFailed",
    "JobHandle", "JobKilled", "JobStatus", "SCHEMA", "TASK_KEYS", "TaskFailure", "TaskSpec",
    "TaskStatus", "TonyError", "TonySubmitNotFound", "UnknownJob", "attach", "context",
    "pack_env", "run", "submit",
]
