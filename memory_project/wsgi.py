import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
application = get_wsgi_application()


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
