"""A small distributed TensorFlow job written the way the YARN-DTF design's
examples run theirs: between-graph replication with parameter servers, the
cluster given on the command line (--ps_hosts, --worker_hosts, --job_name,
--task_index), the data and output dirs as arguments. Without those flags it
reads TonY's variables (JOB_NAME, TASK_INDEX, CLUSTER_SPEC), as TonY's
mnist_distributed.py does.

Each worker fits y = 3x on the points of <data_dir>/points.csv (or its own
when there is no such local file), with the weight on the ps; it prints one
line "dtf example OK ..." and, when --train_dir is a local directory, writes
worker-<index>.done there. The ps serves until it is stopped.
"""

import argparse
import json
import os
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--job_name", default=os.environ.get("JOB_NAME"))
    p.add_argument("--task_index", type=int, default=int(os.environ.get("TASK_INDEX", "0")))
    spec = json.loads(os.environ.get("CLUSTER_SPEC", "{}"))
    p.add_argument("--ps_hosts", default=",".join(spec.get("ps", [])))
    p.add_argument("--worker_hosts", default=",".join(spec.get("worker", [])))
    p.add_argument("--data_dir", default="")
    p.add_argument("--train_dir", default="")
    p.add_argument("--steps", type=int, default=30)
    args, unknown = p.parse_known_args()
    if not (args.job_name and args.ps_hosts and args.worker_hosts):
        p.error("give --job_name, --ps_hosts and --worker_hosts, or run under TonY's "
                "variables (JOB_NAME, CLUSTER_SPEC)")

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    cluster = tf.train.ClusterSpec({"ps": args.ps_hosts.split(","),
                                    "worker": args.worker_hosts.split(",")})
    server = tf.distribute.Server(cluster, job_name=args.job_name,
                                  task_index=args.task_index)
    if args.job_name == "ps":
        print(f"ps {args.task_index} serving", flush=True)
        server.join()
        return

    points = [(float(i), 3.0 * i) for i in range(1, 6)]
    data_file = os.path.join(args.data_dir, "points.csv")
    if args.data_dir and os.path.exists(data_file):
        with open(data_file) as f:
            points = [tuple(map(float, line.split(","))) for line in f if line.strip()]
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]

    device = tf.compat.v1.train.replica_device_setter(
        worker_device=f"/job:worker/task:{args.task_index}", cluster=cluster)
    with tf.compat.v1.device(device):
        step = tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.get_variable("w", initializer=0.0)
        x = tf.constant(xs)
        y = tf.constant(ys)
        loss = tf.reduce_mean(tf.square(w * x - y))
        train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=step)
    # Only the ps and this worker: a worker that already finished is no
    # reason to wait.
    config = tf.compat.v1.ConfigProto(
        device_filters=["/job:ps", f"/job:worker/task:{args.task_index}"])
    with tf.compat.v1.Session(server.target, config=config) as sess:
        if args.task_index == 0:
            sess.run(tf.compat.v1.global_variables_initializer())
        else:
            pending = tf.compat.v1.report_uninitialized_variables()
            while len(sess.run(pending)) > 0:
                pass
        for _ in range(args.steps):
            sess.run(train)
        final_w, final_loss, final_step = sess.run([w, loss, step])
    # Learnt y = 3x whatever the workers' interleaving.
    converged = abs(final_w - 3.0) < 0.1
    print(f"dtf example OK worker:{args.task_index} converged={converged} w={final_w:.3f} "
          f"loss={final_loss:.4f} "
          f"global_step={final_step} points={len(points)} data_dir={args.data_dir} "
          f"train_dir={args.train_dir} extra={unknown} python={sys.prefix}", flush=True)
    if args.train_dir and "://" not in args.train_dir:
        os.makedirs(args.train_dir, exist_ok=True)
        with open(os.path.join(args.train_dir, f"worker-{args.task_index}.done"), "w") as f:
            f.write(f"{final_w}\n")
    return 0 if converged else 1


if __name__ == "__main__":
    sys.exit(main())
