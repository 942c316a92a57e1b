"""The writes of one extraction batch, in bulk: one read of the live facts and
loops it touches, one INSERT of new items, one of their versions, one of
edges, one locked UPDATE for the earlier items they deprecate (one they
create and deprecate is inserted deprecated), one rebuild of their recall
entries. Called inside the batch transaction.

Where the memories go:
- the micro summary: the branch scope the batch was read from;
- facts and open loops: the conversation's user (scope `user`, keyed by the
  conversation's `user_id`) when it has one, so that what one conversation
  learnt about a person reaches all of their conversations and no one
  else's; otherwise the branch scope.

Every item records `sources`: the exact message ids it was made from.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

from django.db import connection
from django.utils import timezone

from accounts.actors import Actor
from memories.extraction.types import ExtractionResult, Turn
from memories.llm.tokens import count_tokens
from memories.models import (
    LifecycleStatus,
    MemoryEdge,
    MemoryItem,
    MemoryJob,
    MemoryType,
    Relation,
    Scope,
    Status,
    SummaryTier,
    VersionOperation,
)
from memories.recall.index import memory_entries_rebuild
from memories.services.item_rules import normalize_fact_key, resolve_statuses
from memories.services.versioning import (
    content_fingerprint,
    version_preassign,
    versions_build,
)
from memory_project.db import (
    column,
    insert_objects,
    insert_rows,
    model_objects,
    new_object,
    placeholders,
    select_list,
    table,
)
from memory_project.ids import new_edge_id

MICRO_IMPORTANCE = 0.5
MICRO_CONFIDENCE = 0.8
LOOP_CONFIDENCE = 0.8
LIVE_LIFECYCLES = (LifecycleStatus.ACTIVE, LifecycleStatus.PENDING)
EDGE_COLUMNS = ("id", "workspace_id", "from_item_id", "to_item_id", "relation")


@dataclass
class BatchWrites:
    """What a batch wrote, as the next batch's input reads it: the new items
    in the order they were inserted, and the ids of the items deprecated."""

    items: list[MemoryItem] = field(default_factory=list)
    deprecated_ids: list[str] = field(default_factory=list)


@dataclass
class BatchCounts:
    summaries: int = 0
    facts: int = 0
    facts_unchanged: int = 0
    facts_updated: int = 0
    open_loops: int = 0
    resolved: int = 0
    edges: int = 0
    writes: BatchWrites = field(default_factory=BatchWrites)

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in
                ("summaries", "facts", "facts_unchanged", "facts_updated", "open_loops", "resolved", "edges")}


@dataclass(frozen=True)
class Destination:
    """Where a batch writes: its branch scope, and where facts and loops go."""

    scope: str
    scope_id: str
    fact_scope: str
    fact_scope_id: str


def destination_for(*, scope: str, scope_id: str, user_id: str | None) -> Destination:
    if user_id:
        return Destination(scope, scope_id, Scope.USER, user_id)
    return Destination(scope, scope_id, scope, scope_id)


def live_items(*, workspace, scope: str, scope_id: str, type: str):  # noqa: A002
    """Items still in force in a scope: active status, not compacted or deprecated."""
    return MemoryItem.objects.filter(
        workspace=workspace, scope=scope, scope_id=scope_id, type=type, status=Status.ACTIVE,
        lifecycle_status__in=LIVE_LIFECYCLES,
    )


def _new_item(*, workspace, job: MemoryJob, scope: str, scope_id: str, type: str, content: str,  # noqa: A002
              lifecycle: str, sources: list[str], **fields) -> MemoryItem:
    content_sha256, content_size_bytes = content_fingerprint(content)
    # Built positionally (`new_object`, cheaper than keywords): a
    # catch-up builds one for every memory it writes. The workspace and job
    # are set as objects too, as keyword construction would have cached them.
    item = new_object(MemoryItem, workspace_id=workspace.pk, scope=scope, scope_id=scope_id,
                      type=type, content=content, status=Status.ACTIVE, lifecycle_status=lifecycle,
                      source_job_id=job.pk, sources=list(dict.fromkeys(sources)),
                      token_count_estimate=count_tokens(content), content_sha256=content_sha256,
                      content_size_bytes=content_size_bytes, **fields)
    MemoryItem.workspace.field.set_cached_value(item, workspace)
    MemoryItem.source_job.field.set_cached_value(item, job)
    version_preassign(item)
    return item


def _deprecate(*, workspace_id: str, snapshots: list[MemoryItem], status: str, lifecycle: str, now) -> None:
    """One UPDATE for the batch's deprecations (all to `status` and
    `lifecycle`), each item pointed at its new version. Written by hand: the
    ORM spent longer compiling the CASE than the database spent running it.
    The items are locked or were created in this transaction."""
    model = MemoryItem
    when = " ".join(["WHEN %s THEN %s"] * len(snapshots))
    updated_at = model._meta.get_field("updated_at").get_db_prep_save(now, connection)
    version = column(model, "version")
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table(model)} SET {column(model, 'status')} = %s, {column(model, 'lifecycle_status')} = %s, "  # noqa: S608
            f"{version} = {version} + 1, {column(model, 'updated_at')} = %s, "
            f"{column(model, 'current_version_id')} = CASE {column(model, 'id')} {when} END "
            f"WHERE {column(model, 'workspace')} = %s AND {column(model, 'id')} IN ({placeholders(len(snapshots))})",
            [status, lifecycle, updated_at,
             *(value for item in snapshots for value in (item.pk, item.current_version_id)),
             workspace_id, *(item.pk for item in snapshots)],
        )


def _lock_live(*, workspace_id: str, destination: Destination, keys: list[str], closing: list[str]
               ) -> list[MemoryItem]:
    """Lock and read the live facts of the fact scope with these keys and the
    open loops with these ids that are still active, in primary-key order (as
    `versioning.lock_memory_items` locks, so the two cannot deadlock). Written
    by hand: the ORM took longer to compile the OR than the database to run it."""
    params: list = [workspace_id]
    if keys:
        params += [destination.fact_scope, destination.fact_scope_id, MemoryType.FACT, Status.ACTIVE,
                   *LIVE_LIFECYCLES, *keys]
    if closing:
        params += [*closing, MemoryType.OPEN_LOOP, Status.ACTIVE]
    sql = _lock_live_sql(len(keys), len(closing), connection.vendor)
    return model_objects(MemoryItem, sql, params)


@functools.lru_cache(maxsize=256)
def _lock_live_sql(keys: int, closing: int, vendor: str) -> str:
    model = MemoryItem
    either = []
    if keys:
        either.append(
            f"({column(model, 'scope')} = %s AND {column(model, 'scope_id')} = %s AND {column(model, 'type')} = %s "
            f"AND {column(model, 'status')} = %s AND {column(model, 'lifecycle_status')} IN "
            f"({placeholders(len(LIVE_LIFECYCLES))}) AND {column(model, 'fact_key')} IN ({placeholders(keys)}))")
    if closing:
        either.append(f"({column(model, 'id')} IN ({placeholders(closing)}) AND {column(model, 'type')} = %s "
                      f"AND {column(model, 'status')} = %s)")
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    return (f"SELECT {select_list(model)} FROM {table(model)} WHERE {column(model, 'workspace')} = %s "  # noqa: S608
            f"AND ({' OR '.join(either)}) ORDER BY {column(model, 'id')}{lock}")


def write_batch(
    *, job: MemoryJob, destination: Destination, result: ExtractionResult, turns: list[Turn], review: bool
) -> BatchCounts:
    """Micro summary, facts (a new value of a key deprecates the old one, linked
    by `updates`), open loops, resolutions; each fact and loop `derived_from`
    the batch's summary. With `review`, new items start `pending` and
    replace only values still pending; an approved value is replaced when
    its successor is approved.

    Relies on the caller's transaction; the live facts and loops it replaces
    or closes are locked by the read that finds them."""
    workspace = job.workspace
    actor = Actor.for_job(job.pk)
    lifecycle = LifecycleStatus.PENDING if review else LifecycleStatus.ACTIVE
    counts = BatchCounts()
    if not (result.summary.strip() or result.facts or result.open_loops or result.resolutions):
        return counts
    common = {"workspace": workspace, "job": job, "lifecycle": lifecycle}
    batch_ids = [t.message_id for t in turns]
    micro = _new_item(
        **common, scope=destination.scope, scope_id=destination.scope_id, type=MemoryType.SUMMARY,
        content=result.summary.strip() or "-", sources=result.summary_sources or batch_ids,
        summary_tier=SummaryTier.MICRO, importance=MICRO_IMPORTANCE, confidence=MICRO_CONFIDENCE,
        source_message_id=turns[-1].message_id,
        coverage_start_floor_no=turns[0].floor_no, coverage_end_floor_no=turns[-1].floor_no,
        derived_from_count=len(turns),
    )
    new_items: list[MemoryItem] = [micro]
    edges: list[tuple[str, str, str]] = []
    deprecate: list[str] = []

    # One locked read of the live facts of every key this batch states and of
    # the existing open loops it closes (a loop opened in this batch is named
    # by its ref and needs no read).
    keys = {normalize_fact_key(fact.key) for fact in result.facts}
    new_refs = {loop.ref for loop in result.open_loops}
    closing = [r.target for r in result.resolutions if r.target not in new_refs]
    locked: dict[str, MemoryItem] = {}
    current_by_key: dict[str, list[MemoryItem]] = {}
    if keys or closing:
        for item in _lock_live(workspace_id=workspace.pk, destination=destination, keys=sorted(keys),
                               closing=closing):
            locked[item.pk] = item
            if item.type == MemoryType.FACT:
                current_by_key.setdefault(item.fact_key, []).append(item)
        for current in current_by_key.values():
            current.sort(key=lambda item: item.created_at)
    for fact in result.facts:
        key = normalize_fact_key(fact.key)
        current = current_by_key.get(key, [])
        if any(item.content == fact.content for item in current):
            counts.facts_unchanged += 1  # same key, same value: nothing new
            continue
        new = _new_item(
            **common, scope=destination.fact_scope, scope_id=destination.fact_scope_id, type=MemoryType.FACT,
            content=fact.content, sources=fact.message_ids, fact_key=key, importance=fact.importance,
            confidence=fact.confidence, source_message_id=fact.message_id, source_floor_id=str(fact.floor_no),
        )
        new_items.append(new)
        counts.facts += 1
        edges.append((new.pk, micro.pk, Relation.DERIVED_FROM))
        # Under review an approved value stays in force until its pending
        # replacement is approved (`supersession`): a rejected correction
        # must leave it as it was. An earlier pending value is replaced now.
        approved = [old for old in current if review and old.lifecycle_status == LifecycleStatus.ACTIVE]
        for old in current:
            if old in approved:
                continue
            deprecate.append(old.pk)
            edges.append((new.pk, old.pk, Relation.UPDATES))
            counts.facts_updated += 1
        # A later fact of the same key in this batch replaces this one.
        current_by_key[key] = [*approved, new]

    refs: dict[str, str] = {}
    for loop in result.open_loops:
        item = _new_item(
            **common, scope=destination.fact_scope, scope_id=destination.fact_scope_id, type=MemoryType.OPEN_LOOP,
            content=loop.content, sources=loop.message_ids, importance=loop.importance, confidence=LOOP_CONFIDENCE,
            source_message_id=loop.message_id, source_floor_id=str(loop.floor_no),
            due_date=loop.due_date,
        )
        new_items.append(item)
        refs[loop.ref] = item.pk
        counts.open_loops += 1
        edges.append((item.pk, micro.pk, Relation.DERIVED_FROM))

    new_loop_ids = set(refs.values())
    targets = [refs.get(r.target, r.target) for r in result.resolutions]
    for target in dict.fromkeys(targets):
        if target in new_loop_ids or (target in locked and locked[target].type == MemoryType.OPEN_LOOP):
            edges.append((micro.pk, target, Relation.RESOLVES))
            deprecate.append(target)
            counts.resolved += 1
        # else: closed meanwhile, or an id the model made up

    # Versions: `created` for every new item, then `modified` for each item
    # deprecated (a loop opened and closed in this batch gets both), in one INSERT.
    versions = versions_build(items=new_items, operation=VersionOperation.CREATED, actor=actor, preassigned=True)
    by_id = {item.pk: item for item in new_items}
    deprecated_ids = list(dict.fromkeys(deprecate))
    deprecated = [by_id.get(pk) or locked[pk] for pk in deprecated_ids]
    earlier: list[MemoryItem] = []  # deprecated items stored before this batch: the UPDATE's
    if deprecated:
        # The state a `deprecated` status takes from active, as every other
        # status write decides it.
        status, lifecycle = resolve_statuses(current_status=Status.ACTIVE, current_lifecycle=None,
                                             status=Status.DEPRECATED, lifecycle=None, actor=actor)
        now = timezone.now()
        # An item this batch both creates and deprecates (a task opened and
        # closed, a value stated twice) is changed as it is and inserted as it
        # ends (its `created` version is built already): an UPDATE of a row
        # just inserted costs the database the row and every index entry
        # again. An earlier item is changed in a copy, for the UPDATE below.
        ended = [item if item.pk in by_id else copy.copy(item) for item in deprecated]
        for item in ended:
            item.status, item.lifecycle_status = status, lifecycle
            item.version += 1
            item.updated_at = now
        versions += versions_build(items=ended, operation=VersionOperation.MODIFIED, actor=actor)
        earlier = [item for item in ended if item.pk not in by_id]
    insert_objects(new_items)
    insert_objects(versions)
    memory_entries_rebuild(new_items, new=True)
    if earlier:
        _deprecate(workspace_id=workspace.pk, snapshots=earlier, status=status, lifecycle=lifecycle, now=now)
    counts.summaries = 1
    counts.writes = BatchWrites(items=new_items, deprecated_ids=deprecated_ids)
    if edges:
        insert_rows(MemoryEdge, EDGE_COLUMNS, [(new_edge_id(), workspace.pk, a, b, r) for a, b, r in edges],
                    ignore_conflicts=True)
        counts.edges = len(edges)
    return counts
