"""hvd.init() and an allreduce across the job's ranks: each rank adds its
rank + 1, so every rank must see 1 + 2 + ... + size. Prints one line the
tests read, and exits non-zero when the sum is wrong."""

import os
import sys

import torch
import horovod.torch as hvd

hvd.init()
rank, size = hvd.rank(), hvd.size()
total = hvd.allreduce(torch.tensor([float(rank + 1)]), op=hvd.Sum).item()
expected = size * (size + 1) / 2
print(f"HVD rank={rank} size={size} local_rank={hvd.local_rank()} sum={total:g} "
      f"expected={expected:g} addr={os.environ.get('HOROVOD_GLOO_RENDEZVOUS_ADDR', '')}",
      flush=True)
hvd.shutdown()
sys.exit(0 if total == expected else 1)
