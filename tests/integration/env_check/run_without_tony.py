#!/usr/bin/env python3
"""Tests check_env.py without tony: starts a chief, two workers and a ps as
local processes with task environments built here by hand (after
doc/task-environment.md) on free ports, and checks that they all pass; then
breaks the environment or the cluster on purpose and checks that the right
tasks fail with the right check named.

    python3 tests/integration/env_check/run_without_tony.py [-k NAME]

Ends with "N passed, N failed"; exit 0 only if every case passed.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK_ENV = os.path.join(HERE, "check_env.py")
SHAPE = {"chief": 1, "worker": 2, "ps": 1}
SHAPE_ARG = "chief:1,worker:2,ps:1"
APP_ID = "application_1700000000000_0042"


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def make_cluster():
    ports = iter(free_ports(sum(SHAPE.values())))
    return {t: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for t, n in SHAPE.items()}


def task_env(framework, cluster, task_type, index, attempt=1):
    """The environment of one task, written out plainly for this shape: the
    world (ranks) is chief, worker:0, worker:1; ps is outside it."""
    world = [("chief", 0), ("worker", 0), ("worker", 1)]
    address = cluster[task_type][index]
    host, port = address.rsplit(":", 1)
    env = {
        "JOB_NAME": task_type,
        "TASK_INDEX": str(index),
        "TASK_NUM": str(len(cluster[task_type])),
        "IS_CHIEF": "true" if (task_type, index) == ("chief", 0) else "false",
        "CLUSTER_SPEC": json.dumps(cluster),
        "TONY_APP_ID": APP_ID,
        "TONY_ATTEMPT": str(attempt),
        "TONY_TASK_ID": f"{task_type}:{index}",
        "TONY_TASK_HOST": host,
        "TONY_TASK_PORT": port,
        "DTF_TASK_JOB_NAME": task_type,
        "DTF_TASK_INDEX": str(index),
        "DTF_CHIEF_HOSTS": ",".join(cluster["chief"]),
        "DTF_WORKER_HOSTS": ",".join(cluster["worker"]),
        "DTF_PS_HOSTS": ",".join(cluster["ps"]),
    }
    if framework == "tensorflow":
        env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                       "task": {"type": task_type, "index": index}})
    if framework == "pytorch":
        master_host, master_port = cluster["chief"][0].rsplit(":", 1)
        env.update({"MASTER_ADDR": master_host, "MASTER_PORT": master_port,
                    "INIT_METHOD": f"tcp://{cluster['chief'][0]}", "WORLD_SIZE": "3"})
        if (task_type, index) in world:
            rank = world.index((task_type, index))
            # Every task is on 127.0.0.1: the local rank is the rank.
            env.update({"RANK": str(rank), "WORLD": "3", "LOCAL_RANK": str(rank),
                        "LOCAL_WORLD_SIZE": "3"})
    return env


def base_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DTF_", "TONY_", "TF_CONFIG", "HOROVOD_"))
           and k not in ("JOB_NAME", "TASK_INDEX", "TASK_NUM", "IS_CHIEF", "CLUSTER_SPEC",
                         "RANK", "WORLD", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                         "MASTER_ADDR", "MASTER_PORT", "INIT_METHOD")}
    return env


def run_tasks(envs, extra_args, timeout=60):
    """Starts check_env.py once per environment; returns {task: (exit, output)}."""
    procs = {}
    for name, env in envs.items():
        full = base_env()
        full.update(env)
        procs[name] = subprocess.Popen([sys.executable, CHECK_ENV] + extra_args, env=full,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    results = {}
    deadline = time.monotonic() + timeout
    for name, p in procs.items():
        try:
            out, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out += b"\n(run_without_tony: killed after the timeout)"
        results[name] = (p.returncode, out.decode(errors="replace"))
    return results


def all_envs(framework, cluster, attempt=1):
    return {f"{t}:{i}": task_env(framework, cluster, t, i, attempt)
            for t, addrs in cluster.items() for i in range(len(addrs))}


class CaseFailed(Exception):
    pass


def expect(results, want_ok, want_check=None):
    """want_ok: the tasks that must exit 0; the others must exit 1 and, if
    want_check is given, name that check."""
    problems = []
    for name, (code, out) in sorted(results.items()):
        if name in want_ok and code != 0:
            problems.append(f"{name} exited {code}, want 0:\n{out}")
        elif name not in want_ok:
            if code != 1:
                problems.append(f"{name} exited {code}, want 1:\n{out}")
            elif want_check and f"FAILED [{want_check}]" not in out:
                problems.append(f"{name} failed without naming [{want_check}]:\n{out}")
        if code in (0, 1) and "CHECK_ENV_SUMMARY " not in out:
            problems.append(f"{name} printed no CHECK_ENV_SUMMARY line:\n{out}")
    if problems:
        raise CaseFailed("\n".join(problems))


def everyone(cluster):
    return {f"{t}:{i}" for t, addrs in cluster.items() for i in range(len(addrs))}


# --- the cases -------------------------------------------------------------


def case_tensorflow_all_pass():
    cluster = make_cluster()
    results = run_tasks(all_envs("tensorflow", cluster),
                        ["--expect-framework", "tensorflow", "--expect-types", SHAPE_ARG,
                         "--expect-attempt", "1"])
    expect(results, everyone(cluster))
    for name, (_, out) in results.items():
        summary = json.loads(out.split("CHECK_ENV_SUMMARY ", 1)[1].splitlines()[0])
        if summary["reached"] != sorted(everyone(cluster)) or \
                summary["heard_from"] != sorted(everyone(cluster)):
            raise CaseFailed(f"{name} did not meet every task: {summary}")


def case_pytorch_all_pass():
    cluster = make_cluster()
    expect(run_tasks(all_envs("pytorch", cluster),
                     ["--expect-framework", "pytorch", "--expect-types", SHAPE_ARG]),
           everyone(cluster))


def case_standalone_all_pass():
    cluster = make_cluster()
    expect(run_tasks(all_envs("standalone", cluster), ["--expect-framework", "standalone"]),
           everyone(cluster))


def case_values_from_files():
    """Large values move to <NAME>_FILE; check_env reads them."""
    import tempfile
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    with tempfile.TemporaryDirectory() as d:
        for name, env in envs.items():
            path = os.path.join(d, name.replace(":", "-") + ".TF_CONFIG")
            with open(path, "w") as f:
                f.write(env.pop("TF_CONFIG"))
            env["TF_CONFIG_FILE"] = path
        expect(run_tasks(envs, ["--expect-framework", "tensorflow"]), everyone(cluster))


def case_wrong_tf_config_task():
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    envs["worker:1"]["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                                "task": {"type": "worker", "index": 0}})
    expect(run_tasks(envs, ["--expect-framework", "tensorflow"]),
           everyone(cluster) - {"worker:1"}, "TF_CONFIG task")


def case_wrong_rank():
    cluster = make_cluster()
    envs = all_envs("pytorch", cluster)
    envs["worker:1"]["RANK"] = "1"  # worker:0's rank
    results = run_tasks(envs, ["--expect-framework", "pytorch"])
    expect({"worker:1": results["worker:1"]}, set(), "RANK value")
    # Through the hellos everyone sees rank 1 twice.
    expect(results, set(), None)
    for name, (_, out) in results.items():
        if name != "worker:1" and "FAILED [ranks unique]" not in out:
            raise CaseFailed(f"{name} did not notice the duplicate rank:\n{out}")


def case_wrong_dtf_hosts():
    cluster = make_cluster()
    envs = all_envs("standalone", cluster)
    envs["ps:0"]["DTF_WORKER_HOSTS"] = cluster["worker"][0]
    expect(run_tasks(envs, ["--no-network"]), everyone(cluster) - {"ps:0"},
           "DTF_WORKER_HOSTS value")


def case_wrong_is_chief():
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    envs["worker:0"]["IS_CHIEF"] = "true"
    expect(run_tasks(envs, ["--no-network"]), everyone(cluster) - {"worker:0"},
           "IS_CHIEF value")


def case_tf_config_in_pytorch_job():
    cluster = make_cluster()
    envs = all_envs("pytorch", cluster)
    envs["chief:0"]["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                               "task": {"type": "chief", "index": 0}})
    expect(run_tasks(envs, ["--expect-framework", "pytorch", "--no-network"]),
           everyone(cluster) - {"chief:0"}, "TF_CONFIG absent")


def case_wrong_attempt():
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    envs["ps:0"]["TONY_ATTEMPT"] = "2"
    results = run_tasks(envs, ["--expect-attempt", "1"])
    expect({"ps:0": results["ps:0"]}, set(), "TONY_ATTEMPT expected")
    for name, (code, out) in results.items():  # the others see it in the hellos
        if name != "ps:0" and (code != 1 or "FAILED [same attempt]" not in out):
            raise CaseFailed(f"{name} did not notice ps:0's attempt:\n{out}")


def case_missing_peer():
    """The ps never starts: the others cannot reach it, nor hear from it."""
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    del envs["ps:0"]
    started = time.monotonic()
    results = run_tasks(envs, ["--timeout", "3"])
    expect(results, set(), "reach peer")
    for name, (_, out) in results.items():
        if "FAILED [peers connected in] never heard from ps:0" not in out:
            raise CaseFailed(f"{name} did not report ps:0 missing:\n{out}")
    if time.monotonic() - started > 20:
        raise CaseFailed(f"the tasks took {time.monotonic() - started:.0f}s to give up, "
                         "want about 3s + 5s")


def case_wrong_address():
    """worker:1 believes it is worker:0: it cannot bind worker:0's port (the
    real worker:0 holds it) and nobody answers at worker:1's address."""
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    envs["worker:1"] = task_env("tensorflow", cluster, "worker", 0)
    results = run_tasks(envs, ["--timeout", "3"])
    if results["worker:1"][0] != 1 and results["worker:0"][0] != 1:
        raise CaseFailed("two tasks claiming worker:0 both passed:\n"
                         + results["worker:0"][1] + results["worker:1"][1])
    for name in ("chief:0", "ps:0"):
        code, out = results[name]
        if code != 1 or "FAILED [reach peer]" not in out or "worker:1" not in out:
            raise CaseFailed(f"{name} did not report worker:1 unreachable:\n{out}")


