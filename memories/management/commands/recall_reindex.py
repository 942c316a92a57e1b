"""Rebuild the recall index (memory entries and message passages) from the
rows themselves: after an upgrade that added the index, after restoring a
database without it, or after an import. Vectors are kept where the text
they were made from is unchanged; whatever has none is embedded here, with
progress, unless `--no-embed` leaves it to the worker (it is queued)."""

from __future__ import annotations

import sys

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from tqdm import tqdm

from conversations.selectors.messages import messages_for_reindex
from memories.models import MemoryItem, MemoryType
from memories.recall.dense import EMBED_CHUNK, recall_embed_pending, recall_entries_without_vector
from memories.recall.fulltext import recall_index_purge
from memories.recall.index import memory_entries_rebuild, passage_entries_rebuild

# Rows per transaction: a few thousand entries, so a long reindex never holds
# the (SQLite) write lock for long.
CHUNK = 1000


class Command(BaseCommand):
    help = ("Rebuild the recall index for every memory and message (or one workspace's), keeping the vectors of "
            "unchanged text and embedding the rest.")

    def add_arguments(self, parser):
        parser.add_argument("--workspace", help="a workspace id; default: all")
        parser.add_argument("--no-embed", action="store_true",
                            help="leave missing vectors to the Celery worker (queued) instead of embedding them here")
        parser.add_argument("--embed-only", action="store_true",
                            help="rebuild nothing; only embed the entries without a vector")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on standard error")

    def handle(self, *args, **options):
        workspace_id = options["workspace"]
        if not options["embed_only"]:
            self._rebuild(workspace_id)
        if options["no_embed"] or settings.EMBEDDING_PROVIDER == "none":
            return
        self._embed(workspace_id, progress=not options["no_progress"])

    def _rebuild(self, workspace_id: str | None) -> None:
        items = MemoryItem.objects.exclude(type=MemoryType.DOCUMENT).order_by("pk")
        if workspace_id:
            items = items.filter(workspace_id=workspace_id)
        memories = passages = 0
        last = ""
        while True:
            chunk = list(items.filter(pk__gt=last)[:CHUNK])
            if not chunk:
                break
            with transaction.atomic():
                memory_entries_rebuild(chunk, keep_vectors=True)
            memories += len(chunk)
            last = chunk[-1].pk
        for ws, messages in messages_for_reindex(workspace_id=workspace_id, chunk=CHUNK):
            with transaction.atomic():
                passages += passage_entries_rebuild(workspace_id=ws, messages=messages, keep_vectors=True)
        recall_index_purge()
        self.stdout.write(f"reindexed {memories} memories and {passages} passages")

    def _embed(self, workspace_id: str | None, *, progress: bool) -> None:
        missing = recall_entries_without_vector(workspace_id=workspace_id)
        embedded = 0
        with tqdm(total=sum(missing.values()), unit="entry", desc="embed", file=sys.stderr,
                  disable=not progress) as bar:
            for ws in missing:
                while done := recall_embed_pending(workspace_id=ws, limit=EMBED_CHUNK):
                    embedded += done
                    bar.update(done)
        without = sum(recall_entries_without_vector(workspace_id=workspace_id).values())
        self.stdout.write(f"embedded {embedded} entries; {without} still without a vector")
