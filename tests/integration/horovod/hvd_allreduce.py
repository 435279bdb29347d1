"""hvd.init() and an allreduce across the job's ranks: each rank adds its
rank + 1, so every rank must see 1 + 2 + ... + size. Prints one line the
tests read, and exits non-zero when the sum is wrong. Rank 0 then plays a
stranger at the rendezvous (no token in the path) and prints the status it
got."""

import os
import sys
import urllib.error
import urllib.request

import torch
import horovod.torch as hvd

hvd.init()
rank, size = hvd.rank(), hvd.size()
total = hvd.allreduce(torch.tensor([float(rank + 1)]), op=hvd.Sum).item()
expected = size * (size + 1) / 2
print(f"HVD rank={rank} size={size} local_rank={hvd.local_rank()} sum={total:g} "
      f"expected={expected:g} addr={os.environ.get('HOROVOD_GLOO_RENDEZVOUS_ADDR', '')}",
      flush=True)
# The node this rank runs on (YARN's NM_HOST): the YARN test asserts the
# ranks were spread over several hosts.
print(f"HVD host rank={rank} node={os.environ.get('NM_HOST', 'local')}", flush=True)
if rank == 0:
    host_port = os.environ["HOROVOD_GLOO_RENDEZVOUS_ADDR"].split("/", 1)[0]
    request = urllib.request.Request(f"http://{host_port}/global/rank_0",
                                     data=b"x" * 100000, method="PUT")
    try:
        status = urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as e:
        status = e.code
    except OSError as e:  # the server may close before reading the body
        status = f"error:{e}"
    print(f"STRANGER status={status}", flush=True)
hvd.shutdown()
sys.exit(0 if total == expected else 1)
