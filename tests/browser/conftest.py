"""Headless Chromium against a live server: the console's main flows as an
operator clicks through them. Runs on the SQLite suite only (the PostgreSQL
run covers the same views through `admin_client`), and skips cleanly when
Chromium is not installed (`make browser-deps`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "console-pass-123"  # noqa: S105 - a test user's password


def pytest_collection_modifyitems(config, items):
    reason = None
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        reason = "chromium is not installed (make browser-deps)"
    elif "postgresql" in settings.DATABASES["default"]["ENGINE"]:
        reason = "browser flows run on the SQLite suite only"
    if reason:
        for item in items:
            if "browser" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="module")
def _playwright():
    # Playwright's sync API runs an event loop of its own in this thread; Django
    # refuses ORM calls from a thread with a running loop unless told it is safe
    # here. Module scope stops that loop when the browser flows are done, so the
    # async tests that the same xdist worker runs later get a clean thread.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as playwright:
            yield playwright
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="module")
def browser(_playwright):
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    browser = _playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
    yield browser
    browser.close()


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_superuser("operator", "operator@example.com", PASSWORD)


@pytest.fixture
def page(browser, live_server, operator):
    """A logged-in page (through the real login form)."""
    assert connection.vendor == "sqlite"
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.base_url = live_server.url
    yield page
    context.close()


@pytest.fixture
def shot():
    """Save a full-page screenshot under VAR_DIR/screenshots/<name>.png."""
    directory = Path(settings.VAR_DIR) / "screenshots"
    directory.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = directory / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
