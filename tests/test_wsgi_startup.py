"""What the WSGI module does once, before gunicorn forks its workers."""

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
