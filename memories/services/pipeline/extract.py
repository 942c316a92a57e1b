"""Extraction and rebuild of a branch scope, in bounded batches of floors."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.actors import Actor
from conversations.selectors.branches import branch_get, branch_last_floor_no, branch_view
from conversations.selectors.conversations import conversation_get
from conversations.selectors.messages import branch_message_rows
from conversations.services import branch_mark_processed, branch_processed_reset, conversation_update
from memories.extraction.types import ExtractionInput, ExtractionResult, KnownFact, OpenLoopRef, Turn, Usage
from memories.llm import get_provider
from memories.llm.tokens import content_text, count_tokens
from memories.models import JobKind, MemoryItem, MemoryJob, MemoryType, MemoryVersion, Scope, ScopeState
from memories.recall.analysis import query_terms
from memories.recall.fulltext import scope_statistics, shortlist
from memories.recall.index import embedding_queue, memory_scope_token, passage_entries_add, passages_indexed
from memories.recall.ranking import bm25_scores
from memories.services.items_batch import memory_items_delete
from memories.services.jobs import job_progress, memory_job_checkpoint, memory_job_enqueue
from memories.services.pipeline.writes import BatchWrites, Destination, destination_for, live_items, write_batch
from memories.services.scopes import lock_scope_state, parse_branch_scope_id, scope_refresh_totals
from memory_project.db import statement_pipeline

# What a batch shows the model of the scope's memory so far: enough for a
# model to reuse keys and close tasks, bounded so a prompt never grows with
# the conversation.
KNOWN_FACTS_LIMIT = 200
OPEN_LOOPS_LIMIT = 100
# Floors an in-process provider extracts and writes in one transaction (in
# batches of MEMORY_EXTRACT_BATCH_FLOORS). A catch-up job paid about 15
# statements and a commit per 50-floor batch beyond its writes, as much again
# as the batch's extraction; four batches to a commit hold the SQLite write
# lock for about a tenth of a second.
IN_PROCESS_FLOORS_PER_COMMIT = 200
# On PostgreSQL five times as many: its transaction takes row locks only, the
# conversation's at the end of a commit's work, so a longer one holds up no
# append (SQLite's one write lock would); a 2,000-floor catch-up ran 10-20%
# faster.
IN_PROCESS_FLOORS_PER_COMMIT_POSTGRESQL = 1000
# Rebuild deletes machine-written items through the batch service, at most
# this many per call (its per-call maximum).
DELETE_CHUNK = 100
# A network model is paid by the prompt token, every call: a batch's prompt
# carries only the known facts and open tasks its turns could touch, found
# through the recall index by the batch's own words (at most these many),
# plus the few newest of each (a correction or a bare "done" refers to what
# was said last) and the user's name.
PROMPT_FACTS = 24
PROMPT_LOOPS = 12
PROMPT_NEWEST_FACTS = 4
PROMPT_NEWEST_LOOPS = 3
# Words of a batch looked up in the index (its distinct terms, first seen first).
PROMPT_LOOKUP_TERMS = 200


def job_branch(job: MemoryJob):

    conversation_id, branch_name = parse_branch_scope_id(job.scope_id)
    conversation = conversation_get(workspace=job.workspace, external_id=conversation_id)
    branch = branch_get(conversation=conversation, name=branch_name) if conversation else None
    return conversation, branch


class _LiveMemory:
    """The scope's latest live facts and open loops, newest first, as each
    batch's input shows them (at most `KNOWN_FACTS_LIMIT` and
    `OPEN_LOOPS_LIMIT`).

    Read once per commit, then carried from batch to batch with what each
    batch wrote (`record`): on PostgreSQL a read right after a batch's writes
    waited for the database to finish them before the next batch's
    extraction could start, where now the two overlap. The lists are the ones
    a read would give, except for what another writer commits meanwhile,
    which the next commit's read brings in (the batch's locked read of the
    keys it writes still sees it). A list that was full and lost an entry is
    read again: the entry after the limit belongs in it now."""

    def __init__(self, job: MemoryJob, destination: Destination) -> None:
        # The same two statements with the same parameters all job long:
        # compiled once (compiling them cost more than running them).
        facts = live_items(workspace=job.workspace, scope=destination.fact_scope,
                           scope_id=destination.fact_scope_id, type=MemoryType.FACT)
        loops = live_items(workspace=job.workspace, scope=destination.fact_scope,
                           scope_id=destination.fact_scope_id, type=MemoryType.OPEN_LOOP)
        self._facts_read = (facts.order_by("-created_at").values_list("id", "fact_key", "content")
                            [:KNOWN_FACTS_LIMIT].query.sql_with_params())
        self._loops_read = (loops.order_by("-created_at").values_list("id", "content", "source_floor_id")
                            [:OPEN_LOOPS_LIMIT].query.sql_with_params())
        self._facts: list[tuple] | None = None
        self._loops: list[tuple] | None = None

    def forget(self) -> None:
        """Read the database again before the next batch (a new commit)."""
        self._facts = self._loops = None

    def facts(self) -> list[tuple]:
        """(id, fact_key, content) of the latest live facts, newest first."""
        if self._facts is None:
            self._facts = self._read(self._facts_read)
        return self._facts

    def loops(self) -> list[tuple]:
        """(id, content, source_floor_id) of the latest live open loops, newest first."""
        if self._loops is None:
            self._loops = self._read(self._loops_read)
        return self._loops

    def record(self, written: BatchWrites) -> None:
        """What a batch wrote: its new facts and loops first, what it deprecated gone."""
        gone = set(written.deprecated_ids)
        new = [item for item in reversed(written.items) if item.pk not in gone]
        self._facts = _carried(self._facts, gone, KNOWN_FACTS_LIMIT, [
            (item.pk, item.fact_key, item.content) for item in new if item.type == MemoryType.FACT])
        self._loops = _carried(self._loops, gone, OPEN_LOOPS_LIMIT, [
            (item.pk, item.content, item.source_floor_id) for item in new if item.type == MemoryType.OPEN_LOOP])

    @staticmethod
    def _read(statement: tuple[str, tuple]) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(*statement)
            return cursor.fetchall()


def _carried(rows: list[tuple] | None, gone: set[str], limit: int, new: list[tuple]) -> list[tuple] | None:
    """`rows` after a batch: `new` first, `gone` removed; None (read again)
    when they were not read yet, or were full and lost one."""
    if rows is None:
        return None
    kept = [row for row in rows if row[0] not in gone]
    if len(rows) >= limit and len(kept) < len(rows):
        return None
    return (new + kept)[:limit]


def _touched(job: MemoryJob, destination: Destination, turns: list[Turn]) -> dict[str, float]:
    """The memories of the destination's fact scope that share words with the
    batch, by BM25 over the recall index: {memory id: score}."""

    terms = query_terms("\n".join(t.text for t in turns))[:PROMPT_LOOKUP_TERMS]
    tokens = [memory_scope_token(job.workspace_id, destination.fact_scope, destination.fact_scope_id)]
    hits = shortlist(workspace_id=job.workspace_id, scope_tokens=tokens, terms=terms,
                     limit=4 * (PROMPT_FACTS + PROMPT_LOOPS))
    if not hits:
        return {}
    n_docs, avg_len = scope_statistics(workspace_id=job.workspace_id, scope_tokens=tokens)
    df = {t: sum(f" {t} " in hit.terms for hit in hits) for t in terms}
    scores = bm25_scores(hits, terms, n_docs=max(n_docs, len(hits)), avg_len=avg_len, df=df)
    return {hit.memory_id: score for hit, (score, _held) in zip(hits, scores, strict=True) if hit.memory_id and score > 0}


def _prompt_memory(job: MemoryJob, destination: Destination, turns: list[Turn], live: _LiveMemory
                   ) -> tuple[list[tuple], list[tuple]]:
    """The known facts and open tasks a network model's prompt carries for
    this batch, oldest first: those the batch's words touch (best first, up
    to PROMPT_FACTS / PROMPT_LOOPS), the newest few and the user's name."""
    touched = _touched(job, destination, turns)
    facts, loops = live.facts(), live.loops()

    def pick(rows: list[tuple], limit: int, newest: int, always) -> list[tuple]:
        chosen = {row[0]: row for row in rows[:newest]}
        chosen.update((row[0], row) for row in rows if always(row))
        for row in sorted((r for r in rows if r[0] in touched), key=lambda r: -touched[r[0]]):
            if len(chosen) >= limit + newest:
                break
            chosen.setdefault(row[0], row)
        return [row for row in reversed(rows) if row[0] in chosen]

    return (pick(facts, PROMPT_FACTS, PROMPT_NEWEST_FACTS, lambda row: (row[1] or "") == "user.name"),
            pick(loops, PROMPT_LOOPS, PROMPT_NEWEST_LOOPS, lambda row: False))


