"""The README's tour runs top to bottom as written.

Every ```sh block of README.md after the set-up commands (`make run` /
`make test`, which this suite is already inside) runs in one bash session
against a live server, with the credentials file and the address the README
names pointed at this test's. `curl` fails the tour on any HTTP error, so a
step that answers 404 (a conversation an earlier step deleted, say) breaks
it. A request line longer than gunicorn's default limit, sent to a real
gunicorn with the project's config, answers in the JSON error shape."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from tests.factories import WorkspaceFactory, make_api_key
from tests.web_server import gunicorn

README = Path(settings.BASE_DIR) / "README.md"
README_CREDENTIALS = "var/demo-credentials.txt"

pytestmark = pytest.mark.django_db(transaction=True)


def tour_blocks() -> list[str]:
    blocks = re.findall(r"^```sh\n(.*?)^```", README.read_text(), flags=re.M | re.S)
    return [block for block in blocks if not re.search(r"^make (run|test)\b", block, flags=re.M)]


def test_the_readme_says_how_to_run_review_and_probe_it():
    text = README.read_text()
    for needed in ("make run PORT=", "HOST", "/healthz", "/readyz", "--requires-review", "Requires review",
                   "docs/operations.md", "o200k_base"):
        assert needed in text, needed
    operations = Path(settings.BASE_DIR) / "docs" / "operations.md"
    assert "gthread" in operations.read_text() and "gthread" not in text


def test_the_readme_has_a_tour():
    blocks = tour_blocks()
    assert len(blocks) >= 2
    assert any("/context" in block for block in blocks)
    assert any("memory_scopes/compact" in block for block in blocks)


@pytest.mark.skipif(shutil.which("curl") is None, reason="the tour uses curl")
def test_readme_tour_runs_against_a_live_server(live_server, tmp_path):
    """On whatever port the server has: the tour reads HOST and PORT, as
    `make run` takes them, and hard-codes no address."""
    from urllib.parse import urlsplit

    from memory_project.readiness import heartbeat_record

    heartbeat_record()  # the worker's, which the tour's readiness check asks for
    workspace = WorkspaceFactory(name="Demo", slug="demo")
    raw_key = make_api_key(workspace, name="demo")
    credentials = tmp_path / "demo-credentials.txt"
    credentials.write_text(f"Workspace:  Demo ({workspace.pk})\nAPI key:    {raw_key}\n")
    script = "\n".join(tour_blocks())
    assert "127.0.0.1:8000" not in script.replace("${PORT:-8000}", "")
    script = script.replace(README_CREDENTIALS, str(credentials))
    address = urlsplit(live_server.url)
    prelude = (
        "set -euo pipefail\nshopt -s inherit_errexit\n"
        # Any HTTP error fails the step (and so the tour), body still shown.
        "curl() { command curl --fail-with-body --max-time 30 \"$@\"; }\n"
    )
    result = subprocess.run(
        ["bash", "-c", prelude + script], capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "HOST": address.hostname, "PORT": str(address.port)},
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}"
    out = result.stdout
    assert re.search(r"\}202$", out, flags=re.M)  # the manual compact was queued
    last = json.loads(out.strip().splitlines()[-1])  # the context, the tour's last step
    assert "data" in last


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_gunicorn_answers_a_long_request_line_in_the_json_error_shape(tmp_path):
    with gunicorn("--workers", "1") as (_, port):
        # 5,000 bytes: over gunicorn's default 4,094, under the service's limit.
        allowed = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{port}/favicon.ico?pad={'x' * 5000}"],
            capture_output=True, text=True, timeout=30,
        )
        assert allowed.stdout == "200"
        refused = subprocess.run(
            ["curl", "-s", "-w", "\n%{http_code}", f"http://127.0.0.1:{port}/v1/memories?q={'x' * 20000}"],
            capture_output=True, text=True, timeout=30,
        )
        body, _, status = refused.stdout.rpartition("\n")
        assert status == "414"
        assert json.loads(body)["error"]["type"] == "invalid_request_error"
