"""gunicorn with the project's config (`memory_project/gunicorn.conf.py`) in a
subprocess, for the tests that need the real web server in front of the app."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn(
    *args: str, env: dict[str, str] | None = None, log: Path | None = None
) -> Iterator[tuple[subprocess.Popen, int]]:
    """The server on a free port of 127.0.0.1, answering by the time this
    yields `(process, port)`; stopped (SIGTERM, as a deployment stops it) on
    the way out unless the test stopped it already. `args` are gunicorn's
    (`--workers`, `--threads`, ...); its output goes to `log`, or nowhere."""
    port = free_port()
    command = [str(Path(sys.executable).with_name("gunicorn")), "-c", "memory_project/gunicorn.conf.py",
               "memory_project.wsgi", "--bind", f"127.0.0.1:{port}", *args]
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(log.open("w")) if log is not None else subprocess.DEVNULL
        server = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.2)
        yield server, port
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=30)
