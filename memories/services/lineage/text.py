"""A text across a workspace: where it occurs and its redaction everywhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q

import conversations.hooks as hooks
from accounts.actors import Actor
from conversations.selectors.messages import messages_quoting
from conversations.services import message_update
from memories.models import MemoryItem, MemoryVersion, Scope, ScopeState
from memories.services.items import memory_redact_and_replace
from memories.services.lineage.erase import (
    LineageReport,
    indexes_purge,
    lineage_erase_memories,
    rolling_summaries_clear,
)
from memories.services.lineage.find import memory_descendants, message_descendants
from memories.services.redaction import REDACTED_PLACEHOLDER
from memories.services.scopes import parse_branch_scope_id
from memories.services.text_sweep import text_sweep_count, text_sweep_erase
from memories.services.versioning import memory_versions_redact
from memory_project.errors import ValidationError

# A text to redact across a workspace must be specific enough that matching it
# by substring does not hit unrelated memories.
MIN_REDACT_TEXT_CHARS = 4




@dataclass
class TextOccurrences:
    memory_ids: list[str]
    version_ids: list[str]
    derived_ids: list[str]
    rolling_states: list[int]
    # With `messages=True`: the messages quoting it, and the memories made
    # from them not counted above (they may hold the text reworded, where a
    # search would miss it).
    message_ids: list[str] = field(default_factory=list)
    message_derived_ids: list[str] = field(default_factory=list)
    # Every registered column holding it (`table.column` -> rows), from the
    # user-text registry: metadata, keys, paths, session entries, blobs.
    columns: dict[str, int] = field(default_factory=dict)


def workspace_text_occurrences(*, workspace, text: str, messages: bool = False) -> TextOccurrences:
    """Where `text` is in a workspace's memories: live memories whose content
    holds it, versions (of any memory) that hold it, summaries compacted from
    those memories, rolling summaries that quote it; with `messages`, also
    the messages quoting it and what was made from them (what a redaction
    everywhere would clear, for its preview)."""

    text = clean_redact_text(text)
    memory_ids = list(
        MemoryItem.objects.filter(workspace=workspace, content__contains=text).order_by("pk").values_list("pk", flat=True)
    )
    version_ids = list(
        MemoryVersion.objects.filter(workspace=workspace, redacted_at__isnull=True)
        .filter(Q(content__contains=text) | Q(path__contains=text))
        .order_by("pk").values_list("pk", flat=True)
    )
    derived = [pk for pk in memory_descendants(workspace=workspace, memory_ids=memory_ids) if pk not in memory_ids]
    states = list(
        ScopeState.objects.filter(workspace=workspace, rolling_summary__contains=text).values_list("pk", flat=True)
    )
    found = TextOccurrences(memory_ids, version_ids, derived, states)
    if messages:
        by_conversation: dict[str, list[str]] = {}
        for external_id, message_id, _content in messages_quoting(workspace=workspace, text=text):
            by_conversation.setdefault(external_id, []).append(message_id)
            found.message_ids.append(message_id)
        made = set()
        for external_id, message_ids in by_conversation.items():
            made.update(message_descendants(workspace=workspace, external_id=external_id, message_ids=message_ids))
        found.message_derived_ids = sorted(made - set(memory_ids) - set(derived))
        found.columns = text_sweep_count(workspace=workspace, text=text)
    return found


def clean_redact_text(text: Any) -> str:
    if not isinstance(text, str) or len(text.strip()) < MIN_REDACT_TEXT_CHARS:
        raise ValidationError(f"text: at least {MIN_REDACT_TEXT_CHARS} characters.")
    return text.strip()


def workspace_text_redact(*, workspace, actor: Actor, text: str) -> dict[str, Any]:
    """Redact `text` everywhere in a workspace: each message quoting it is
    edited (the text replaced by a mark), which erases and re-derives what
    was made from it (the receivers above); each live memory
    holding it gets the text replaced by a mark (a new version) and all its
    earlier versions redacted; other versions holding it are redacted;
    summaries compacted from those memories are erased and re-derived;
    rolling summaries quoting it are cleared. Returns counts: `found` and
    `left` are `text_sweep_count` before and after (what the preview counts),
    `derived_ids` the memories made from what held it, erased and derived
    again."""

    text = clean_redact_text(text)
    # Where the text is before anything changes, counted as the preview
    # counts it (the user-text registry's columns), and where it is after.
    before = workspace_text_occurrences(workspace=workspace, text=text, messages=True)
    report = LineageReport()
    # Messages first, each in its own commit: their receivers run after it.
    messages = _messages_redact(workspace=workspace, actor=actor, text=text, report=report)
    with transaction.atomic():
        found = workspace_text_occurrences(workspace=workspace, text=text)
        scopes = set(MemoryItem.objects.filter(pk__in=found.memory_ids).values_list("scope", "scope_id"))
        erased = lineage_erase_memories(workspace=workspace, actor=actor, memory_ids=found.memory_ids, scopes=scopes)
        report.memory_ids += erased.memory_ids
        report.rederive_job_ids += erased.rederive_job_ids
        replaced = 0
        for item in MemoryItem.objects.filter(workspace=workspace, pk__in=found.memory_ids).only("pk", "content"):
            memory_redact_and_replace(workspace=workspace, actor=actor, memory_id=item.pk,
                                      content=item.content.replace(text, REDACTED_PLACEHOLDER))
            replaced += 1
        remaining = (MemoryVersion.objects.filter(pk__in=found.version_ids, redacted_at__isnull=True)
                     .values_list("memory_id", "pk"))
        by_memory: dict[str, list[str]] = {}
        for memory_id, version_id in remaining:
            by_memory.setdefault(memory_id, []).append(version_id)
        versions = 0
        for memory_id, version_ids in sorted(by_memory.items()):
            head = MemoryItem.objects.filter(pk=memory_id).values_list("current_version_id", flat=True).first()
            version_ids = [pk for pk in version_ids if pk != head]
            if version_ids:
                versions += len(memory_versions_redact(workspace=workspace, memory_id=memory_id, actor=actor,
                                                       version_ids=version_ids))
        states = list(ScopeState.objects.filter(pk__in=found.rolling_states, rolling_summary__contains=text))
        cleared = report.summaries_cleared
        for state in states:
            external_id = None
            if state.scope == Scope.BRANCH:
                try:
                    external_id = parse_branch_scope_id(state.scope_id)[0]
                except ValidationError:
                    external_id = None
            cleared += rolling_summaries_clear(workspace=workspace, states=[state], external_id=external_id or "",
                                      conversation_exists=external_id is not None and state.conversation_id is not None)
        # What lineage does not reach: metadata, keys, paths, session entries, blobs.
        swept = text_sweep_erase(workspace=workspace, text=text)
        indexes_purge()
    return {
        "found": before.columns,
        "derived_ids": sorted({*before.derived_ids, *before.message_derived_ids}),
        "left": text_sweep_count(workspace=workspace, text=text),
        "memories_replaced": replaced,
        "versions_redacted": versions,
        "messages_redacted": messages,
        "columns_scrubbed": swept,
        "lineage": {**report.as_dict(), "summaries_cleared": cleared},
    }


def _replace_in_json(value: Any, text: str) -> Any:
    if isinstance(value, str):
        return value.replace(text, REDACTED_PLACEHOLDER)
    if isinstance(value, list):
        return [_replace_in_json(element, text) for element in value]
    if isinstance(value, dict):
        return {_replace_in_json(key, text): _replace_in_json(element, text) for key, element in value.items()}
    return value


def _messages_redact(*, workspace, actor: Actor, text: str, report: LineageReport) -> int:

    rows = messages_quoting(workspace=workspace, text=text)
    for external_id, message_id, content in rows:
        with hooks.collect_answers(actor=actor) as answers:
            message_update(workspace=workspace, external_id=external_id, message_id=message_id,
                           content=_replace_in_json(content, text))
        found = answers.get("lineage") or {}
        report.memory_ids += [pk for pk in found.get("memory_ids") or () if pk not in report.memory_ids]
        report.summaries_cleared += found.get("summaries_cleared", 0)
        report.rederive_job_ids += found.get("rederive_job_ids") or []
    return len(rows)
