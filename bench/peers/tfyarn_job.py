"""Submits the benchmark's trivial job (2 workers + 1 ps) with tf-yarn.

    tfyarn_job.py --command CMD [--pyenv PEX] [--workers N --ps M --memory-mb MB]
                                                 run the job, exit 0 on success
    tfyarn_job.py --package PEX_PATH             pack bench/.venv once

tf-yarn ships the Python environment as an archive; packing bench/.venv takes
minutes, so run.sh does it once (--package, which prints the archive's path)
and every run reuses it, as tf-yarn's docs advise (pyenv_zip_path).
"""

import argparse
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# tf-yarn's and cluster-pack's packaging modules make a /tmp/<uuid1> dir each
# when imported (this client, and every task: all on this machine here) and
# never remove them; the packing step leaves its copy of the environment
# (~600 MiB) in one. The path is fixed, so TMPDIR does not move them: whoever
# runs tf-yarn removes the new ones afterwards (bench.py after each run).
UUID1_DIR = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")


def litter():
    """The /tmp/<uuid1> dirs there now."""
    try:
        return {os.path.join("/tmp", n) for n in os.listdir("/tmp") if UUID1_DIR.match(n)}
    except OSError:
        return set()


def remove_litter(before):
    """Removes the /tmp/<uuid1> dirs made since `before` (litter())."""
    for d in litter() - before:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--command")
    ap.add_argument("--pyenv", default=os.environ.get("TONY_BENCH_TFYARN_PYENV"))
    ap.add_argument("--package", metavar="PEX_PATH",
                    help="pack bench/.venv to this absolute path")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--ps", type=int, default=1)
    ap.add_argument("--memory-mb", type=int, default=1024)
    args = ap.parse_args()
    if args.package:
        before = litter()
        try:
            import cluster_pack
            print(cluster_pack.upload_env(package_path="file://" + args.package)[0])
        finally:
            remove_litter(before)
        return 0
    from tf_yarn import client, topologies
    command = args.command

    def experiment_fn():
        return command

    memory = "%d MiB" % args.memory_mb
    specs = {"worker": topologies.TaskSpec(memory=memory, vcores=1, instances=args.workers)}
    if args.ps:
        specs["ps"] = topologies.TaskSpec(memory=memory, vcores=1, instances=args.ps)
    client.run_on_yarn(
        experiment_fn, specs,
        pyenv_zip_path=args.pyenv,
        custom_task_module="tony_bench_task",
        files={"tony_bench_task.py": os.path.join(HERE, "tony_bench_task.py")},
        name="bench")
    return 0


if __name__ == "__main__":
    sys.exit(main())
