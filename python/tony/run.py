"""tony.run: call a Python function in every task of a job and get back what
each returned.

How it works (doc/python.md):

  client                                         every task
  ------                                         ----------
  cloudpickle fn -> <src>/tony_run/fn.pkl
  copy the tony and cloudpickle packages
    into <src> (the task's working directory)
  listen on a TCP port (HMAC-authenticated:
    multiprocessing.connection's challenge)
  submit: command = python3 -m tony._task  ──▶   load fn.pkl, set up the framework
                                                 (tony.pytorch joins the group)
                                                 call fn()
                  ◀── (task id, value | traceback) connect back, send, exit 0 | 1
  collect until the job ends;
  return {"worker:0": value, ...} or raise JobFailed with the remote traceback

The results travel over a connection from each task back to this process,
so they come back the same way on every backend; on YARN the nodes must
reach the submitting machine (like a Spark driver in client mode): the
address is `client_host`, $TONY_CLIENT_HOST, or this machine's name.
"""

import os
import pickle
import secrets
import shutil
import socket
import struct
import sys
import tempfile
import threading
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from pathlib import Path

import cloudpickle

from . import client
from .errors import FunctionNotPicklable, JobFailed, TonyError
from .job import Job, TaskSpec

RUN_DIR = "tony_run"
FN_FILE = "fn.pkl"
ENV_ADDRESS = "TONY_RUN_ADDRESS"
ENV_AUTHKEY = "TONY_RUN_AUTHKEY"
ENV_FRAMEWORK = "TONY_RUN_FRAMEWORK"
TASK_COMMAND = "python3 -m tony._task"
# Task types that, without a function or command of their own, run a
# service instead of the function (as tf-yarn's task_specs did).
SERVICE_TYPES = ("tensorboard", "ps")
TENSORBOARD_COMMAND = "tensorboard --logdir '{}' --host 0.0.0.0 --port \"$TONY_TASK_PORT\""
SERVE_COMMAND = "python3 -m tony.tensorflow"


def run(fn, task_specs=None, framework=None, files=None, env=None, *, python_venv=None,
        name=None, queue=None, backend=None, hadoop_conf=None, job=None, timeout=None,
        client_host=None, tony_submit=None):
    """Runs `fn()` in every task and returns {"type:index": return value}.

    fn           a function, or {task type: function} (types left out run
                 their TaskSpec's command: a TensorBoard, a ps ...).
                 TaskSpec(fn=...) sets one type's function too.
    task_specs   {task type: TaskSpec}; default one worker.
    framework    "pytorch", "tensorflow", "horovod" or "standalone" (job.toml's
                 default when None). With "pytorch" every task of the world
                 has joined the process group when fn starts.
    files        {name in the task's working dir: local path} to ship.
    env          variables for every task.
    python_venv  an archive to run in (tony.pack_env()).
    job          a Job with any other setting (policy, cluster, am ...).
    timeout      seconds to wait; then the job is killed, TimeoutError.

    Raises JobFailed (with each failed task's remote traceback) when a task
    fails, FunctionNotPicklable when fn cannot be shipped, and whatever
    tony.submit raises. Ctrl-C kills the job."""
    base = Job(**job.to_dict()) if job is not None else Job()
    specs = dict(task_specs or {"worker": TaskSpec()})
    fns = _functions(fn, specs)
    authkey = secrets.token_bytes(32)
    src = Path(tempfile.mkdtemp(prefix="tony-run-"))
    server = None
    try:
        _ship(src, fns, files)
        backend = backend or base.cluster.get("backend") or "local"
        server = _ResultServer(authkey, backend, client_host)
        run_job = _job_for(base, specs, fns, src, framework, env, python_venv, name,
                           queue, server.address, authkey)
        handle = client.submit(run_job, backend=backend, hadoop_conf=hadoop_conf,
                               tony_submit=tony_submit)
        try:
            handle.wait(timeout)
        except TimeoutError:
            handle.kill()
            raise
        except JobFailed as e:
            _attach_tracebacks(e, server.collect())
            raise
        return _values(server.collect(), handle)
    finally:
        if server is not None:
            server.close()
        shutil.rmtree(src, ignore_errors=True)


