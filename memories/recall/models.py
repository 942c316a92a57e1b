"""The recall index's tables: one entry per retrieval unit (a memory, or a
passage of a message) and running totals per scope token."""

from __future__ import annotations

from django.db import models

from accounts.models import Workspace


class RecallKind(models.TextChoices):
    MEMORY = "memory"
    PASSAGE = "passage"


class RecallEntry(models.Model):
    """One retrieval unit of the recall index: a memory item, or a passage (a
    sentence window) of a conversation's message.

    Only analysed terms, offsets and a vector are kept here, never a second
    copy of the text: a passage's text is read from its message when it is
    injected, so editing or erasing the message leaves nothing behind once its
    entries are rebuilt. `scope_token` is one opaque word per visibility scope
    (see memories/recall/index.py), so the full-text match and the scope
    filter run in one index lookup on both databases.
    """

    id = models.BigAutoField(primary_key=True)
    # Indexed by recall_ws_scope and recall_memory (see MemoryItem).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=8, choices=RecallKind.choices)
    scope_token = models.CharField(max_length=48)
    memory = models.ForeignKey("memories.MemoryItem", on_delete=models.CASCADE, null=True, blank=True, related_name="+",
                               db_index=False)
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    branch_id = models.CharField(max_length=40, null=True, blank=True)
    message_id = models.CharField(max_length=64, null=True, blank=True)
    floor_no = models.PositiveIntegerField(null=True, blank=True)
    # Character offsets of the passage in the message's readable text.
    start_char = models.PositiveIntegerField(default=0)
    end_char = models.PositiveIntegerField(default=0)
    terms = models.TextField(blank=True, default="")
    length = models.PositiveIntegerField(default=0)
    embedding = models.BinaryField(null=True, blank=True)
    embedding_model = models.CharField(max_length=64, blank=True, default="")
    content_sha256 = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "scope_token"], name="recall_ws_scope"),
            models.Index(fields=["message_id"], name="recall_message"),
            models.Index(fields=["memory"], name="recall_memory"),
            models.Index(fields=["workspace", "embedding_model"], name="recall_ws_embedding"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.memory_id or self.message_id}"


class RecallScopeStats(models.Model):
    """Running totals of the recall index per scope token: BM25's N and total
    length, and the embedded entries' count and removals, which tell a
    process whether its cached vectors of the scope are current.

    Kept by triggers on the entry table (see `memories/recall/stats.py`), so
    every path that writes entries (the ORM, hand-written statements, cascades
    from a deleted memory or conversation) counts, and a request reads one
    row per scope instead of counting the scope's entries."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    scope_token = models.CharField(max_length=48)
    entries = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)
    embedded = models.BigIntegerField(default=0)
    # Embedded entries removed or re-embedded, ever: only grows, so a cache
    # that saw the same number has lost no vector since.
    removed = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "scope_token"], name="recall_scope_stats_unique")]

    def __str__(self) -> str:
        return f"{self.scope_token}: {self.entries} entries"


class RecallTermStats(models.Model):
    """Document frequency of each term per scope token: in how many entries
    of the scope the term occurs, BM25's df. Kept by triggers beside the
    scope's totals (see `memories/recall/stats.py`), so a query reads the
    counts of all its terms in one indexed statement where counting the
    matching entries grew with the scope. A term's row goes when its count
    reaches zero: the row holds a word of user text, and an erased word must
    leave no row behind."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    scope_token = models.CharField(max_length=48)
    # Terms longer than this are not counted (a run of digits or letters
    # that long is an id or a blob, rare by nature): `stats.term_counts`
    # takes such a term as found once.
    term = models.CharField(max_length=64)
    entries = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "scope_token", "term"],
                                               name="recall_term_stats_unique")]

    def __str__(self) -> str:
        return f"{self.scope_token} {self.term}: {self.entries}"
