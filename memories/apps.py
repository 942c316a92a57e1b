from django.apps import AppConfig


def _ensure_search_index(sender, using="default", **kwargs) -> None:
    """After every migrate: Django rebuilds a SQLite table whenever a migration
    alters it, which drops the search triggers; put them back (and re-index)."""
    from django.db import connections

    from memories.search import sqlite_index_ensure

    sqlite_index_ensure(connections[using])


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        post_migrate.connect(_ensure_search_index, sender=self, dispatch_uid="memories_search_index")
