"""Everything the embedded mode writes under the var directory (database,
write-ahead log, cache, broker, secret, exports) is owner-only from its
creation: files 0600, directories 0700."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]

SCRIPT = """
import django, os
django.setup()
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE IF NOT EXISTS probe (x text)")
    cursor.execute("INSERT INTO probe VALUES ('x')")
cache.set("probe", "value")
from accounts.services import workspace_create
workspace = workspace_create(name="Probe", slug="probe")
call_command("export_workspace", "probe", "--output", os.path.join(os.environ["MEMORY_VAR_DIR"], "exports", "probe.jsonl"),
             "--no-progress")
"""


def test_var_files_are_owner_only_from_the_first_byte(tmp_path):
    var = tmp_path / "var"
    (var.parent).mkdir(exist_ok=True)
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update({"MEMORY_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "memory_project.settings",
                "CELERY_BROKER_URL": "filesystem://"})
    os.umask(0o022)
    (var / "exports").mkdir(parents=True)  # made by the operator with a loose umask
    os.chmod(var, 0o755)
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=BASE_DIR, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert stat.S_IMODE(var.stat().st_mode) == 0o700
    files = [path for path in var.rglob("*") if path.is_file()]
    names = {path.name for path in files}
    assert {"memory.sqlite3", "secret_key", "probe.jsonl"} <= names, names
    assert any("cache" in path.parts[len(var.parts):-1] for path in files), files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for path in var.rglob("*"):
        if path.is_dir() and path.name != "exports":
            assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
