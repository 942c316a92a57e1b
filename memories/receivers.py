"""What the memory pipeline learns from conversations, after each commit, and
the search indexes put back after a migrate. Connected by
`MemoriesConfig.ready()`."""

from __future__ import annotations

from django.db import connections
from django.db.models.signals import post_migrate

import conversations.hooks as hooks
from memories.recall import fulltext, pgvector, stats
from memories.recall.index import passages_note_appended
from memories.search import sqlite_index_ensure
from memories.services.lineage.receivers import lineage_receiver
from memories.services.scopes import scope_note_appended, scope_note_conversation_deleted


def _ensure_search_index(sender, using="default", **kwargs) -> None:
    """After every migrate: Django rebuilds a SQLite table whenever a migration
    alters it, which drops the search triggers; put them back (and re-index)."""
    connection = connections[using]
    sqlite_index_ensure(connection)
    fulltext.sqlite_index_ensure(connection)
    stats.stats_ensure(connection)
    # The HNSW index is for the configured provider's vector size, known
    # only from the settings.
    pgvector.vector_index_ensure(connection)


def _receiver(service):
    """A signal receiver that hands the event to a keyword-only service."""

    def receive(sender, event, **kwargs) -> None:
        service(event=event)

    receive.__name__ = service.__name__
    return receive


def connect(app_config) -> None:
    post_migrate.connect(_ensure_search_index, sender=app_config, dispatch_uid="memories_search_index")
    # Searchable at once: an appended message's passages are in the recall
    # index right after the append commits (one INSERT), long before the
    # extraction that reads its floor.
    hooks.messages_appended.connect(
        _receiver(passages_note_appended), weak=False, dispatch_uid="memories_passages_appended"
    )
    hooks.messages_appended.connect(_receiver(scope_note_appended), weak=False, dispatch_uid="memories_appended")
    hooks.conversation_deleted.connect(
        _receiver(scope_note_conversation_deleted), weak=False, dispatch_uid="memories_conversation_deleted"
    )
    # Erasure that follows lineage: what was made of changed or deleted
    # messages goes too. These receivers answer what they removed (see
    # `conversations.hooks.collect_answers`).
    for name in ("message_edited", "message_deleted", "messages_cleared", "conversation_deleted"):
        getattr(hooks, name).connect(lineage_receiver(name), weak=False, dispatch_uid=f"memories_lineage_{name}")
