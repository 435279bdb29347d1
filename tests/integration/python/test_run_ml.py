"""tony.run with real PyTorch and TensorFlow across tasks (label ml)."""

import pytest

import tony


def local(box):
    return tony.Job(cluster={"jobs_dir": str(box.jobs_dir)}, policy={"stop_grace": "1s"},
                    env={"OMP_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"})


def test_pytorch_run_all_reduces_across_three_tasks(box):
    pytest.importorskip("torch")

    def all_reduce():
        import torch
        import torch.distributed as dist
        # tony.run joined the process group before calling this.
        assert dist.is_initialized()
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        return dist.get_rank(), dist.get_world_size(), float(t.item())

    results = tony.run(all_reduce, task_specs={"worker": tony.TaskSpec(instances=3,
                                                                       memory="1g")},
                       framework="pytorch", job=local(box), timeout=600)
    assert results == {"worker:0": (0, 3, 6.0), "worker:1": (1, 3, 6.0),
                       "worker:2": (2, 3, 6.0)}


def test_tensorflow_run_with_two_workers_trains_in_sync(box):
    pytest.importorskip("tensorflow")

    def train():
        import numpy as np
        import tensorflow as tf
        import tony.tensorflow
        strategy = tony.tensorflow.strategy()  # MultiWorkerMirroredStrategy
        index = tony.context.task_index()

        @tf.function
        def step():
            ctx = tf.distribute.get_replica_context()
            return ctx.all_reduce("sum", tf.constant(float(index + 1)))

        total = strategy.run(step)
        with strategy.scope():
            w = tf.Variable(0.0)
        x = np.ones((8, 1), dtype="float32")
        ds = tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(4).repeat()
        dist = strategy.experimental_distribute_dataset(ds)

        @tf.function
        def train_step(batch):
            def replica(inputs):
                xb, yb = inputs
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((w * xb - yb) ** 2)
                grad = tape.gradient(loss, w)
                w.assign_sub(0.1 * tf.distribute.get_replica_context().all_reduce(
                    "mean", grad))
            strategy.run(replica, args=(batch,))

        it = iter(dist)
        for _ in range(20):
            train_step(next(it))
        return (type(strategy).__name__, strategy.num_replicas_in_sync,
                float(strategy.experimental_local_results(total)[0]), round(float(w.read_value()), 3))

    results = tony.run(train, task_specs={"worker": tony.TaskSpec(instances=2, memory="2g")},
                       framework="tensorflow", job=local(box), timeout=600)
    assert sorted(results) == ["worker:0", "worker:1"]
    for name, replicas, total, w in results.values():
        assert name in ("MultiWorkerMirroredStrategy", "CollectiveAllReduceStrategy")
        assert replicas == 2 and total == 3.0
    # Both workers hold the same, trained weight (synchronous training).
    assert results["worker:0"][3] == results["worker:1"][3]
    assert abs(results["worker:0"][3] - 2.0) < 0.1
