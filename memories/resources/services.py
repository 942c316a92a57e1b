"""Attaching memory stores to a conversation.

`PUT /conversations/{cid}/resources` replaces the whole list. The conversation
is created (empty, with its `main` branch) when it does not exist yet, as a
session is created together with its `resources[]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.models import Workspace
from conversations.services import conversation_get_or_create
from memories.models import MemoryStore
from memories.resources.models import MAX_ATTACHED_STORES, MAX_INSTRUCTIONS_CHARS, AccessMode, ConversationResource
from memories.resources.selectors import AttachedStore, conversation_resource_list, mount_paths
from memory_project.erasure import erasure_on_disk
from memory_project.errors import NotFoundError, ValidationError


@dataclass(frozen=True)
class ResourceSpec:
    memory_store_id: str
    access: str
    instructions: str


def _clean_resource(index: int, raw: Any) -> ResourceSpec:
    where = f"resources[{index}]"
    if not isinstance(raw, dict):
        raise ValidationError(f"{where} must be an object.")
    if raw.get("type") != "memory_store":
        raise ValidationError(f"{where}.type must be 'memory_store'.")
    store_id = raw.get("memory_store_id")
    if not isinstance(store_id, str) or not store_id:
        raise ValidationError(f"{where}.memory_store_id must be a memory store id.")
    access = raw.get("access") or AccessMode.READ_WRITE
    if access not in AccessMode.values:
        raise ValidationError(f"{where}.access must be 'read_write' or 'read_only'.")
    # `prompt` is spec 004's word for `instructions`; both may be sent if equal.
    instructions, prompt = raw.get("instructions"), raw.get("prompt")
    if instructions is not None and prompt is not None and instructions != prompt:
        raise ValidationError(f"{where}: 'instructions' and its alias 'prompt' differ; send one.")
    text = instructions if instructions is not None else prompt
    text = "" if text is None else text
    if not isinstance(text, str) or len(text) > MAX_INSTRUCTIONS_CHARS:
        raise ValidationError(f"{where}.instructions must be a string of at most {MAX_INSTRUCTIONS_CHARS} characters.")
    return ResourceSpec(store_id, access, text)


def clean_resources(raw: Any) -> list[ResourceSpec]:
    if not isinstance(raw, list):
        raise ValidationError("resources must be a list.")
    if len(raw) > MAX_ATTACHED_STORES:
        raise ValidationError(f"A conversation can have at most {MAX_ATTACHED_STORES} memory stores attached.")
    specs = [_clean_resource(index, item) for index, item in enumerate(raw)]
    ids = [spec.memory_store_id for spec in specs]
    if len(set(ids)) != len(ids):
        raise ValidationError("resources: a memory store may be attached only once.")
    return specs


def conversation_resources_set(*, workspace: Workspace, external_id: str, resources: Any) -> list[AttachedStore]:
    """Replace the conversation's attached stores. An unknown store (or another
    workspace's) is 404; an archived store can stay attached but not be newly
    attached (400). Returns the new attachments."""
    specs = clean_resources(resources)
    with transaction.atomic():
        # Locks the conversation row (creating it if needed) until commit, so
        # two concurrent PUTs apply one after the other.
        conversation, _ = conversation_get_or_create(workspace=workspace, external_id=external_id)
        stores = MemoryStore.objects.filter(workspace=workspace, pk__in=[s.memory_store_id for s in specs]).in_bulk()
        existing = {row.memory_store_id: row for row in ConversationResource.objects.filter(conversation=conversation)}
        for spec in specs:
            store = stores.get(spec.memory_store_id)
            if store is None:
                raise NotFoundError(f"No memory store '{spec.memory_store_id}'.")
            if store.archived_at is not None and spec.memory_store_id not in existing:
                raise ValidationError(f"Memory store '{store.pk}' is archived and cannot be attached.")
        wanted = {spec.memory_store_id for spec in specs}
        detached, _ = ConversationResource.objects.filter(conversation=conversation).exclude(
            memory_store_id__in=wanted).delete()
        # Instructions detached or replaced are erased from the table's files too.
        replaced = bool(detached)
        # Every PUT re-takes the snapshots: it is the moment the agent's view of
        # its memory is (re)defined.
        paths = mount_paths([stores[spec.memory_store_id].name for spec in specs])
        for position, (spec, mount_path) in enumerate(zip(specs, paths, strict=True)):
            store = stores[spec.memory_store_id]
            values = {
                "access": spec.access,
                "instructions": spec.instructions,
                "position": position,
                "store_name": store.name,
                "store_description": store.description,
                "mount_path": mount_path,
            }
            row = existing.get(spec.memory_store_id)
            if row is None:
                ConversationResource.objects.create(conversation=conversation, memory_store=store, **values)
            elif any(getattr(row, name) != value for name, value in values.items()):
                replaced = replaced or row.instructions != values["instructions"]
                for name, value in values.items():
                    setattr(row, name, value)
                row.save(update_fields=list(values))
        if replaced:
            erasure_on_disk([ConversationResource._meta.db_table])
        return conversation_resource_list(conversation=conversation)
