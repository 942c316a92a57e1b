"""Rebuild the recall index (memory entries and message passages) from the
rows themselves: after an upgrade that added the index, or after restoring a
database without it. Vectors are recomputed afterwards by the pipeline."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import transaction

from conversations.selectors import messages_for_reindex
from memories.models import MemoryItem, MemoryType
from memories.recall.index import memory_entries_rebuild, passage_entries_rebuild, recall_index_purge

# Rows per transaction: a few thousand entries, so a long reindex never holds
# the (SQLite) write lock for long.
CHUNK = 1000


class Command(BaseCommand):
    help = "Rebuild the recall index for every memory and message (or one workspace's)."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", help="a workspace id; default: all")

    def handle(self, *args, **options):
        items = MemoryItem.objects.exclude(type=MemoryType.DOCUMENT).order_by("pk")
        if options["workspace"]:
            items = items.filter(workspace_id=options["workspace"])
        memories = passages = 0
        last = ""
        while True:
            chunk = list(items.filter(pk__gt=last)[:CHUNK])
            if not chunk:
                break
            with transaction.atomic():
                memory_entries_rebuild(chunk)
            memories += len(chunk)
            last = chunk[-1].pk
        for workspace_id, messages in messages_for_reindex(workspace_id=options["workspace"], chunk=CHUNK):
            with transaction.atomic():
                passages += passage_entries_rebuild(workspace_id=workspace_id, messages=messages)
        recall_index_purge()
        self.stdout.write(f"reindexed {memories} memories and {passages} passages")
