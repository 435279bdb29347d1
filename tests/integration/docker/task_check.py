"""A task's command in the docker tier's jobs: checks that it runs in the
test image's container (the image's marker, /.dockerenv, the host's marker
absent) and what its framework gives it, then talks to another task of the
job over the host's network at the address the cluster spec names. Prints
one line per check; any failure exits 3 with the reason."""

import json
import os
import socket
import sys
import time


def fail(why):
    print(f"FAILED: {why}", flush=True)
    sys.exit(3)


def check(ok, why):
    if not ok:
        fail(why)


def serve_once(port, deadline):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Beside tony's hold of the port, as TensorFlow's server binds it
    # (doc/task-environment.md "The task's port").
    if os.environ.get("TF_GRPC_REUSE_PORT", "").lower() in ("true", "1"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("", port))
    s.listen(1)
    s.settimeout(max(deadline - time.monotonic(), 1))
    conn, _ = s.accept()
    data = conn.recv(100).decode()
    conn.sendall(b"ack " + data.encode())
    conn.close()
    s.close()
    return data


def call(host, port, message, deadline):
    while True:
        try:
            with socket.create_connection((host, port), timeout=5) as c:
                c.sendall(message.encode())
                return c.recv(100).decode()
        except OSError as e:
            if time.monotonic() > deadline:
                fail(f"cannot reach {host}:{port}: {e}")
            time.sleep(0.2)


def main():
    deadline = time.monotonic() + 60
    check(os.path.exists("/.dockerenv"), "no /.dockerenv: not in a Docker container")
    with open("/etc/tony-test-image") as f:
        print("image:", f.read().strip(), flush=True)
    check(not os.path.exists(os.environ["HOST_MARKER"]),
          f"the host's {os.environ['HOST_MARKER']} is visible: not in the image")
    check(sys.executable.startswith("/usr/bin/python3"), f"python is {sys.executable}")
    with open("/etc/os-release") as f:
        print("os:", f.readline().strip(), flush=True)

    # [data] and [docker] mounts.
    with open(os.path.join(os.environ["DTF_INPUT_PATH"], "input.txt")) as f:
        print("input:", f.read().strip(), flush=True)
    with open("/mnt/extra/extra.txt") as f:
        print("extra:", f.read().strip(), flush=True)
    try:
        open("/mnt/extra/written", "w").close()
        fail("/mnt/extra was mounted :ro but is writable")
    except OSError:
        print("extra: read-only", flush=True)
    me = os.environ.get("DTF_TASK_JOB_NAME", "?") + ":" + os.environ.get("DTF_TASK_INDEX", "?")
    with open(os.path.join(os.environ["DTF_OUTPUT_PATH"], me.replace(":", "-")), "w") as f:
        f.write("written in the container\n")

    framework = sys.argv[1]
    if framework == "tensorflow":
        tf = json.loads(os.environ["TF_CONFIG"])
        workers = tf["cluster"]["worker"]
        index = tf["task"]["index"]
        check(tf["task"]["type"] == "worker", f"TF_CONFIG task {tf['task']}")
        check(len(workers) == 2, f"TF_CONFIG workers {workers}")
        print(f"TF_CONFIG: worker {index} of {workers}", flush=True)
        host, port = workers[0].rsplit(":", 1)
        if index == 0:
            got = serve_once(int(port), deadline)
            print(f"worker 0 heard: {got}", flush=True)
        else:
            print(f"worker 1 got: {call(host, int(port), 'hello from worker 1', deadline)}",
                  flush=True)
    elif framework == "pytorch":
        rank = int(os.environ["RANK"])
        world = int(os.environ["WORLD_SIZE"])
        addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        check(world == 2, f"WORLD_SIZE {world}")
        print(f"torch: rank {rank} of {world}, master {addr}:{port}", flush=True)
        if rank == 0:
            print(f"rank 0 heard: {serve_once(port, deadline)}", flush=True)
        else:
            print(f"rank 1 got: {call(addr, port, 'hello from rank 1', deadline)}", flush=True)
    print("all checks passed", flush=True)


main()
