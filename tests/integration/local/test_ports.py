"""The task's port until the task binds it (doc/task-environment.md "The
task's port"), with real tony-am and tony-executor processes: a TensorFlow
role's executor holds its port with SO_REUSEPORT while the command runs, so
the task's own server binds beside it (as TensorFlow's does with
TF_GRPC_REUSE_PORT=true) and gets its connections, while a bind without
SO_REUSEPORT, or by another user, is refused; a job that sets
TF_GRPC_REUSE_PORT=false gets its port released before the command starts.
A PyTorch task's executor holds its port with SO_REUSEADDR, as c10d's
TCPStore binds: the store binds beside it, a bind without SO_REUSEADDR is
refused, and once the store listens nobody else binds the port."""

import json

import tonyjob

# The task's probe of its own port: prints one JSON line.
PROBE = r'''
import json, os, socket, subprocess, sys

port = int(os.environ["TONY_TASK_PORT"])
seen = {"TF_GRPC_REUSE_PORT": os.environ.get("TF_GRPC_REUSE_PORT")}

def bind(reuseport, reuseaddr=True):
    s = socket.socket()
    if reuseaddr:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuseport:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        s.bind(("0.0.0.0", port))
        s.listen(8)
        return s
    except OSError as e:
        s.close()
        return e.strerror

torch_like = os.environ.get("PROBE_AS") == "tcpstore"
plain = bind(False, reuseaddr=not torch_like)
seen["plain"] = plain if isinstance(plain, str) else "bound"
if isinstance(plain, str):
    server = bind(not torch_like)
    seen["beside"] = server if isinstance(server, str) else "bound"
    # Every connection reaches the task's server, none the executor's socket.
    answered = 0
    for _ in range(10):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        a, _ = server.accept()
        a.sendall(b"x")
        answered += c.recv(1) == b"x"
        a.close()
        c.close()
    seen["answered"] = answered
    # Another user, even with SO_REUSEPORT, cannot bind the port.
    option = "SO_REUSEADDR" if torch_like else "SO_REUSEPORT"
    other = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
         "import socket, sys; s = socket.socket(); "
         f"s.setsockopt(socket.SOL_SOCKET, socket.{option}, 1); "
         "s.bind(('0.0.0.0', int(sys.argv[1])))", str(port)],
        capture_output=True, text=True)
    seen["other_user"] = "refused" if "Address already in use" in other.stderr else \
        f"rc {other.returncode}: {other.stderr[-300:]}"
print("PORT " + json.dumps(seen), flush=True)
'''


def port_job(sandbox, env="", framework="tensorflow"):
    sandbox.write_src({"probe.py": PROBE})
    return sandbox.job(f'''name = "ports"
framework = "{framework}"

[code]
src_dir = "src"
command = "python3 probe.py"

[env]
{env}

[tasks.worker]
instances = 1
memory = "256m"
''')


def probe_of(out):
    for line in out.task_stdout("worker:0").splitlines():
        if line.startswith("PORT "):
            return json.loads(line[len("PORT "):])
    raise AssertionError("the task printed no PORT line:\n" + out.describe())


def test_a_tensorflow_roles_port_is_held_while_its_server_binds_beside_it(sandbox):
    out = sandbox.submit(port_job(sandbox), timeout=120)
    assert out.rc == 0, out.describe()
    seen = probe_of(out)
    assert seen == {"TF_GRPC_REUSE_PORT": "true", "plain": "Address already in use",
                    "beside": "bound", "answered": 10, "other_user": "refused"}, seen
    assert tonyjob.wait_job_gone(out.job_dir, 10) == []


def test_a_job_that_turns_reuse_off_gets_its_port_released_before_the_command(sandbox):
    out = sandbox.submit(port_job(sandbox, 'TF_GRPC_REUSE_PORT = "false"'), timeout=120)
    assert out.rc == 0, out.describe()
    assert probe_of(out) == {"TF_GRPC_REUSE_PORT": "false", "plain": "bound"}
    assert tonyjob.wait_job_gone(out.job_dir, 10) == []


def test_a_pytorch_tasks_port_is_held_while_its_store_binds_beside_it(sandbox):
    # The probe binds as c10d's TCPStore does: SO_REUSEADDR, no SO_REUSEPORT.
    out = sandbox.submit(port_job(sandbox, 'PROBE_AS = "tcpstore"', "pytorch"),
                         timeout=120)
    assert out.rc == 0, out.describe()
    seen = probe_of(out)
    assert seen == {"TF_GRPC_REUSE_PORT": None, "plain": "Address already in use",
                    "beside": "bound", "answered": 10, "other_user": "refused"}, seen
    assert tonyjob.wait_job_gone(out.job_dir, 10) == []
