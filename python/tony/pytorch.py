"""PyTorch inside a tony task: the process group from tony's environment.

tony sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE and LOCAL_RANK for every
task of the training world (doc/task-environment.md), so joining is
torch.distributed's env:// method. tony.run calls init_process_group() before
the function of a pytorch job starts."""

import os
from datetime import timedelta


def init_process_group(backend=None, timeout=timedelta(minutes=5)):
    """Joins the job's process group (gloo, or nccl when this task has a GPU
    and `backend` is not given). Returns the torch.distributed module. A task
    outside the world (ps, evaluator, tensorboard) has no rank and cannot
    join: ValueError."""
    import torch
    import torch.distributed as dist
    if "RANK" not in os.environ:
        raise ValueError(f"task {os.environ.get('TONY_TASK_ID', '?')} is not part of the "
                         "training world (ps, evaluator and tensorboard tasks are not): "
                         "it has no RANK")
    if dist.is_initialized():
        return dist
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() \
            else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(local_rank())
    dist.init_process_group(backend, init_method="env://", timeout=timeout)
    return dist


def destroy_process_group():
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def rank():
    return int(os.environ["RANK"])


def world_size():
    return int(os.environ["WORLD_SIZE"])


def local_rank():
    return int(os.environ.get("LOCAL_RANK", "0"))