def _functions(fn, specs):
    """{task type: function} for the types that run a function."""
    fns = {}
    if callable(fn):
        fns = {t: fn for t, s in specs.items()
               if not s.command and t not in SERVICE_TYPES}
    elif isinstance(fn, dict):
        for t, f in fn.items():
            if t not in specs:
                raise TonyError(f"a function for task type '{t}', which task_specs does "
                                f"not have (it has {', '.join(specs)})")
            fns[t] = f
    elif fn is not None:
        raise TypeError(f"fn must be a function or a dict of task type to function, "
                        f"got {type(fn).__name__}")
    for t, s in specs.items():
        if s.fn is not None:
            fns[t] = s.fn
    for t, f in fns.items():
        if not callable(f):
            raise TypeError(f"the function of task type '{t}' is not callable: {f!r}")
    if not fns:
        raise TonyError("no task type runs a function: pass fn, or TaskSpec(fn=...)")
    return fns


def _ship(src, fns, files):
    """The task's working directory: fn.pkl, the tony and cloudpickle
    packages (the client's own versions, so both ends agree), the files."""
    (src / RUN_DIR).mkdir()
    by_value = _modules_by_value(fns)
    for m in by_value:
        cloudpickle.register_pickle_by_value(m)
    try:
        data = cloudpickle.dumps(fns)
    except Exception as e:  # pickling raises many kinds
        raise FunctionNotPicklable(_pickle_problem(fns, e)) from e
    finally:
        for m in by_value:
            cloudpickle.unregister_pickle_by_value(m)
    (src / RUN_DIR / FN_FILE).write_bytes(data)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for module in (Path(__file__).parent, Path(cloudpickle.__file__).parent):
        shutil.copytree(module, src / module.name, ignore=ignore)
    for name, path in (files or {}).items():
        target = src / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise TonyError(f"files: '{name}' must be a relative name inside the task's "
                            "working directory")
        if not Path(path).exists():
            raise TonyError(f"files: '{path}' (for '{name}') does not exist")
        target.parent.mkdir(parents=True, exist_ok=True)
        if Path(path).is_dir():
            shutil.copytree(path, target, ignore=ignore)
        else:
            shutil.copy2(path, target)


def _modules_by_value(fns):
    """The modules of the functions that the tasks could not import: those
    of the user's own code (a script's helpers, a test module), not of
    installed packages nor tony itself. cloudpickle ships functions of
    __main__ by value anyway; these it would ship by reference."""
    roots = {os.path.realpath(p) for p in sys.path if p.endswith("-packages")}
    roots.add(os.path.realpath(os.path.dirname(os.path.dirname(__file__))))
    roots.add(os.path.realpath(sys.prefix))
    roots.add(os.path.realpath(getattr(sys, "base_prefix", sys.prefix)))
    found = []
    for f in fns.values():
        m = sys.modules.get(getattr(f, "__module__", None) or "")
        path = getattr(m, "__file__", None)
        if m is None or path is None or m.__name__ == "__main__":
            continue
        real = os.path.realpath(path)
        if not any(real.startswith(r + os.sep) for r in roots) and m not in found:
            found.append(m)
    return found


def _pickle_problem(fns, error):
    """Which function could not be pickled, and why."""
    for t, f in fns.items():
        try:
            cloudpickle.dumps(f)
        except Exception as e:
            what = getattr(f, "__qualname__", repr(f))
            return (f"cannot ship the function {what} of task type '{t}' to the tasks: "
                    f"{type(e).__name__}: {e} (everything it refers to must be picklable; "
                    "create sockets, locks, open files and clients inside the function)")
    return f"cannot ship the functions to the tasks: {type(error).__name__}: {error}"


def _job_for(base, specs, fns, src, framework, env, python_venv, name, queue, address,
             authkey):
    job = base
    job.code["src_dir"] = str(src)
    if python_venv is not None:
        job.code["python_venv"] = str(Path(python_venv).resolve())
    if framework is not None:
        job.framework = framework
    tasks = {}
    for t, spec in specs.items():
        spec = spec.replace(fn=None)
        if t in fns:
            spec.command = TASK_COMMAND
        elif not spec.command:
            spec.command = _service_command(t, job)
            if spec.tracked is None and t != "tensorboard":
                spec.tracked = False  # a server never ends on its own
        tasks[t] = spec
    _serve_workers(job, tasks, specs, fns)
    job.tasks = tasks
    job.name = name or job.name or "tony-run"
    if queue is not None:
        job.queue = queue
    job_env = dict(job.env)
    job_env.update(env or {})
    job_env[ENV_ADDRESS] = f"{address[0]}:{address[1]}"
    job_env[ENV_AUTHKEY] = authkey.hex()
    job_env[ENV_FRAMEWORK] = job.framework or "tensorflow"
    job.env = job_env
    return job


