import functools
import os

import django
from django.core.handlers.wsgi import WSGIHandler
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")

# The most paths whose resolution a worker remembers: every fixed route (a
# framework endpoint, a list) and the paths of the conversations in use.
RESOLVED_PATHS = 1024


@functools.lru_cache(maxsize=RESOLVED_PATHS)
def _resolved(resolver, path: str):
    # A path no route takes raises Resolver404, which is not remembered.
    return resolver.resolve(path)


class ServiceWSGIHandler(WSGIHandler):
    """Django's WSGI handler, resolving a path it has seen before from memory.

    Django matches a request's path against the routes in order, every time:
    a framework endpoint's path goes through nested route lists and the 34
    conversation routes before its own, ~30 us alone and 9% of a LangGraph
    checkpoint put's CPU in-process (609 -> 552 us, median of alternating
    blocks). The routes do not change while the process runs, and a match is
    only read after it is made (a view gets copies of its arguments), so a
    match is kept per (route list, path): a test that swaps the URLconf gets
    another route list, hence fresh matches."""

    def resolve_request(self, request):
        if hasattr(request, "urlconf"):  # a middleware chose another URLconf
            return super().resolve_request(request)
        match = _resolved(get_resolver(), request.path_info)
        request.resolver_match = match
        return match


# As `django.core.wsgi.get_wsgi_application`, with the handler above.
django.setup(set_prefix=False)
application = ServiceWSGIHandler()


def _import_request_code() -> None:
    """Import what the first request would: every URL module with its views
    (the URLconf is read lazily) and the cache backends' client libraries.
    gunicorn loads this module once and forks its workers from it
    (`preload_app`), so no worker answers its first request ~0.7 s late."""
    from django.conf import settings
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache
    from django.urls import get_resolver

    _compile_routes(get_resolver())
    for alias in settings.CACHES:
        if isinstance(caches[alias], RedisCache):
            import redis  # noqa: F401 (imported by the backend on first use)


def _compile_routes(resolver) -> None:
    """Compile every route's regular expression. Django compiles one the first
    time a request reaches it, in each worker: a worker's first request to a
    route family (the checkpoint endpoints, say) paid ~1 ms for it here."""
    from django.urls import URLResolver

    for entry in resolver.url_patterns:
        entry.pattern.regex  # noqa: B018 (read to compile and keep it)
        if isinstance(entry, URLResolver):
            _compile_routes(entry)


_import_request_code()
