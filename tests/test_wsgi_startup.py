"""What the master does once, before gunicorn forks its workers from it."""

from __future__ import annotations

import runpy

from django.conf import settings

import memory_project.wsgi  # noqa: F401 - imported for what it prepares


def _gunicorn_conf() -> dict:
    """What `memory_project/gunicorn.conf.py` defines, as gunicorn reads it."""
    return runpy.run_path(str(settings.BASE_DIR / "memory_project" / "gunicorn.conf.py"))


def test_gunicorn_freezes_what_the_master_loaded_before_forking_a_worker():
    import gc
    hooks = _gunicorn_conf()
    assert hooks["preload_app"] is True  # the application is in the master when it forks
    try:
        hooks["pre_fork"](None, None)
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


def _get(path: str) -> tuple[str, bytes]:
    """A GET through the WSGI application gunicorn serves, as Django's test
    client does it: without closing the test's database connection after."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections
    from django.test import RequestFactory

    from memory_project.wsgi import application

    answer: dict[str, str] = {}

    def start_response(status, headers, exc_info=None):
        answer["status"] = status

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        body = b"".join(application(RequestFactory().get(path).environ, start_response))
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return answer["status"], body


def test_a_request_goes_through_the_application_gunicorn_serves(db):
    status, _ = _get("/favicon.ico")
    assert status.startswith("200")
    for _ in range(2):
        status, body = _get("/v1/no-such-route")
        assert status.startswith("404")
        assert b"not_found_error" in body