def _input(job: MemoryJob, state: ScopeState, conversation, turns: list[Turn], live: _LiveMemory,
           destination: Destination, *, chosen: bool) -> ExtractionInput:
    """The batch's input. `chosen`: only the facts and tasks the batch could
    touch (a network model's prompt); else the latest live ones (an
    in-process extractor pays nothing for them)."""
    previous = state.rolling_summary
    if not previous and job.scope_id.endswith(',"main"]'):
        summary = (conversation.metadata or {}).get("summary")
        previous = summary if isinstance(summary, str) else ""
    if chosen:
        facts, loops = _prompt_memory(job, destination, turns, live)
    else:
        facts, loops = list(reversed(live.facts())), list(reversed(live.loops()))
    return ExtractionInput(
        previous_summary=previous,
        known_facts=[KnownFact(id=pk, key=key or "", content=content) for pk, key, content in facts],
        open_loops=[
            OpenLoopRef(id=pk, content=content, floor_no=int(floor) if (floor or "").isdigit() else None)
            for pk, content, floor in loops
        ],
        turns=turns,
        previous_summary_sources=list(state.rolling_sources or []),
    )


def _extract_batch(provider, job: MemoryJob, state: ScopeState, conversation, messages, live: _LiveMemory,
                   destination: Destination) -> tuple[list[Turn], ExtractionResult, Usage]:
    turns = [Turn(floor_no=m.floor_no, message_id=m.pk, role=m.role, text=content_text(m.content),
                  created_at=m.created_at) for m in messages]
    data = _input(job, state, conversation, turns, live, destination, chosen=not provider.in_process)
    result, usage = provider.extract(data)
    return turns, result, usage


