"""TensorFlow inside a tony task: the distribution strategy from TF_CONFIG.

tony sets TF_CONFIG for every task of a tensorflow job (doc/task-environment.md):
the training cluster and this task's type and index. strategy() picks the
strategy the cluster calls for, as tf-yarn did for its experiments."""

import json
import os

_strategy = None


def tf_config():
    """TF_CONFIG as a dict (also when tony had to put it in a file)."""
    text = os.environ.get("TF_CONFIG")
    if text is None and os.environ.get("TF_CONFIG_FILE"):
        with open(os.environ["TF_CONFIG_FILE"]) as f:
            text = f.read()
        os.environ["TF_CONFIG"] = text  # TensorFlow's resolver reads the variable
    return json.loads(text) if text else {}


def strategy():
    """The job's strategy, made once per process:

    - a cluster with `ps` tasks: ParameterServerStrategy (run by the chief;
      the workers and ps serve: see serve());
    - several chief/worker tasks: MultiWorkerMirroredStrategy;
    - one task: the default strategy.

    Build it before any other TensorFlow op, as TensorFlow requires."""
    global _strategy
    if _strategy is not None:
        return _strategy
    import tensorflow as tf
    cluster = tf_config().get("cluster", {})
    if cluster.get("ps"):
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        _wait_for_servers(cluster)
        _strategy = tf.distribute.ParameterServerStrategy(resolver)
    elif sum(len(cluster.get(t, [])) for t in ("chief", "worker")) > 1:
        _strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        _strategy = tf.distribute.get_strategy()
    return _strategy


def _wait_for_servers(cluster, timeout=120.0):
    """TensorFlow waits forever for a server that never comes up: probe every
    worker and ps port first, so a missing one fails the task instead."""
    import socket
    import time
    pending = [a for t in ("worker", "ps") for a in cluster.get(t, [])]
    deadline = time.monotonic() + timeout
    while pending:
        host, port = pending[0].rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=1).close()
            pending.pop(0)
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no TensorFlow server listens at {', '.join(pending)} "
                                   f"after {timeout:g} s") from None
            time.sleep(0.2)


def serve():
    """For the workers and ps of a ParameterServerStrategy job: starts this
    task's TensorFlow server and blocks (tony stops the task at the end)."""
    import tensorflow as tf
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id, protocol="grpc",
                                  start=True)
    server.join()


def task():
    """{"type": ..., "index": ...} of this task."""
    return tf_config().get("task", {})


if __name__ == "__main__":
    # python3 -m tony.tensorflow: what tony.run's ps (and, with parameter
    # servers, worker) tasks run.
    serve()
