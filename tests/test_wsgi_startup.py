"""What the master does once, before gunicorn forks its workers from it."""

from __future__ import annotations

import runpy

from django.conf import settings
from django.urls import URLResolver, get_resolver

import memory_project.wsgi  # noqa: F401 - imported for what it prepares


def _routes(resolver):
    for entry in resolver.url_patterns:
        yield entry
        if isinstance(entry, URLResolver):
            yield from _routes(entry)


def test_every_route_is_compiled_before_the_first_request():
    # Django keeps a route's compiled expression in its pattern's __dict__
    # once read; each worker would otherwise compile it on its first request.
    routes = list(_routes(get_resolver()))
    assert len(routes) > 100
    uncompiled = [str(entry.pattern) for entry in routes if "regex" not in entry.pattern.__dict__]
    assert uncompiled == []


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


def test_a_path_seen_before_is_resolved_from_memory(db):
    from memory_project.wsgi import _resolved

    _get("/favicon.ico")
    hits = _resolved.cache_info().hits
    status, body = _get("/favicon.ico")
    assert status.startswith("200")
    assert _resolved.cache_info().hits == hits + 1


def test_a_path_no_route_takes_is_answered_404_each_time_and_not_remembered(db):
    from memory_project.wsgi import _resolved

    for _ in range(2):
        size = _resolved.cache_info().currsize
        status, body = _get("/v1/no-such-route")
        assert status.startswith("404")
        assert b"not_found_error" in body
        assert _resolved.cache_info().currsize == size


def test_a_swapped_urlconf_resolves_afresh(db, settings):
    # The benchmark's URLconf adds routes the service's has not; what was
    # remembered under one route list is never served under another.
    assert _get("/v1/bench/floor/ping")[0].startswith("404")
    settings.ROOT_URLCONF = "bench.floor_server.urls"
    assert _get("/v1/bench/floor/ping")[0].startswith("401")  # found, and asks for a key
    settings.ROOT_URLCONF = "memory_project.urls"
    assert _get("/v1/bench/floor/ping")[0].startswith("404")
