"""Who this task is, from tony's task environment (doc/task-environment.md).
Meant for code running inside a task (a tony.run function, a task command)."""

import json
import os


def _var(name):
    """A tony variable, also when it was too large for the environment and
    went to the file named by <NAME>_FILE."""
    if name in os.environ:
        return os.environ[name]
    path = os.environ.get(name + "_FILE")
    if path:
        with open(path) as f:
            return f.read()
    return None


def task_type():
    """The task's type ("worker")."""
    return os.environ["JOB_NAME"]


def task_index():
    return int(os.environ["TASK_INDEX"])


def task_id():
    """"type:index"."""
    return os.environ.get("TONY_TASK_ID") or f"{task_type()}:{task_index()}"


def is_chief():
    return os.environ.get("IS_CHIEF") == "true"


def cluster_spec():
    """{type: ["host:port", ...]} of every task of the job."""
    text = _var("CLUSTER_SPEC")
    return json.loads(text) if text else {}


def rank():
    """The task's rank in the training world, or None outside it."""
    r = os.environ.get("RANK")
    return int(r) if r is not None else None


def world_size():
    w = os.environ.get("WORLD_SIZE")
    return int(w) if w is not None else None
