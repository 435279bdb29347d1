"""The program every task of tony.run runs (python3 -m tony._task): loads the
shipped function, sets up the framework, calls it, and sends the outcome
back to the client (tony/run.py). Exit codes: 0 the function returned, 1 it
raised, 2 the task is not set up for tony.run, 3 the outcome could not be
sent."""

import multiprocessing
import os
import pickle
import sys
import time
import traceback
from multiprocessing.connection import Client

from . import context
from .run import ENV_ADDRESS, ENV_AUTHKEY, ENV_FRAMEWORK, FN_FILE, RUN_DIR


def _send(record, retries=5):
    host, _, port = os.environ[ENV_ADDRESS].rpartition(":")
    key = bytes.fromhex(os.environ[ENV_AUTHKEY])
    for attempt in range(retries):
        try:
            conn = Client((host, int(port)), authkey=key)
            try:
                conn.send_bytes(pickle.dumps(record))
                conn.recv_bytes()  # the client stored it: safe to exit
                return True
            finally:
                conn.close()
        except (OSError, EOFError, multiprocessing.AuthenticationError) as e:
            problem = f"{type(e).__name__}: {e}"
            time.sleep(0.5 * (attempt + 1))
    print(f"tony: cannot send the outcome of {record['task']} to the client at "
          f"{host}:{port}: {problem} (on YARN the nodes must reach the submitting "
          "machine: set client_host / TONY_CLIENT_HOST)", file=sys.stderr)
    return False


def _setup(framework):
    """The framework's part of 'the cluster is set up' before fn runs."""
    if framework == "pytorch" and "RANK" in os.environ:
        from . import pytorch
        pytorch.init_process_group()
        return pytorch.destroy_process_group
    return None


def main():
    for name in (ENV_ADDRESS, ENV_AUTHKEY):
        if name not in os.environ:
            print(f"tony._task: {name} is not set; this program runs inside tasks "
                  "started by tony.run", file=sys.stderr)
            return 2
    task = context.task_id()
    with open(os.path.join(RUN_DIR, FN_FILE), "rb") as f:
        fns = pickle.load(f)
    fn = fns[context.task_type()]
    teardown = None
    try:
        teardown = _setup(os.environ.get(ENV_FRAMEWORK, ""))
        value = fn()
        try:
            import cloudpickle
            record = {"task": task, "ok": True, "value": cloudpickle.dumps(value)}
        except Exception as e:
            raise TypeError(f"the value {task} returned cannot be pickled: {e}") from e
        code = 0
    except BaseException:
        text = traceback.format_exc()
        sys.stderr.write(text)
        record = {"task": task, "ok": False, "traceback": text}
        code = 1
    finally:
        if teardown is not None:
            try:
                teardown()
            except Exception:
                pass
    if not _send(record):
        return 3
    return code


if __name__ == "__main__":
    sys.exit(main())
