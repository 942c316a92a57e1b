"""The web hosts bench/load.py --hosts makes: network namespaces of its own,
each reached at its own address, the shared services through Unix sockets,
and nothing left behind."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from bench.web_hosts import available, redis_on_socket, web_hosts

pytestmark = [pytest.mark.slow, pytest.mark.skipif(available() is not None, reason=str(available()))]


def test_each_host_answers_at_its_own_address_and_is_torn_down(tmp_path):
    with redis_on_socket(str(tmp_path)) as redis_path, web_hosts(2) as hosts:
        assert len({h.address for h in hosts}) == 2
        for host in hosts:
            (tmp_path / host.namespace).write_text(host.namespace)
            subprocess.Popen(host.command([sys.executable, "-m", "http.server", "--bind", host.address, "8000",
                                           "--directory", str(tmp_path)]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for host in hosts:
            deadline = time.monotonic() + 60
            while True:
                try:
                    response = httpx.get(f"http://{host.address}:8000/{host.namespace}", timeout=5)
                    break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline
                    time.sleep(0.2)
            assert response.text == host.namespace
            # Inside a host, 127.0.0.1 is its own loopback: Redis is reached
            # through its socket.
            ping = subprocess.run(host.command(["redis-cli", "-s", redis_path, "ping"]), capture_output=True,
                                  text=True)
            assert ping.stdout.strip() == "PONG"
        names = [h.namespace for h in hosts]
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(name in listed for name in names)
    links = subprocess.run(["ip", "link"], capture_output=True, text=True).stdout
    assert not any(f"msh{name.removeprefix('mshost').split('-')[0]}o" in links for name in names)
