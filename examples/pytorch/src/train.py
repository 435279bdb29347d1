"""PyTorch DistributedDataParallel on CPU with gloo.

Every rank trains the same small MLP on its own shard of a generated
classification problem; DDP averages the gradients. At the end the ranks
prove they agree: they compare their final parameters element by element
(all-reduce of MAX and MIN) and a checksum, and every rank checks that the
loss went down. Exit 0 on success, 1 with a message naming the failed check.

Reads the variables tony sets for PyTorch jobs: RANK, WORLD_SIZE and
INIT_METHOD (tcp://host:port of rank 0), or MASTER_ADDR/MASTER_PORT through
env:// when INIT_METHOD is absent. Run alone (no RANK) it trains as a
single process, which is handy for a quick try.
"""

import argparse
import datetime
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

FEATURES = 16
CLASSES = 4


class Failure(Exception):
    """A check failed; the message says which and why."""


def log(rank, text):
    print(f"[rank {rank}] {text}", flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--steps-per-epoch", type=int, default=25)
    p.add_argument("--batch-size", type=int, default=64, help="per rank")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for peers at start-up and in every collective")
    return p.parse_args()


def rendezvous():
    """(rank, world_size, init_method) from the task environment."""
    if "RANK" not in os.environ:
        with socket.socket() as s:  # single process: a private store
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return 0, 1, f"tcp://127.0.0.1:{port}"
    try:
        rank = int(os.environ["RANK"])
        world = int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError) as e:
        raise Failure(f"RANK and WORLD_SIZE must be integers: {e}") from e
    init = os.environ.get("INIT_METHOD") or "env://"
    if init == "env://" and not ("MASTER_ADDR" in os.environ and "MASTER_PORT" in os.environ):
        raise Failure("neither INIT_METHOD nor MASTER_ADDR/MASTER_PORT is set")
    return rank, world, init


def make_shard(rank, samples):
    """A fixed random linear teacher labels this rank's own random inputs."""
    teacher = torch.Generator().manual_seed(1234)
    w = torch.randn(FEATURES, CLASSES, generator=teacher)
    b = torch.randn(CLASSES, generator=teacher)
    g = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(samples, FEATURES, generator=g)
    y = (x @ w + b).argmax(dim=1)
    return x, y


def make_model(rank):
    # Seeded by rank on purpose: the ranks start from different weights and
    # DistributedDataParallel must broadcast rank 0's to everybody.
    torch.manual_seed(rank)
    return nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, CLASSES))


def flat_params(module):
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def global_mean(value, world):
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item() / world


def train(args, rank, world):
    x, y = make_shard(rank, args.steps_per_epoch * args.batch_size)
    model = DistributedDataParallel(make_model(rank))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    order = torch.Generator().manual_seed(7 + rank)
    losses = []
    for epoch in range(args.epochs):
        perm = torch.randperm(len(x), generator=order)
        total = 0.0
        for step in range(args.steps_per_epoch):
            idx = perm[step * args.batch_size:(step + 1) * args.batch_size]
            opt.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()  # DDP all-reduces the gradients here
            opt.step()
            total += loss.item()
        losses.append(global_mean(total / args.steps_per_epoch, world))
        log(rank, f"epoch {epoch + 1}/{args.epochs}: mean loss over all ranks {losses[-1]:.4f}")
    return model.module, losses


def verify(model, losses, rank, world):
    params = flat_params(model)
    high, low = params.clone(), params.clone()
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    differing = int((high != low).sum())
    if differing:
        spread = float((high - low).abs().max())
        raise Failure(f"parameters differ between ranks: {differing} of {params.numel()} "
                      f"values disagree (largest spread {spread:g})")
    checksum = float(params.double().sum())
    sums = torch.tensor([checksum] * 2, dtype=torch.float64)
    sums[1] = -sums[1]
    dist.all_reduce(sums, op=dist.ReduceOp.MAX)
    if sums[0] != checksum or -sums[1] != checksum:
        raise Failure(f"parameter checksums differ between ranks: mine {checksum!r}, "
                      f"range [{-float(sums[1])!r}, {float(sums[0])!r}]")
    if not losses[-1] < 0.7 * losses[0]:
        raise Failure(f"loss did not decrease enough: {losses[0]:.4f} -> {losses[-1]:.4f} "
                      "(want below 70% of the first epoch's)")
    return checksum, params.numel()


def main():
    args = parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
    rank = os.environ.get("RANK", "0")  # for messages until it is parsed
    started = time.monotonic()
    try:
        rank, world, init = rendezvous()
        log(rank, f"joining world of {world} via {init} (timeout {args.timeout:g}s)")
        dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=args.timeout))
        try:
            model, losses = train(args, rank, world)
            checksum, count = verify(model, losses, rank, world)
            dist.barrier()
        finally:
            dist.destroy_process_group()
    except Failure as e:
        print(f"[rank {rank}] pytorch example FAILED: {e}", file=sys.stderr, flush=True)
        return 1
    except (RuntimeError, OSError) as e:  # how gloo and the store report lost peers
        print(f"[rank {rank}] pytorch example FAILED: distributed error (a peer missing, "
              f"gone or too slow?): {e}", file=sys.stderr, flush=True)
        return 1
    log(rank, f"pytorch example OK: world {world}, loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
              f"{count} parameters identical on every rank, checksum {checksum:.6f}, "
              f"{time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
