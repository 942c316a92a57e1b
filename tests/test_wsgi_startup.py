"""What the master does once, before gunicorn forks its workers from it."""

from __future__ import annotations

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


def test_gunicorn_freezes_what_the_master_loaded_before_forking_a_worker():
    import gc
    import runpy

    from django.conf import settings

    hooks = runpy.run_path(str(settings.BASE_DIR / "memory_project" / "gunicorn.conf.py"))
    assert hooks["preload_app"] is True  # the application is in the master when it forks
    try:
        hooks["pre_fork"](None, None)
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
