"""The training script of the elastic PyTorch test, written to torchelastic's
contract: its state is a checkpoint every node reads, loaded at start and
saved by rank 0 after every step, so each re-formed world goes on from the
last step. Every process prints its rounds and steps (the test reads them).

  --checkpoint PATH   the checkpoint file (shared by the nodes)
  --steps N           train at least N steps
  --until-world W     then go on until the world has W nodes again, at most
                      --grace seconds (rank 0 decides, everyone follows)
"""

import argparse
import os
import time

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser()
ap.add_argument("--checkpoint", required=True)
ap.add_argument("--steps", type=int, default=40)
ap.add_argument("--until-world", type=int, default=1)
ap.add_argument("--grace", type=float, default=120)
ap.add_argument("--step-seconds", type=float, default=0.25)
args = ap.parse_args()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
me = os.environ.get("TONY_TASK_ID", "?")
print(f"round task={me} rank={rank} world={world} "
      f"restart={os.environ.get('TORCHELASTIC_RESTART_COUNT')}", flush=True)

torch.manual_seed(rank)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
step = 0
if os.path.exists(args.checkpoint):
    state = torch.load(args.checkpoint)
    model.load_state_dict(state["model"])
    step = state["step"]
# Every node starts the round from rank 0's weights.
for p in model.parameters():
    dist.broadcast(p.data, 0)

started = time.monotonic()
while True:
    go = torch.tensor([1])
    if rank == 0 and step >= args.steps and (
            world >= args.until_world or time.monotonic() - started > args.grace):
        go[0] = 0
    dist.broadcast(go, 0)
    if go.item() == 0:
        break
    x = torch.randn(16, 4)
    y = x.sum(dim=1, keepdim=True)
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world
    opt.step()
    step += 1
    if rank == 0:
        tmp = args.checkpoint + ".tmp"
        torch.save({"model": model.state_dict(), "step": step}, tmp)
        os.replace(tmp, args.checkpoint)
    print(f"step {step} task={me} world={world} loss={loss.item():.4f}", flush=True)
    time.sleep(args.step_seconds)

dist.barrier()
if rank == 0:
    print(f"trained to step {step} world={world}", flush=True)
print(f"finished task={me} rank={rank} world={world}", flush=True)
