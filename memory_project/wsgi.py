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

    get_resolver().url_patterns  # noqa: B018 (read for its import side effect)
    for alias in settings.CACHES:
        if isinstance(caches[alias], RedisCache):
            import redis  # noqa: F401 (imported by the backend on first use)


_import_request_code()