def _token_window(messages, max_tokens: int):
    """(the first messages up to `max_tokens` of text (at least one), their
    tokens): a network model's batch, sized by what it costs rather than by
    a count of floors."""
    total = 0
    for index, message in enumerate(messages):
        tokens = count_tokens(content_text(message.content))
        if total + tokens > max_tokens and index:
            return messages[:index], total
        total += tokens
    return messages, total


def extract_run(job: MemoryJob, *, whole: bool = False) -> dict:
    """Read the scope's floors after its checkpoint, batch by batch, until none
    are left. A batch committed by an earlier (killed) run of this job is not
    read again: the checkpoint moved with it.

    A network model is called outside any transaction, and each batch commits
    on its own. An in-process provider is called inside the write
    transaction, `IN_PROCESS_FLOORS_PER_COMMIT` floors' batches to a commit (on
    PostgreSQL `IN_PROCESS_FLOORS_PER_COMMIT_POSTGRESQL`):
    each batch still reads what the one before it wrote, so the memories are
    the same; what a commit costs beyond its writes (the scope's, branch's,
    conversation's and job's rows, the commit itself) is paid once.

    With a network model a job ends, after its first batch, at a tail that
    was appended while it ran and is smaller than the extraction threshold,
    unless `whole` (a rebuild reads every floor)."""

    conversation, branch = job_branch(job)
    if branch is None:
        return {"skipped": "conversation or branch no longer exists"}
    view = branch_view(branch=branch)
    # The scope's state row is made by the branch's first append (after its
    # commit); a job queued any other way makes it here.
    with transaction.atomic():
        lock_scope_state(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id, conversation=conversation,
                         branch=branch)
    provider = get_provider()
    # Floors appended after this point came in while the job ran (see below).
    last_at_start = branch_last_floor_no(branch_id=branch.pk) if not (whole or provider.in_process) else 0
    review = job.workspace.requires_review
    batch_size = max(1, settings.MEMORY_EXTRACT_BATCH_FLOORS)
    floors_per_commit = (IN_PROCESS_FLOORS_PER_COMMIT_POSTGRESQL if connection.vendor == "postgresql"
                         else IN_PROCESS_FLOORS_PER_COMMIT)
    per_commit = max(1, floors_per_commit // batch_size) if provider.in_process else 1
    batches = 0
    progressed = False
    live_memory: dict[Destination, _LiveMemory] = {}
    while True:
        # A commit just made refreshed the job's heartbeat with its progress.
        memory_job_checkpoint(job=job, heartbeat=not progressed)
        progressed = False
        # Read again every time: an erasure may have cleared the rolling summary meanwhile.
        state = ScopeState.objects.get(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id)
        after = state.last_processed_floor_no
        read_under = (state.pk, state.erasure_generation)
        messages = branch_message_rows(branch=view, lower=after, limit=batch_size * per_commit)
        if not messages:
            break
        conversation.refresh_from_db(fields=["metadata", "user_id"])
        destination = destination_for(scope=job.scope, scope_id=job.scope_id, user_id=conversation.user_id)
        if destination not in live_memory:
            live_memory[destination] = _LiveMemory(job, destination)
        live = live_memory[destination]
        live.forget()
        groups = [messages[start:start + batch_size] for start in range(0, len(messages), batch_size)]
        # A network model is called outside any transaction (it may take
        # seconds), for the one batch of this commit; an in-process one is
        # called per batch inside it, each batch reading what the last wrote.
        extracted = None
        if not provider.in_process:
            assert len(groups) == 1, "a network provider's commit holds one batch"
            messages, tokens = _token_window(messages, max(1, settings.MEMORY_EXTRACT_BATCH_TOKENS))
            if (batches and not whole and messages[0].floor_no > last_at_start
                    and tokens < settings.MEMORY_EXTRACT_MIN_TOKENS and len(messages) < batch_size):
                # A conversation still being appended to: the tail that came
                # in while this job ran waits for its own threshold (or the
                # idle sweep) instead of costing a call of a few turns each.
                break
            groups = [messages]
            extracted = _extract_batch(provider, job, state, conversation, messages, live, destination)
        with transaction.atomic():
            state = lock_scope_state(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id)
            if state.last_processed_floor_no != after:
                continue  # another delivery of this job wrote these batches meanwhile
            if (state.pk, state.erasure_generation) != read_under:
                # An erasure reached the scope since its floors (or its
                # rolling summary) were read: what was made of them may quote
                # erased text, so it is dropped and the floors read again.
                continue
            totals: dict[str, int] = {}
            input_tokens = output_tokens = 0
            summary_update = None
            # A batch's writes need no answer: sent without waiting for each,
            # one round trip per batch (its first read waits for them all).
            with statement_pipeline():
                for group in groups:
                    turns, result, usage = (extracted if extracted is not None
                                            else _extract_batch(provider, job, state, conversation, group, live,
                                                                destination))
                    counts = write_batch(job=job, destination=destination, result=result, turns=turns, review=review)
                    live.record(counts.writes)
                    # With the batch's writes, not once for the commit: the
                    # database indexes them while the next batch is extracted
                    # (on PostgreSQL 1,000 floors' passages at the end made
                    # the commit wait for them).
                    _index_passages(job.workspace_id, branch, conversation.pk, group)
                    # The state (and the conversation's summary) as the next batch reads it; saved once below.
                    state.last_processed_floor_no = turns[-1].floor_no
                    state.rolling_summary = result.rolling_summary
                    state.rolling_sources = list(dict.fromkeys([*state.rolling_sources, *result.rolling_sources])) \
                        if result.rolling_summary else []
                    state.summarized_until = turns[-1].message_id
                    # Under review the summary quotes unapproved extractions:
                    # it stays in the scope state, for operators only
                    # (memories.selectors.summaries).
                    if branch.name == "main" and result.rolling_summary and not review:
                        summary_update = {"summary": result.rolling_summary, "summarized_until": turns[-1].message_id}
                        conversation.metadata = {**(conversation.metadata or {}), **summary_update}
                    # A network model's calls and cached prompt tokens, where it reports them.
                    paid = {"llm_calls": usage.calls, "cached_input_tokens": usage.cached_tokens}
                    for name, value in {**counts.as_dict(), "batches": 1, "floors": len(turns),
                                        **{k: v for k, v in paid.items() if v}}.items():
                        totals[name] = totals.get(name, 0) + value
                    input_tokens += usage.input_tokens
                    output_tokens += usage.output_tokens
            state.last_extracted_at = timezone.now()
            state.save(update_fields=["last_processed_floor_no", "last_extracted_at", "rolling_summary",
                                      "rolling_sources", "summarized_until", "updated_at"])
            # The branch's pending work (appended minus processed) moves with what was written.
            branch_mark_processed(branch_id=branch.pk, through_floor_no=state.last_processed_floor_no)
            if summary_update:
                conversation_update(workspace=job.workspace, external_id=conversation.external_id,
                                    metadata=summary_update)
            job_progress(job, counts=totals, input_tokens=input_tokens, output_tokens=output_tokens,
                         provider=provider.name)
        batches += len(groups)
        progressed = True
        del messages, groups
    state = ScopeState.objects.get(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id)
    # Floors counted as appended but deleted before they were read: the branch
    # is caught up through its last floor if, read after that floor number,
    # nothing is left after the checkpoint.
    last_floor_no = branch_last_floor_no(branch_id=branch.pk)
    if not branch_message_rows(branch=view, lower=state.last_processed_floor_no, limit=1):
        branch_mark_processed(branch_id=branch.pk, through_floor_no=last_floor_no)
    scope_refresh_totals(state=state)
    if batches:
        _after_extraction(job, state)
    return {"last_processed_floor_no": state.last_processed_floor_no}


def _index_passages(workspace_id: int, branch, conversation_id: int, messages) -> None:
    """Index the batch's messages as recall passages, those not indexed yet:
    an append indexes its messages as it commits (the index keeps them in
    step with edits from then on), so this adds only what that missed (a
    receiver that failed, messages appended before it existed). A fork reads
    its parent's floors too; those are the parent's, indexed once."""
    indexed = passages_indexed(workspace_id=workspace_id, message_ids=[m.pk for m in messages])
    passage_entries_add(workspace_id=workspace_id, messages=[m for m in messages if m.pk not in indexed],
                        conversation_id=conversation_id)


def _after_extraction(job: MemoryJob, state: ScopeState) -> None:
    """Compaction as soon as enough micro summaries wait (not only on the
    maintenance beat), and vectors for what this job indexed and for the
    passages its messages' appends indexed (`index.embedding_queue`, once
    per transaction)."""

    if state.micro_count >= max(1, settings.MEMORY_COMPACT_MIN_MICROS):
        memory_job_enqueue(workspace=job.workspace, kind=JobKind.COMPACT, scope=job.scope, scope_id=job.scope_id)
    embedding_queue(job.workspace_id)


def machine_written_ids(*, workspace, scope: str, scope_id: str) -> list[str]:
    """Items of the scope the pipeline wrote and nobody has edited since: their
    current version's actor is a job. Operator-written or operator-edited items
    are kept by a rebuild."""
    job_versions = MemoryVersion.objects.filter(workspace=workspace, actor_type="job").values("pk")
    return list(
        MemoryItem.objects.filter(workspace=workspace, scope=scope, scope_id=scope_id, source_job__isnull=False,
                                  current_version_id__in=job_versions).values_list("pk", flat=True)
    )


def rebuild_run(job: MemoryJob) -> dict:
    """Remove the scope's machine-written memories, reset its checkpoint to 0,
    then extract from floor 1. The reset commits with a mark on the job, so a
    rerun after a crash continues the extraction instead of resetting again.
    With `from_floor_no` in its payload (lineage erasure), only the floors from
    there on, a job `memory_job_execute` hands to `lineage.rederive_run`."""
    conversation, branch = job_branch(job)
    if branch is None:
        return {"skipped": "conversation or branch no longer exists"}
    removed = 0
    if not job.payload.get("reset_done"):
        actor = Actor.for_job(job.pk)
        with transaction.atomic():
            state = lock_scope_state(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id,
                                     conversation=conversation)
            ids = machine_written_ids(workspace=job.workspace, scope=job.scope, scope_id=job.scope_id)
            for start in range(0, len(ids), DELETE_CHUNK):
                removed += memory_items_delete(workspace=job.workspace, actor=actor,
                                               ids=ids[start:start + DELETE_CHUNK]).counts["deleted"]
            state.last_processed_floor_no = 0
            state.rolling_summary = ""
            state.summarized_until = ""
            state.save(update_fields=["last_processed_floor_no", "rolling_summary", "summarized_until", "updated_at"])
            branch_processed_reset(branch_id=branch.pk)
            if branch.name == "main":
                conversation_update(workspace=job.workspace, external_id=conversation.external_id,
                                    metadata={"summary": None, "summarized_until": None})
            job.payload = {**job.payload, "reset_done": True}
            MemoryJob.objects.filter(pk=job.pk).update(payload=job.payload, result={"removed": removed})
            job.result = {"removed": removed}
    return {**extract_run(job, whole=True), "removed": removed or job.result.get("removed", 0)}


__all__ = ["extract_run", "rebuild_run", "Scope"]
