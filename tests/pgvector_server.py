"""A PostgreSQL with pgvector for the tests of the database vector path: the
`pgserver` package ships PostgreSQL 16 with the extension and runs it as an
ordinary process (as root, under a system user of its own, which it creates),
on a Unix socket in its data folder. Started once, deleted at the end."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit


@contextlib.contextmanager
def pgvector_server(database: str = "memory_service") -> Iterator[str]:
    """A DATABASE_URL for `database` on a fresh pgvector server."""
    import pgserver

    root = Path(tempfile.mkdtemp(prefix="pgvector-"))
    server = pgserver.get_server(root / "data", cleanup_mode="delete")
    try:
        socket_dir = parse_qs(urlsplit(server.get_uri()).query)["host"][0]
        yield f"postgres://postgres@{quote(socket_dir, safe='')}/{database}"
    finally:
        server.cleanup()
        with contextlib.suppress(OSError):
            root.rmdir()