def case_missing_variable():
    cluster = make_cluster()
    envs = all_envs("tensorflow", cluster)
    del envs["chief:0"]["TONY_TASK_PORT"]
    expect(run_tasks(envs, ["--no-network"]), everyone(cluster) - {"chief:0"},
           "TONY_TASK_PORT set")


def case_documented_example():
    """worker:1 of the worked example in doc/task-environment.md, verbatim
    (its hosts do not exist here, so the variables only)."""
    env = {
        "CLUSTER_SPEC": '{"chief":["node1:41000"],"ps":["node3:41003"],'
                        '"worker":["node1:41001","node2:41002"]}',
        "DTF_CHIEF_HOSTS": "node1:41000", "DTF_INPUT_PATH": "hdfs:///data/in",
        "DTF_PS_HOSTS": "node3:41003", "DTF_TASK_INDEX": "1", "DTF_TASK_JOB_NAME": "worker",
        "DTF_WORKER_HOSTS": "node1:41001,node2:41002", "INIT_METHOD": "tcp://node1:41000",
        "IS_CHIEF": "false", "JOB_NAME": "worker", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
        "MASTER_ADDR": "node1", "MASTER_PORT": "41000", "RANK": "2", "TASK_INDEX": "1",
        "TASK_NUM": "2", "TONY_APP_ID": APP_ID, "TONY_ATTEMPT": "1",
        "TONY_TASK_HOST": "node2", "TONY_TASK_ID": "worker:1", "TONY_TASK_PORT": "41002",
        "WORLD": "3", "WORLD_SIZE": "3",
    }
    expect(run_tasks({"worker:1": env}, ["--expect-framework", "pytorch", "--no-network",
                                         "--expect-types", SHAPE_ARG]), {"worker:1"})
    env["LOCAL_RANK"] = "1"  # worker:1 is alone on node2
    expect(run_tasks({"worker:1": env}, ["--no-network"]), set(), "LOCAL_RANK value")


CASES = [v for k, v in sorted(globals().items()) if k.startswith("case_")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-k", help="run only the cases whose name contains this")
    args = p.parse_args()
    passed = failed = 0
    for case in CASES:
        name = case.__name__[len("case_"):]
        if args.k and args.k not in name:
            continue
        started = time.monotonic()
        try:
            case()
            passed += 1
            print(f"PASS {name} ({time.monotonic() - started:.1f}s)", flush=True)
        except CaseFailed as e:
            failed += 1
            print(f"FAIL {name} ({time.monotonic() - started:.1f}s)\n{e}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
