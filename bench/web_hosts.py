"""Web hosts of a benchmark's own making: Linux network namespaces on this
machine, each reached from the benchmark's namespace over a veth pair with
addresses in 198.18.0.0/15 (the range set aside for benchmarking network
devices, RFC 2544). Needs root and iproute2. Everything made here is torn
down at the end: processes started in a namespace, the namespace and its
veth pair.

Inside a namespace only its own loopback answers on 127.0.0.1, so the shared
services are reached through the file system: PostgreSQL through its Unix
socket, Redis through a Unix socket of a server the benchmark starts.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class WebHost:
    namespace: str
    address: str  # the host's address, reached from the benchmark's namespace

    def command(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.namespace, *argv]


def available() -> str | None:
    """Why web hosts cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "needs root (ip netns)"
    if shutil.which("ip") is None:
        return "needs iproute2 (ip)"
    return None


def _dotted(n: int) -> str:
    return ".".join(str(n >> shift & 255) for shift in (24, 16, 8, 0))


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextlib.contextmanager
def web_hosts(count: int) -> Iterator[list[WebHost]]:
    """`count` namespaces, each with an address of its own and a route back."""
    tag = os.getpid() % 100_000
    hosts: list[WebHost] = []
    made: list[str] = []
    links: list[str] = []
    try:
        for i in range(count):
            namespace = f"mshost{tag}-{i}"
            outer, inner = f"msh{tag}o{i}", f"msh{tag}i{i}"
            # A /30 per host in 198.18.0.0/16, placed by the pid so that two
            # runs at once do not collide.
            host_side = (198 << 24 | 18 << 16) + ((tag % 4000) * 4 + i) * 4 + 1
            _ip("netns", "add", namespace)
            made.append(namespace)
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            links.append(outer)
            _ip("link", "set", inner, "netns", namespace)
            _ip("addr", "add", f"{_dotted(host_side)}/30", "dev", outer)
            _ip("link", "set", outer, "up")
            _ip("-n", namespace, "addr", "add", f"{_dotted(host_side + 1)}/30", "dev", inner)
            _ip("-n", namespace, "link", "set", inner, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            hosts.append(WebHost(namespace=namespace, address=_dotted(host_side + 1)))
        yield hosts
    finally:
        for namespace in made:
            _stop_processes_in(namespace)
            # Deleting the namespace deletes the veth end inside it, and with
            # it the pair's other end.
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        for link in links:  # gone with its namespace, unless made before the move failed
            subprocess.run(["ip", "link", "del", link], capture_output=True)


def _stop_processes_in(namespace: str) -> None:
    out = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout
    pids = [int(p) for p in out.split()]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if _alive(p)]
        time.sleep(0.2)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@contextlib.contextmanager
def redis_on_socket(folder: str) -> Iterator[str]:
    """A Redis server of the benchmark's own on a Unix socket (no TCP port);
    its path."""
    path = os.path.join(folder, "redis.sock")
    proc = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", path, "--unixsocketperm", "777",
                             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield path
    finally:
        proc.terminate()
        proc.wait(10)
