"""TensorFlow MultiWorkerMirroredStrategy with Keras model.fit.

Every worker holds a replica of a small MLP; each step all-reduces the
gradients over the workers (ring collectives over gRPC). The cluster comes
from TF_CONFIG, which tony sets. Both workers check that the loss went down
and that their weights are identical, print a final line and exit 0, or exit
1 with a message naming the failed check. Collectives time out instead of
hanging when a peer is missing or gone.
"""

import argparse
import json
import os
import signal
import sys
import time

import numpy as np
import tensorflow as tf
import tf_keras as keras

FEATURES = 16


def log(text):
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
    print(f"[{task.get('type', 'local')}:{task.get('index', 0)}] {text}", flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--global-batch-size", type=int, default=64)
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds any collective may wait for the other workers")
    return p.parse_args()


def dataset(global_batch, samples=4096):
    """y = a fixed non-linear function of x, plus a little noise. Every worker
    builds the same data; auto-sharding gives each one its own part."""
    rng = np.random.default_rng(42)
    x = rng.normal(size=(samples, FEATURES)).astype("float32")
    w = rng.normal(size=(FEATURES, 1)).astype("float32")
    y = (np.tanh(x @ w) + 0.1 * x[:, :1] ** 2 + 0.05 * rng.normal(size=(samples, 1))).astype("float32")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(samples, seed=1).repeat().batch(global_batch)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.with_options(options)


def bound_start_up(tf_config, timeout):
    """MWMS waits for every worker to register with the coordination service
    (hosted by worker 0) for an hour by default, and then detects dead peers
    by heartbeats. Configure that service ourselves, with the same jobs MWMS
    would use, so a missing worker fails the start within `timeout` seconds
    and a worker lost during training fails the others in about 20s.
    There is no public API for this; MWMS keeps a configuration it finds."""
    cluster = tf_config.get("cluster", {})
    if not cluster:
        return
    from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
    from tensorflow.python.eager import context
    jobs = [coordination_config_pb2.CoordinatedJob(name=name, num_tasks=len(cluster[name]))
            for name in ("chief", "worker") if name in cluster]
    leader = "chief" if "chief" in cluster else "worker"
    context.context().configure_coordination_service(
        service_type="standalone",
        service_leader=f"/job:{leader}/replica:0/task:0",
        cluster_register_timeout_in_ms=int(timeout * 1000),
        heartbeat_timeout_in_ms=20000,
        coordinated_jobs=jobs)
    # Registration is a barrier bounded by the timeout above only with this on.
    context.context().coordination_service.cluster_register_with_barrier = True


def main():
    args = parse_args()
    started = time.monotonic()
    tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    workers = len(tf_config.get("cluster", {}).get("worker", [])) or 1
    bound_start_up(tf_config, args.timeout)
    communication = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING,
        timeout_seconds=args.timeout)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=communication)
    # The coordination service catches SIGTERM (to note preemptions) and the
    # process then ignores it; restore the default so tony's stop request
    # ends the task at once instead of after its grace period.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    log(f"{strategy.num_replicas_in_sync} replicas in sync over {workers} workers")
    if strategy.num_replicas_in_sync != workers:
        log(f"FAILED: expected {workers} replicas, got {strategy.num_replicas_in_sync}")
        return 1

    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([
            keras.Input(shape=(FEATURES,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(1),
        ])
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9), loss="mse")

    history = model.fit(dataset(args.global_batch_size), epochs=args.epochs,
                        steps_per_epoch=args.steps_per_epoch, verbose=2)
    losses = history.history["loss"]

    # The replicas must agree: compare a checksum of the weights through one
    # more collective (sum over workers == workers x mine).
    checksum = float(sum(np.sum(w.numpy(), dtype=np.float64) for w in model.weights))

    @tf.function
    def sum_over_workers(value):
        return strategy.reduce(tf.distribute.ReduceOp.SUM,
                               strategy.run(lambda: tf.identity(value)), axis=None)

    total = sum_over_workers(tf.constant(checksum, tf.float64))
    if abs(float(total) - workers * checksum) > 1e-9 * max(1.0, abs(checksum)) * workers:
        log(f"FAILED: weights differ between workers: mine sum to {checksum!r}, "
            f"all together {float(total)!r}")
        return 1
    if not losses[-1] < 0.7 * losses[0]:
        log(f"FAILED: loss did not decrease enough: {losses[0]:.4f} -> {losses[-1]:.4f}")
        return 1
    log(f"tensorflow example OK: {workers} workers, loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
        f"weights checksum {checksum:.6f}, {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tf.errors.OpError as e:  # timeouts, lost peers, unreachable leader
        first_line = (e.message or str(e)).strip().split("\n")[0]
        log(f"FAILED: distributed error (a worker missing, gone or too slow?): "
            f"{type(e).__name__}: {first_line}")
        sys.exit(1)
