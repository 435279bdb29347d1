"""Hostile peers for a running tony-am's ports (doc/architecture.md, "The
gate"): crafted CAF BASP headers that claim a huge payload, random bytes in
many small connections, many silent connections on the registry port, and a
slow-loris client on the tracking page. Each attack runs in threads of this
process against real sockets; `Siege` runs them together until told to stop.
Also what the tests read of the AM: its memory (/proc/<pid>/status) and
where it listens (its log)."""

import random
import re
import resource
import socket
import struct
import threading

# CAF 0.17's BASP header: operation, two padding bytes, flags, payload length
# (u32), operation data (u64), source and destination actor (u64 each), all
# big-endian: 32 bytes. A client handshake is what a CAF server expects first;
# CAF's own listener allocates and zero-fills the claimed payload at once.
CLIENT_HANDSHAKE = 0x01
CLAIM = 512 << 20


def basp_header(claim=CLAIM, operation=CLIENT_HANDSHAKE):
    return struct.pack(">BBBBIQQQ", operation, 0, 0, 0, claim, 0, 0, 0)


def memory_kb(pid):
    """{'VmRSS': kB, 'VmHWM': kB} of a live process."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0])
    return out


def raise_fd_limit(want=8192):
    """Lifts this process's open-file limit toward `want` (the siege holds
    over 2,000 sockets); returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def sanitized(pid):
    """Whether the process runs with AddressSanitizer (its allocator and
    shadow memory add some 100 MiB of RSS before tony does anything)."""
    with open(f"/proc/{pid}/maps") as f:
        return "libasan" in f.read()


def peak_bound_kb(pid, plain=200 * 1024, sanitizer_extra=200 * 1024):
    """The AM's VmHWM bound: 200 MiB, more in a sanitizer build."""
    return plain + (sanitizer_extra if sanitized(pid) else 0)


def connect(host, port, timeout=5):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def registry_address(am_log_text):
    """(host, port) of the registry from the AM's log line
    'tony-am: <app> registry at host:port'."""
    m = re.search(r"registry at (\S+):(\d+)", am_log_text)
    return (m.group(1), int(m.group(2))) if m else None


class Siege:
    """Every attack at once, on the registry at `registry` (host, port) and
    the tracking page at `web` (host, port); counts what each did. start()
    returns once every attack has made its first pass (the crafted headers
    sent, the random bytes sent, the silent connections open, the slow-loris
    connections dribbling); the silent and slow ones keep at it until
    stop()."""

    def __init__(self, registry, web, crafted=64, random_bytes=1 << 20, chunk=4096,
                 silent=2000, loris=200, loris_step=0.5):
        limit = raise_fd_limit()
        assert limit >= silent + crafted + loris + 256, \
            f"the open-file limit ({limit}) is too low for the siege; raise ulimit -n"
        self.registry = registry
        self.web = web
        self.crafted = crafted
        self.random_bytes = random_bytes
        self.chunk = chunk
        self.silent = silent
        self.loris = loris
        self.loris_step = loris_step
        self.stopping = threading.Event()
        self.counts = {"crafted": 0, "random": 0, "silent": 0, "silent_closed": 0,
                       "loris": 0, "loris_closed_by_server": 0, "errors": 0}
        self.lock = threading.Lock()
        self.ready = {}
        self.threads = []
        self.held = []

    def _count(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def _crafted_headers(self):
        header = basp_header()
        socks = []
        for _ in range(self.crafted):
            try:
                s = connect(*self.registry)
                s.sendall(header)
                socks.append(s)
                self._count("crafted")
            except OSError:
                self._count("errors")
        self.ready["crafted"].set()
        self.stopping.wait()
        for s in socks:
            s.close()

    def _random_bytes(self):
        rng = random.Random(7)
        for _ in range(self.random_bytes // self.chunk):
            try:
                s = connect(*self.registry)
                s.sendall(rng.randbytes(self.chunk))
                s.close()
                self._count("random")
            except OSError:
                self._count("errors")
        self.ready["random"].set()

    def _silent(self):
        socks = []
        for _ in range(self.silent):
            try:
                socks.append(connect(*self.registry))
                self._count("silent")
            except OSError:
                self._count("errors")
        self.ready["silent"].set()
        self.stopping.wait()
        for s in socks:
            # The AM closed the ones beyond its cap or past their deadline:
            # past the gate's hello there is an end of stream (or a reset).
            s.setblocking(False)
            try:
                while True:
                    if s.recv(1024 * 64) == b"":
                        self._count("silent_closed")
                        break
            except BlockingIOError:
                pass
            except OSError:
                self._count("silent_closed")
            s.close()

    def _slow_loris(self):
        request = b"GET / HTTP/1.1\r\nHost: tony\r\nX-Slow: " + b"a" * 100000
        conns = []
        for _ in range(self.loris):
            try:
                conns.append([connect(*self.web), 0])
                self._count("loris")
            except OSError:
                self._count("errors")
        first = True
        while not self.stopping.is_set():
            for c in conns:
                s, sent = c
                if s is None:
                    continue
                try:
                    s.send(request[sent:sent + 1])
                    c[1] = sent + 1
                except OSError:
                    # Closed by the server (header deadline, cap): come back.
                    self._count("loris_closed_by_server")
                    s.close()
                    try:
                        c[0], c[1] = connect(*self.web), 0
                        self._count("loris")
                    except OSError:
                        c[0] = None
                        self._count("errors")
            if first:
                first = False
                self.ready["loris"].set()
            self.stopping.wait(self.loris_step)
        for s, _ in conns:
            if s is not None:
                s.close()

    def start(self, timeout=120):
        attacks = {"crafted": self._crafted_headers, "random": self._random_bytes,
                   "silent": self._silent}
        if self.web is not None:
            attacks["loris"] = self._slow_loris
        for name, fn in attacks.items():
            self.ready[name] = threading.Event()
            t = threading.Thread(target=fn, name=f"attack-{name}", daemon=True)
            t.start()
            self.threads.append(t)
        for name, ev in self.ready.items():
            assert ev.wait(timeout), f"the {name} attack did not get going in {timeout} s"
        return self

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(60)
        return dict(self.counts)

    def total_connections(self):
        c = self.counts
        return c["crafted"] + c["random"] + c["silent"] + c["loris"]
