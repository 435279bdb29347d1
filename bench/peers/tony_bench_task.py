"""tf-yarn task module of the benchmark (run_on_yarn's custom_task_module).

It goes through the same container protocol as tf-yarn's TensorFlow task
(tf_yarn/tensorflow/tasks/_independent_workers_task.py): reserve a port,
publish it in skein's key-value store, wait for every task's address (the
cluster spec), set TF_CONFIG, signal start, run, signal stop and wait for the
others; only TensorFlow itself is left out, so the task runs the benchmark's
shell command instead of train_and_evaluate.
"""

import json
import os
import socket
import subprocess

import skein

from tf_yarn import _internal, event
from tf_yarn._task_commons import (_get_cluster_tasks, _get_experiment, _setup_container_logs,
                                   get_task_key, setup_logging)

setup_logging()


def main():
    task_key = get_task_key()
    with _internal.reserve_sock_addr() as (host, port):
        client = skein.ApplicationClient.from_current()
        _setup_container_logs(client)
        cluster_tasks = _get_cluster_tasks(client)
        event.init_event(client, task_key, "%s:%d" % (socket.gethostbyname(host), port))
        spec = {}
        for task in sorted(cluster_tasks, key=lambda t: t.id):
            spec.setdefault(task.type, []).append(
                event.wait(client, "%s/init" % task.to_container_key().to_kv_str()))
        env = dict(os.environ)
        env["TF_CONFIG"] = json.dumps({"cluster": spec,
                                       "task": {"type": task_key.type, "index": task_key.id}})
        env["JOB_NAME"] = task_key.type
        env["TASK_INDEX"] = str(task_key.id)
        command = _get_experiment(client)
    event.start_event(client, task_key)
    code = subprocess.call(["/bin/sh", "-c", command], env=env)
    failure = None if code == 0 else RuntimeError("the command exited with %d" % code)
    event.stop_event(client, task_key, failure)
    for task in cluster_tasks:
        event.wait(client, "%s/stop" % task.to_container_key().to_kv_str())
    event.broadcast_container_stop_time(client, task_key)
    if failure is not None:
        raise failure


if __name__ == "__main__":
    main()