def _service_command(task_type, job):
    if task_type == "tensorboard":
        log_dir = job.tensorboard.get("log_dir") or job.data.get("output_path")
        if not log_dir:
            raise TonyError("task_specs has a tensorboard task: name the directory it "
                            "shows with job=Job(tensorboard={'log_dir': ...}) or "
                            "Job(data={'output_path': ...})")
        job.tensorboard["enabled"] = True
        job.tensorboard.setdefault("log_dir", log_dir)
        return TENSORBOARD_COMMAND.format(log_dir)
    if (job.framework or "tensorflow") != "tensorflow":
        raise TonyError(f"task type '{task_type}' has no function and no command")
    return SERVE_COMMAND


def _serve_workers(job, tasks, specs, fns):
    """TensorFlow with parameter servers: the chief runs the function (it
    coordinates, ParameterServerStrategy); workers without a function of
    their own serve, untracked, like the ps."""
    if (job.framework or "tensorflow") != "tensorflow" or "ps" not in tasks:
        return
    w = tasks.get("worker")
    if w is None or specs["worker"].fn is not None or specs["worker"].command:
        return
    w.command = SERVE_COMMAND
    if w.tracked is None:
        w.tracked = False
    fns.pop("worker", None)


def _values(results, handle):
    """{task: value} for every task that sent one."""
    out = {}
    for task, record in sorted(results.items(), key=lambda kv: _task_key(kv[0])):
        if record.get("ok"):
            try:
                out[task] = pickle.loads(record["value"])
            except Exception as e:
                raise TonyError(f"{handle.app_id}: cannot unpickle what {task} returned: "
                                f"{type(e).__name__}: {e} (its type must be importable "
                                "here too)") from e
    return out


def _task_key(task):
    t, _, i = task.partition(":")
    return (t, int(i) if i.isdigit() else 0)


def _attach_tracebacks(error, results):
    """Puts each task's remote traceback on the JobFailed."""
    for failure in error.failed_tasks:
        record = results.get(failure.task)
        if record and not record.get("ok"):
            failure.traceback = record.get("traceback")
    for task, record in results.items():  # a task that raised but was not listed
        if not record.get("ok") and task not in [f.task for f in error.failed_tasks]:
            from .errors import TaskFailure
            error.failed_tasks.append(TaskFailure(task, "FAILED", 1,
                                                  traceback=record.get("traceback")))
    error.args = (error._message(),)


class _ResultServer:
    """Accepts the tasks' connections and keeps what each sent. A task that
    cannot prove it holds the job's key is dropped before anything of it
    is unpickled."""

    def __init__(self, authkey, backend, client_host):
        self.authkey = authkey
        self.results = {}
        self.lock = threading.Lock()
        bind = "127.0.0.1" if backend == "local" and not client_host else "0.0.0.0"
        self.sock = socket.create_server((bind, 0))
        self.sock.settimeout(0.2)
        port = self.sock.getsockname()[1]
        host = client_host or os.environ.get("TONY_CLIENT_HOST")
        if not host:
            host = "127.0.0.1" if bind == "127.0.0.1" else socket.getfqdn()
        self.address = (host, port)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._receive, args=(conn,), daemon=True).start()

    def _receive(self, conn):
        # Blocking, as Connection needs, but never forever: a peer that
        # stalls is dropped after a minute.
        conn.setblocking(True)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 60, 0))
        c = Connection(conn.detach())
        try:
            deliver_challenge(c, self.authkey)
            answer_challenge(c, self.authkey)
            record = pickle.loads(c.recv_bytes())
            with self.lock:
                self.results[record["task"]] = record
            c.send_bytes(b"ok")
        except Exception:
            pass  # not one of the job's tasks, or it went away
        finally:
            c.close()

    def collect(self):
        with self.lock:
            return dict(self.results)

    def close(self):
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()
