#!/usr/bin/env python3
"""Checks the task environment tony gives a task, then the network between
the tasks. Used as the command of every task in integration jobs (for
example chief + 2 workers + ps).

1. The variables (doc/task-environment.md): each one present, well formed
   and consistent with the others and with the task's own entry in
   CLUSTER_SPEC: the TonY, tony and YARN-DTF names always; TF_CONFIG,
   the PyTorch or the Horovod names by framework (--expect-framework, or
   whichever are present). Values moved to files (<NAME>_FILE) are read.
2. The network: the task binds its own port from CLUSTER_SPEC, then every
   task connects to every task's advertised address (its own included),
   retrying while peers start. Over each connection both sides exchange who
   they are, so a task checks that the address it dialled belongs to the
   task CLUSTER_SPEC names there and that the tasks agree on the application,
   the attempt and (PyTorch) the ranks. A task keeps listening until every
   task has connected to it, so nobody leaves before the others are done.

Prints one line per failed check ("FAILED [check] message"), a summary and
a machine-readable "CHECK_ENV_SUMMARY {json}" line (with the node the task
ran on: NM_HOST on YARN, else its host). Exit 0 if every check
passed, 1 otherwise, 2 on bad arguments.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time

FRAMEWORKS = ("tensorflow", "pytorch", "horovod", "standalone")
OUTSIDE_WORLD = ("ps", "tensorboard", "evaluator")
OUTSIDE_TF_CLUSTER = ("tensorboard", "evaluator")
PYTORCH_WORLD_VARS = ("RANK", "WORLD", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
PYTORCH_ALL_VARS = ("MASTER_ADDR", "MASTER_PORT", "INIT_METHOD", "WORLD_SIZE")
HOROVOD_VARS = ("HOROVOD_CONTROLLER", "HOROVOD_CPU_OPERATIONS", "HOROVOD_GLOO_RENDEZVOUS_ADDR",
                "HOROVOD_GLOO_RENDEZVOUS_PORT", "HOROVOD_HOSTNAME", "HOROVOD_RANK",
                "HOROVOD_SIZE", "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE",
                "HOROVOD_CROSS_RANK", "HOROVOD_CROSS_SIZE")


class Checks:
    """Records every check by name; a failure never stops the others."""

    def __init__(self, label):
        self.label = label
        self.passed = 0
        self.failures = []
        self.lock = threading.Lock()

    def check(self, name, ok, message=""):
        with self.lock:
            if ok:
                self.passed += 1
            else:
                self.failures.append((name, message))
                print(f"check_env {self.label}: FAILED [{name}] {message}", flush=True)
        return ok

    def fail(self, name, message):
        return self.check(name, False, message)


def split_address(address):
    """'host:port' or '[v6]:port' -> (host, port as int), or None."""
    if not isinstance(address, str) or ":" not in address:
        return None
    host, _, port = address.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        return None  # a bare IPv6 address without a port
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def env_type_name(task_type):
    return "".join(c.upper() if c.isalnum() and c.isascii() else "_" for c in task_type)


def world_of(cluster):
    order = {"chief": 0, "master": 1, "worker": 2}
    types = sorted((t for t in cluster if t not in OUTSIDE_WORLD),
                   key=lambda t: (order.get(t, 3), t))
    return [(t, i) for t in types for i in range(len(cluster[t]))]


class Environment:
    """The variables, reading <NAME>_FILE when the value was moved to a file."""

    def __init__(self, checks, env):
        self.checks = checks
        self.env = env

    def has(self, name):
        return name in self.env or f"{name}_FILE" in self.env

    def get(self, name, required=True):
        if name in self.env:
            return self.env[name]
        path = self.env.get(f"{name}_FILE")
        if path is not None:
            try:
                with open(path) as f:
                    return f.read()
            except OSError as e:
                self.checks.fail(f"{name}_FILE", f"cannot read {path}: {e}")
                return None
        if required:
            self.checks.fail(f"{name} set", f"{name} is not set")
        return None

    def get_int(self, name, required=True):
        value = self.get(name, required)
        if value is None:
            return None
        try:
            return int(value)
        except ValueError:
            self.checks.fail(f"{name} integer", f"{name}={value!r} is not an integer")
            return None

    def expect(self, name, want):
        value = self.get(name)
        if value is not None:
            self.checks.check(f"{name} value", value == want, f"{name}={value!r}, want {want!r}")
        return value

    def expect_absent(self, name, why):
        self.checks.check(f"{name} absent", not self.has(name),
                          f"{name}={self.get(name, False)!r} is set but {why}")


def parse_json(checks, env, name):
    text = env.get(name)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        checks.fail(f"{name} JSON", f"{name} is not JSON ({e}): {text[:200]!r}")
        return None


def check_cluster(checks, cluster):
    if not checks.check("CLUSTER_SPEC shape", isinstance(cluster, dict) and cluster and all(
            isinstance(k, str) and isinstance(v, list) and v for k, v in cluster.items()),
            f"want an object of non-empty lists of addresses, got {cluster!r}"):
        return False
    seen = {}
    ok = True
    for task_type, addresses in cluster.items():
        for i, address in enumerate(addresses):
            task = f"{task_type}:{i}"
            ok &= checks.check("CLUSTER_SPEC address", split_address(address) is not None,
                               f"{task} has address {address!r}, want host:port")
            ok &= checks.check("CLUSTER_SPEC unique", address not in seen,
                               f"{task} and {seen.get(address)} share the address {address!r}")
            seen.setdefault(address, task)
    return ok


def check_variables(checks, env, args):
    """Every static check. Returns what the network phase needs, or None."""
    task_type = env.get("JOB_NAME")
    index = env.get_int("TASK_INDEX")
    cluster = parse_json(checks, env, "CLUSTER_SPEC")
    if task_type is None or index is None or cluster is None or not check_cluster(checks, cluster):
        return None
    if not checks.check("own task in CLUSTER_SPEC",
                        task_type in cluster and 0 <= index < len(cluster[task_type]),
                        f"{task_type}:{index} is not in CLUSTER_SPEC {json.dumps(cluster)}"):
        return None
    me = f"{task_type}:{index}"
    address = cluster[task_type][index]
    host, port = split_address(address)

    if args.expect_types:
        shape = {t: len(a) for t, a in cluster.items()}
        checks.check("cluster shape", shape == args.expect_types,
                     f"CLUSTER_SPEC has {shape}, want {args.expect_types}")

    # TonY names.
    env.expect("TASK_NUM", str(len(cluster[task_type])))
    world = world_of(cluster)
    rank = world.index((task_type, index)) if (task_type, index) in world else None
    env.expect("IS_CHIEF", "true" if rank == 0 else "false")

    # tony names.
    env.expect("TONY_TASK_ID", me)
    env.expect("TONY_TASK_HOST", host)
    env.expect("TONY_TASK_PORT", str(port))
    # On YARN the task's address names the node it runs on (NM_HOST, set by
    # the NodeManager). Loopback hides a wrong host from the network checks
    # on a one-machine cluster, whose every 127.x address reaches every task.
    node = env.env.get("NM_HOST")
    if node is not None:
        checks.check("own address on its node", host == node,
                     f"CLUSTER_SPEC gives {me} the host {host!r}, but it runs on {node!r}")
    app_id = env.get("TONY_APP_ID")
    if app_id is not None:
        checks.check("TONY_APP_ID value", app_id.strip() != "", "TONY_APP_ID is empty")
    attempt = env.get_int("TONY_ATTEMPT")
    if attempt is not None:
        checks.check("TONY_ATTEMPT value", attempt >= 1, f"TONY_ATTEMPT={attempt}, want >= 1")
        if args.expect_attempt is not None:
            checks.check("TONY_ATTEMPT expected", attempt == args.expect_attempt,
                         f"TONY_ATTEMPT={attempt}, want {args.expect_attempt}")

    # The TensorBoard token is for the task that serves TensorBoard only.
    if task_type != "tensorboard" and not env.has("TB_PORT"):
        env.expect_absent("TONY_TENSORBOARD_TOKEN",
                          "only the task that serves TensorBoard gets its token")
        env.expect_absent("TONY_TENSORBOARD_GUARD",
                          "only the task that serves TensorBoard gets its guard")

    # YARN-DTF names.
    env.expect("DTF_TASK_JOB_NAME", task_type)
    env.expect("DTF_TASK_INDEX", str(index))
    for t, addresses in cluster.items():
        env.expect(f"DTF_{env_type_name(t)}_HOSTS", ",".join(addresses))
    known = {f"DTF_{env_type_name(t)}_HOSTS" for t in cluster}
    for name in env.env:
        base = name[:-5] if name.endswith("_FILE") else name
        if base.startswith("DTF_") and base.endswith("_HOSTS"):
            checks.check("DTF hosts for known types only", base in known,
                         f"{base} names a task type that is not in CLUSTER_SPEC")

    framework = args.expect_framework
    tensorflow = framework == "tensorflow" or (framework is None and env.has("TF_CONFIG"))
    pytorch = framework == "pytorch" or (framework is None and env.has("MASTER_ADDR"))
    horovod = framework == "horovod" or (framework is None and env.has("HOROVOD_RANK"))

    # TensorFlow.
    if tensorflow and task_type != "tensorboard":
        tf_config = parse_json(checks, env, "TF_CONFIG")
        if tf_config is not None:
            want_cluster = {t: a for t, a in cluster.items() if t not in OUTSIDE_TF_CLUSTER}
            checks.check("TF_CONFIG cluster", tf_config.get("cluster") == want_cluster,
                         f"TF_CONFIG cluster {tf_config.get('cluster')!r}, want {want_cluster!r}")
            want_task = {"type": task_type, "index": index}
            checks.check("TF_CONFIG task", tf_config.get("task") == want_task,
                         f"TF_CONFIG task {tf_config.get('task')!r}, want {want_task!r}")
    elif framework is not None:
        env.expect_absent("TF_CONFIG", f"the framework is {framework}"
                          if framework != "tensorflow" else "tensorboard tasks get none")

    # PyTorch.
    if pytorch and world:
        master = cluster[world[0][0]][world[0][1]]
        master_host, master_port = split_address(master)
        env.expect("MASTER_ADDR", master_host)
        env.expect("MASTER_PORT", str(master_port))
        env.expect("INIT_METHOD", f"tcp://{master}")
        env.expect("WORLD_SIZE", str(len(world)))
        if rank is not None:
            hosts = [split_address(cluster[t][i])[0] for t, i in world]
            env.expect("RANK", str(rank))
            env.expect("WORLD", str(len(world)))
            env.expect("LOCAL_RANK", str(hosts[:rank].count(host)))
            env.expect("LOCAL_WORLD_SIZE", str(hosts.count(host)))
        else:
            for name in PYTORCH_WORLD_VARS:
                env.expect_absent(name, f"{me} is not in the training world")
    elif framework is not None and framework != "pytorch":
        for name in PYTORCH_ALL_VARS + PYTORCH_WORLD_VARS:
            env.expect_absent(name, f"the framework is {framework}")

    # Horovod: the slot assignment is Horovod's own; check what is local.
    if horovod and rank is not None:
        env.expect("HOROVOD_CONTROLLER", "gloo")
        env.expect("HOROVOD_CPU_OPERATIONS", "gloo")
        env.expect("HOROVOD_HOSTNAME", host)
        env.expect("HOROVOD_SIZE", str(len(world)))
        h_rank = env.get_int("HOROVOD_RANK")
        if h_rank is not None:
            checks.check("HOROVOD_RANK range", 0 <= h_rank < len(world),
                         f"HOROVOD_RANK={h_rank}, want 0..{len(world) - 1}")
        hosts = [split_address(cluster[t][i])[0] for t, i in world]
        env.expect("HOROVOD_LOCAL_SIZE", str(hosts.count(host)))
        for name in ("HOROVOD_GLOO_RENDEZVOUS_ADDR", "HOROVOD_GLOO_RENDEZVOUS_PORT",
                     "HOROVOD_LOCAL_RANK", "HOROVOD_CROSS_RANK", "HOROVOD_CROSS_SIZE"):
            env.get(name)
    elif framework is not None and (framework != "horovod" or rank is None):
        for name in HOROVOD_VARS:
            env.expect_absent(name, f"the framework is {framework}" if framework != "horovod"
                              else f"{me} is not in the training world")

    # The rank the task would really use, for the cross-task checks.
    env_rank = env.get_int("RANK", required=False) if env.has("RANK") else None
    master = None
    if env.has("MASTER_ADDR") and env.has("MASTER_PORT"):
        master = f"{env.get('MASTER_ADDR')}:{env.get('MASTER_PORT')}"
    return {
        "task": me, "type": task_type, "index": index, "host": host, "port": port,
        "node": node if node is not None else host,
        "cluster": cluster, "rank": env_rank, "master": master, "app_id": app_id,
        "attempt": attempt,
    }


class Network:
    """Listens on the task's own port and dials every task's address."""

    def __init__(self, checks, me, timeout):
        self.checks = checks
        self.me = me
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.hello = json.dumps({"task": me["task"], "rank": me["rank"], "app_id": me["app_id"],
                                 "attempt": me["attempt"]}).encode() + b"\n"
        self.tasks = {f"{t}:{i}": a for t, addrs in me["cluster"].items()
                      for i, a in enumerate(addrs)}
        self.inbound = {}   # task -> its hello, for every task that dialled us
        self.outbound = {}  # task -> its reply, for every task we reached
        self.lock = threading.Condition()
        self.listener = None
        self.dialing_done = False

    def bind(self):
        family = socket.AF_INET6 if ":" in self.me["host"] else socket.AF_INET
        wildcard = "::" if family == socket.AF_INET6 else "0.0.0.0"
        last = None
        # tony releases the port just before starting the command (allow a
        # moment in case the release and our start raced), or holds it until
        # the command ends when TF_GRPC_REUSE_PORT is true: then the task's
        # server binds beside it with SO_REUSEPORT, as TensorFlow's does
        # (doc/task-environment.md "The task's port").
        reuse_port = os.environ.get("TF_GRPC_REUSE_PORT", "").lower() in ("true", "1")
        for _ in range(25):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            try:
                s.bind((wildcard, self.me["port"]))
                s.listen(64)
                s.settimeout(0.2)
                self.listener = s
                return True
            except OSError as e:
                s.close()
                last = e
                time.sleep(0.2)
        return self.checks.fail("bind own port",
                                f"cannot bind port {self.me['port']} of {self.me['task']}: {last}")

    def serve(self):
        while time.monotonic() < self.deadline + 5:
            with self.lock:
                if set(self.inbound) >= set(self.tasks) and self.dialing_done:
                    return
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn):
        with conn:
            try:
                conn.settimeout(10)
                peer = json.loads(read_line(conn))
                conn.sendall(self.hello)
            except (OSError, ValueError) as e:
                self.checks.fail("peer hello", f"a connection to {self.me['task']} sent no "
                                 f"valid hello: {e}")
                return
        with self.lock:
            self.inbound[peer.get("task")] = peer
            self.lock.notify_all()

    def dial(self, task, address):
        host, port = split_address(address)
        last = None
        while time.monotonic() < self.deadline:
            try:
                with socket.create_connection((host, port), timeout=2) as c:
                    c.settimeout(10)
                    c.sendall(self.hello)
                    reply = json.loads(read_line(c))
                with self.lock:
                    self.outbound[task] = reply
                return
            except (OSError, ValueError) as e:
                last = e
                time.sleep(0.2)
        self.checks.fail("reach peer", f"{self.me['task']} could not reach {task} at {address} "
                         f"within {self.timeout:g}s: {last}")

    def run(self):
        if not self.bind():
            return
        server = threading.Thread(target=self.serve, daemon=True)
        server.start()
        dialers = [threading.Thread(target=self.dial, args=(t, a), daemon=True)
                   for t, a in self.tasks.items()]
        for d in dialers:
            d.start()
        for d in dialers:
            d.join()
        with self.lock:
            self.dialing_done = True
        server.join()
        self.listener.close()
        self.verify()

    def verify(self):
        c, me = self.checks, self.me
        for task, reply in sorted(self.outbound.items()):
            c.check("peer identity", reply.get("task") == task,
                    f"the address of {task} ({self.tasks[task]}) is answered by {reply.get('task')!r}")
        missing = sorted(set(self.tasks) - set(self.inbound))
        c.check("peers connected in", not missing,
                f"never heard from {', '.join(missing)} within {self.timeout:g}s")
        unknown = sorted(str(t) for t in set(self.inbound) - set(self.tasks))
        c.check("peers known", not unknown, f"connections from unknown tasks {unknown}")
        peers = {**self.inbound, **self.outbound}
        for task, peer in sorted(peers.items(), key=lambda kv: str(kv[0])):
            c.check("same application", peer.get("app_id") == me["app_id"],
                    f"{task} runs in application {peer.get('app_id')!r}, I in {me['app_id']!r}")
            c.check("same attempt", peer.get("attempt") == me["attempt"],
                    f"{task} runs attempt {peer.get('attempt')!r}, I {me['attempt']!r}")
        ranks = {}
        for task, peer in peers.items():
            if peer.get("rank") is not None:
                ranks.setdefault(peer["rank"], set()).add(task)
        for r, owners in sorted(ranks.items(), key=lambda kv: str(kv[0])):
            c.check("ranks unique", len(owners) == 1, f"RANK {r} is held by {sorted(owners)}")
        if me["master"] is not None:
            at_master = [t for t, a in self.tasks.items() if a == me["master"]]
            if c.check("MASTER is a task", len(at_master) == 1,
                       f"MASTER_ADDR:MASTER_PORT {me['master']} is no task's address"):
                reply = self.outbound.get(at_master[0])
                if reply is not None:
                    c.check("MASTER is rank 0", reply.get("rank") == 0,
                            f"{at_master[0]} at MASTER_ADDR:MASTER_PORT {me['master']} "
                            f"has RANK {reply.get('rank')!r}, want 0")


def read_line(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            raise ValueError(f"connection closed after {len(data)} bytes")
        data += chunk
        if len(data) > 65536:
            raise ValueError("hello longer than 64 KiB")
    return data.decode()


def parse_types(text):
    shape = {}
    for part in text.split(","):
        name, _, count = part.partition(":")
        if not name or not count.isdigit():
            raise argparse.ArgumentTypeError(f"{part!r}: want type:count, e.g. worker:2")
        shape[name] = int(count)
    return shape


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--expect-framework", choices=FRAMEWORKS,
                   help="require this framework's variables and the absence of the others'")
    p.add_argument("--expect-types", type=parse_types, metavar="TYPE:N,...",
                   help="the cluster's shape, e.g. chief:1,worker:2,ps:1")
    p.add_argument("--expect-attempt", type=int, help="the value TONY_ATTEMPT must have")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to reach every peer and to be reached by them")
    p.add_argument("--no-network", action="store_true", help="check the variables only")
    args = p.parse_args(argv)

    started = time.monotonic()
    label = f"{os.environ.get('JOB_NAME', '?')}:{os.environ.get('TASK_INDEX', '?')}"
    checks = Checks(label)
    env = Environment(checks, dict(os.environ))
    me = check_variables(checks, env, args)
    network = None
    if me is not None and not args.no_network:
        network = Network(checks, me, args.timeout)
        network.run()

    ok = not checks.failures
    summary = {
        "task": label, "ok": ok, "passed": checks.passed,
        "node": me["node"] if me else None, "rank": me["rank"] if me else None,
        "failed": [f"[{n}] {m}" for n, m in checks.failures],
        "reached": sorted(network.outbound) if network else [],
        "heard_from": sorted(str(t) for t in network.inbound) if network else [],
        "seconds": round(time.monotonic() - started, 2),
    }
    if network:
        detail = (f"reached {len(network.outbound)}/{len(network.tasks)} tasks, "
                  f"heard from {len(network.inbound)}/{len(network.tasks)}")
    else:
        detail = "network not checked"
    verdict = "OK" if ok else f"FAILED {len(checks.failures)} checks"
    print(f"check_env {label}: {verdict}: {checks.passed} checks passed, {detail}, "
          f"{summary['seconds']}s", flush=True)
    print("CHECK_ENV_SUMMARY " + json.dumps(summary, sort_keys=True), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
