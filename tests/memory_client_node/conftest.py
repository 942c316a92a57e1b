"""The Node package (memory-client-node/) against a live test server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.live_client import aclient, api_key, client, key_pool, new_key  # noqa: F401

PACKAGE = Path(__file__).resolve().parents[2] / "memory-client-node"


@pytest.fixture(scope="session")
def node_package() -> Path:
    """The package, built from its sources. Its dependencies come from the
    committed lock file (`make node-deps`, which `make test` runs first)."""
    if shutil.which("node") is None or not (PACKAGE / "node_modules").is_dir():
        pytest.skip("Node.js and memory-client-node/node_modules are needed: run `make node-deps`")
    built = PACKAGE / "dist" / "index.js"
    sources = [path.stat().st_mtime for path in (PACKAGE / "src").rglob("*.ts")]
    if not built.exists() or max(sources) > built.stat().st_mtime:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=PACKAGE, check=True, timeout=240)
    return PACKAGE


def run_node(package: Path, script: str, *args: str, env: dict[str, str] | None = None, timeout: float = 240) -> dict:
    """Runs a script of the package's test/ folder; its last line of output is JSON."""
    completed = subprocess.run(
        ["node", script, *args], cwd=package, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=timeout,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])
