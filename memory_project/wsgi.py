"""The WSGI application gunicorn serves (`memory_project.wsgi`)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")

application = get_wsgi_application()


def _import_request_code() -> None:
    """Import what the first request would: every URL module with its views
    (the URLconf is read lazily). gunicorn loads this module once and forks
    its workers from it (`preload_app`), so no worker answers its first
    request late."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (read to import every view)


_import_request_code()
