"""TensorFlow ParameterServerStrategy with Keras model.fit.

One program for every task type, chosen by TF_CONFIG (set by tony):
- ps and worker: start a TensorFlow server on their port and serve forever;
- chief: the coordinator. It builds the model (its variables are placed on
  the parameter servers), runs model.fit, which schedules training steps
  onto the workers through a ClusterCoordinator, then evaluates the trained
  model on held-out data and checks the loss went down. Exit 0 on success,
  1 with a message naming the failed check.

Uses tf_keras (Keras 2): Keras 3 does not support ParameterServerStrategy.
"""

import argparse
import json
import os
import socket
import sys
import time

import numpy as np
import tensorflow as tf
import tf_keras as keras

FEATURES = 16


def log(text):
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
    print(f"[{task.get('type', '?')}:{task.get('index', 0)}] {text}", flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--steps-per-epoch", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64, help="per step")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds the chief waits for the workers and ps to listen")
    return p.parse_args()


def make_data(seed, samples):
    """y = a fixed non-linear function of x (the same for every seed)."""
    w = np.random.default_rng(42).normal(size=(FEATURES, 1)).astype("float32")
    x = np.random.default_rng(seed).normal(size=(samples, FEATURES)).astype("float32")
    y = (np.tanh(x @ w) + 0.1 * x[:, :1] ** 2).astype("float32")
    return x, y


def serve(resolver):
    """ps and worker: a TensorFlow server that runs what the chief sends."""
    server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                  task_index=resolver.task_id,
                                  protocol=resolver.rpc_layer or "grpc", start=True)
    log(f"serving at {server.target}")
    server.join()


def wait_for_servers(resolver, timeout):
    """TensorFlow waits forever for a server that never comes up; probe
    every worker and ps port first so a missing task fails the job."""
    spec = resolver.cluster_spec()
    pending = {f"{job}:{i}": spec.task_address(job, i)
               for job in ("worker", "ps") for i in range(spec.num_tasks(job))}
    deadline = time.monotonic() + timeout
    while pending:
        for name, address in list(pending.items()):
            host, port = address.rsplit(":", 1)
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                del pending[name]
            except OSError:
                pass
        if pending and time.monotonic() > deadline:
            return ", ".join(f"{n} ({a})" for n, a in sorted(pending.items()))
        if pending:
            time.sleep(0.2)
    return None


def coordinate(resolver, args):
    started = time.monotonic()
    missing = wait_for_servers(resolver, args.timeout)
    if missing:
        log(f"FAILED: no server listening after {args.timeout:g}s at {missing}")
        return 1
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    workers = resolver.cluster_spec().num_tasks("worker")
    ps = resolver.cluster_spec().num_tasks("ps")
    log(f"connected to {workers} workers and {ps} parameter servers "
        f"({time.monotonic() - started:.1f}s)")

    def dataset_fn(input_context):
        # Runs on every worker: each reads its own part of the data.
        x, y = make_data(seed=1 + input_context.input_pipeline_id, samples=4096)
        batch = input_context.get_per_replica_batch_size(args.batch_size)
        return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096).repeat().batch(batch)

    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([
            keras.Input(shape=(FEATURES,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(1),
        ])
        model.compile(optimizer=keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.9),
                      loss="mse", steps_per_execution=5)
    placed = sorted({v.device for v in model.variables})
    log(f"model variables live on {placed}")

    x_test, y_test = make_data(seed=999, samples=1024)

    def test_loss():
        return float(tf.reduce_mean(tf.square(model(x_test) - y_test)))

    before = test_loss()
    history = model.fit(keras.utils.experimental.DatasetCreator(dataset_fn),
                        epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, verbose=2)
    after = test_loss()
    log(f"training losses per epoch: {[round(v, 4) for v in history.history['loss']]}")
    if not after < 0.7 * before:
        log(f"FAILED: held-out loss did not decrease enough: {before:.4f} -> {after:.4f}")
        return 1
    log(f"tensorflow-ps example OK: {workers} workers, {ps} ps, held-out loss "
        f"{before:.4f} -> {after:.4f}, {time.monotonic() - started:.1f}s")
    return 0


def main():
    args = parse_args()
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if resolver.task_type in ("ps", "worker"):
        serve(resolver)
        return 0
    if resolver.task_type != "chief":
        log(f"FAILED: TF_CONFIG task type {resolver.task_type!r}; "
            "want chief, worker or ps")
        return 1
    return coordinate(resolver, args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tf.errors.OpError as e:  # timeouts, lost parameter servers
        first_line = (e.message or str(e)).strip().split("\n")[0]
        log(f"FAILED: distributed error (a task missing or gone?): "
            f"{type(e).__name__}: {first_line}")
        sys.exit(1)
