"""Assemble a prompt for a conversation (spec 002 + memory).

1. The last `max_messages` messages of the branch, not counting system ones.
2. Per-message truncation, on copies: stored messages are never changed.
3. The system message first: the caller's `system`, stored system messages in
   the window, the rolling summary, the recalled memories and passages (one
   token budget, see `selection`) and the attached stores' instructions.
4. `temporary_messages` appended at the end, never stored.

Only reads, apart from stamping `last_used_at` on the memories injected.
"""

from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils import timezone

import memory_client.formats as formats
from conversations.selectors.branches import MAIN_BRANCH, branch_view, conversation_branch_get_or_404
from conversations.selectors.messages import MessageRow, branch_message_rows
from conversations.selectors.references import system_messages
from memories.llm.tokens import content_text, count_content_tokens, count_tokens
from memories.models import Scope
from memories.recall.candidates import RecallScope
from memories.recall.dense import dense_similarities
from memories.recall.index import memory_scope_token, passage_scope_token
from memories.recall.selection import Selection, recall_select
from memories.resources.selectors import conversation_resource_list, stores_attached
from memories.selectors.summaries import visible_rolling_summary
from memories.services.items_batch import memory_items_mark_used, used_stamp_is_stale
from memories.services.scopes import branch_scope_id

if TYPE_CHECKING:
    from conversations.models import Message

TRUNCATION_MARK = "…"
# History is read newest first, a page of the messages still missing (at
# most this many rows) at a time, until enough non-system messages are found;
# system messages in between are lifted. A page reads no row it cannot keep.
HISTORY_PAGE = 50
MAX_SYSTEM_MESSAGES = 10

# With memories selected beside it, the rolling summary takes at most this
# share of `memory_token_budget`; the memories the rest.
SUMMARY_BUDGET_SHARE = 0.4
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
_WORD_RE = re.compile(r"\w+")
# A summary's clauses: its sentences and the items of its "Facts: a; b" lists.
_CLAUSE_RE = re.compile(r".+?(?:[.!?;](?:\s+|$)|[。！？；]|$)", re.S)
_LABEL_RE = re.compile(r"^(\W*[A-Z][a-z]+(?: [a-z]+)?:\s+)")
LABELS = {
    "summary": "Conversation summary",
    "stores": "Attached memory stores",
}


@dataclass
class ContextRequest:
    branch: str | None = None
    max_messages: int = 10
    truncate_chars: int | None = None
    system: str | None = None
    temporary_messages: list[dict[str, Any]] | None = None
    query: str | None = None
    strategy: str = "balanced"
    memory_token_budget: int = 1000
    include_memories: bool = True
    include_summary: bool = True
    format: str = "raw"


def _truncate(content: Any, limit: int) -> Any:
    if isinstance(content, str):
        return content if len(content) <= limit else content[:limit] + TRUNCATION_MARK
    if isinstance(content, list):
        out = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str) and len(block["text"]) > limit:
                block = {**block, "text": block["text"][:limit] + TRUNCATION_MARK}
            out.append(block)
        return out
    return content


def _history(view, max_messages: int) -> tuple[list[MessageRow], list[Message]]:
    """(the last `max_messages` non-system messages oldest first, the branch's
    system messages). One keyset query per page, one for system messages."""
    kept: list[MessageRow] = []
    upper: int | None = None  # the highest floor the next page may read
    while len(kept) < max_messages:
        wanted = min(HISTORY_PAGE, max_messages - len(kept))
        page = branch_message_rows(branch=view, upper=upper, limit=wanted, ascending=False)
        kept.extend(m for m in page if m.role != "system")
        if len(page) < wanted:
            break
        upper = page[-1].floor_no - 1
    # System messages set up the conversation wherever they were stored: all of
    # the branch's (the latest few) go first, none counts against the window.
    systems = [
        m for m in system_messages(branch_ids=[s.branch_id for s in view.segments], limit=MAX_SYSTEM_MESSAGES)
        if view.shows(m)
    ]
    return list(reversed(kept)), list(reversed(systems))


def _as_dict(message: MessageRow, truncate_chars: int | None) -> dict[str, Any]:
    content = copy.deepcopy(message.content)
    if truncate_chars:
        content = _truncate(content, truncate_chars)
    return {"id": message.pk, "role": message.role, "content": content, "metadata": message.metadata or {},
            "floor_no": message.floor_no}


def _memory_scopes(scopes: list[tuple[str, str]]) -> tuple[tuple[str, str | None], ...]:
    # Global is every global memory, whatever its scope id.
    return tuple((scope, None if scope == Scope.GLOBAL else scope_id) for scope, scope_id in scopes)


def conversation_recall_scope(*, conversation, view, branch_scope: str | None,
                              exclude_message_ids: frozenset[str] = frozenset()) -> RecallScope:
    """What a conversation's context may recall. With a branch: global, the
    conversation's user, that branch and the conversation's floors; without
    one (spec 003's older callers): global, user, chat, floors and the main
    line's branch scope (the pipeline extracts into branch scopes)."""
    ws = conversation.workspace_id
    cid = conversation.external_id
    scopes: list[tuple[str, str]] = [(Scope.GLOBAL, "")]
    if conversation.user_id:
        scopes.append((Scope.USER, conversation.user_id))
    if branch_scope is not None:
        scopes.append((Scope.BRANCH, branch_scope))
    else:
        scopes += [(Scope.CHAT, cid), (Scope.BRANCH, branch_scope_id(cid, MAIN_BRANCH))]
    tokens = [memory_scope_token(ws, scope, scope_id) for scope, scope_id in scopes]
    tokens.append(memory_scope_token(ws, Scope.FLOOR, cid))
    segments = {s.branch_id: s for s in view.segments}

    def shows(branch_id: str, floor_no: int) -> bool:
        segment = segments.get(branch_id)
        return segment is not None and floor_no > segment.low and (segment.high is None or floor_no <= segment.high)

    return RecallScope(workspace_id=ws, memory_tokens=tokens, passage_token=passage_scope_token(conversation.pk),
                       shows=shows, exclude_message_ids=exclude_message_ids,
                       memory_scopes=_memory_scopes(scopes), floor_conversation=conversation.pk)


def user_recall_scope(*, workspace, user_id: str | None) -> RecallScope:
    """Recall outside a conversation: global memories and, with a user, theirs."""
    scopes: list[tuple[str, str]] = [(Scope.GLOBAL, "")]
    if user_id:
        scopes.append((Scope.USER, user_id))
    return RecallScope(workspace_id=workspace.pk, memory_scopes=_memory_scopes(scopes),
                       memory_tokens=[memory_scope_token(workspace.pk, s, i) for s, i in scopes])


# The query is analysed term by term (stems, n-grams, index lookups, an
# embedding), so its size is bounded before analysis: an explicit query is
# refused past MAX_QUERY_CHARS (the serializer); the default one, the latest
# user message, may be megabytes and is cut to its first MAX_QUERY_CHARS
# characters, MAX_QUERY_BYTES of UTF-8 and MAX_QUERY_TERMS words.
MAX_QUERY_CHARS = 4000
MAX_QUERY_BYTES = 8192
MAX_QUERY_TERMS = 200


def bounded_query(query: str) -> str:
    query = query[:MAX_QUERY_CHARS]
    if len(query) * 4 > MAX_QUERY_BYTES:
        query = query.encode("utf-8")[:MAX_QUERY_BYTES].decode("utf-8", errors="ignore")
    words = query.split(maxsplit=MAX_QUERY_TERMS)
    if len(words) > MAX_QUERY_TERMS:
        query = " ".join(words[:MAX_QUERY_TERMS])
    return query


def recall(*, workspace, scope: RecallScope, query: str, strategy: str, budget: int) -> Selection:
    """Select, then stamp `last_used_at` on the memories chosen."""

    query = bounded_query(query)

    selection = recall_select(scope=scope, query=query, strategy=strategy, budget=budget,
                              dense=dense_similarities(workspace_id=scope.workspace_id))
    # Most calls inject what the previous turn did, stamped moments ago: no
    # UPDATE is sent for those.
    at = timezone.now()
    used = [c.key for c in selection.injected
            if c.memory is not None and used_stamp_is_stale(c.memory["last_used_at"], at)]
    if used:
        memory_items_mark_used(workspace=workspace, ids=used, at=at)
    return selection


def selection_report(selection: Selection, *, scopes: list[str], scope_id: str | None) -> dict[str, Any]:
    return {
        "strategy": selection.strategy,
        "query": selection.query,
        "budget": selection.budget,
        "tokens_used": selection.tokens_used,
        "candidates": selection.candidates,
        "scopes": scopes,
        "scope_id": scope_id,
        "injected": [c.explain(with_content=True) for c in selection.injected],
        "omitted": [c.explain(with_content=False) for c in selection.omitted[:50]],
        "omitted_count": len(selection.omitted),
    }


def context_assemble(*, workspace, external_id: str, request: ContextRequest) -> dict[str, Any]:
    started = time.perf_counter()
    # Whether stores are attached comes with the branch, so most reads skip that query.
    conversation, branch = conversation_branch_get_or_404(workspace=workspace, external_id=external_id,
                                                          name=request.branch or MAIN_BRANCH,
                                                          annotations={"has_resources": stores_attached()})
    view = branch_view(branch=branch)
    history, systems = _history(view, request.max_messages)
    messages = [_as_dict(m, request.truncate_chars) for m in history]
    temporary = [{"role": t["role"], "content": t["content"], "metadata": t.get("metadata") or {}}
                 for t in request.temporary_messages or []]

    query = request.query
    if query is None:
        latest = next((m.content for m in reversed(history) if m.role == "user"), "")
        # A cheap cut before the text is even joined (a content list of many parts).
        query = bounded_query(latest if isinstance(latest, str) else content_text(latest))

    sections: list[str] = []
    if request.system:
        sections.append(request.system)
    sections += [formats.system_text(s.content) for s in systems if formats.system_text(s.content).strip()]

    budget = request.memory_token_budget
    summary_text = ""
    if request.include_summary:
        # The rolling summary is memory too: it takes its tokens from
        # `memory_token_budget` (at most SUMMARY_BUDGET_SHARE of it when
        # memories are selected beside it), never on top of it.
        share = SUMMARY_BUDGET_SHARE if request.include_memories else 1.0
        summary_text = _clip_to_tokens(_rolling_summary(conversation, branch), int(budget * share),
                                       header=f"## {LABELS['summary']}\n")

    selection: Selection | None = None
    scope_id = branch_scope_id(conversation.external_id, branch.name) if request.branch else None
    if request.include_memories:
        scope = conversation_recall_scope(conversation=conversation, view=view, branch_scope=scope_id,
                                          exclude_message_ids=frozenset(m.pk for m in history))
        summary_tokens = _section_tokens(summary_text)
        selection = recall(workspace=workspace, scope=scope, query=query, strategy=request.strategy,
                           budget=max(0, budget - summary_tokens))
        # What the memories beside it already say is not said twice.
        summary_text = _without_repeats(summary_text, [c.memory["content"] for c in selection.injected
                                                       if c.memory is not None])
        # A label carried over can cost a token where it was saved elsewhere:
        # the two sections together never pass the budget.
        summary_text = _clip_to_tokens(summary_text, budget - selection.tokens_used - 1,
                                       header=f"## {LABELS['summary']}\n") if selection.text else summary_text
    if summary_text:
        sections.append(f"## {LABELS['summary']}\n{summary_text}")
    if selection is not None and selection.text:
        sections.append(selection.text)

    stores = []
    has_resources = conversation.has_resources is not False
    for attached in conversation_resource_list(conversation=conversation) if has_resources else ():
        store = attached.resource.memory_store
        stores.append({"memory_store_id": store.pk, "name": store.name, "description": store.description,
                       "access": attached.resource.access, "instructions": attached.resource.instructions,
                       "mount_path": attached.mount_path})
    if stores:
        lines = []
        for s in stores:
            line = f"- {s['name']} ({s['access']}, {s['mount_path']})"
            if s["description"]:
                line += f": {s['description']}"
            if s["instructions"]:
                line += f"\n  Instructions: {s['instructions']}"
            lines.append(line)
        sections.append(f"## {LABELS['stores']}\n" + "\n".join(lines))

    system_text = "\n\n".join(sections)
    all_messages = [*messages, *temporary]
    usage = {
        "system_tokens": count_tokens(system_text),
        "message_tokens": sum(count_content_tokens(m["content"]) for m in all_messages),
        "memory_tokens": selection.tokens_used if selection else 0,
        "summary_tokens": count_tokens(summary_text),
    }
    usage["total_tokens"] = usage["system_tokens"] + usage["message_tokens"]
    memory_report = None
    if selection is not None:
        scopes = ["global", "user", "branch", "floor", "passages"] if scope_id else \
            ["global", "user", "chat", "floor", "branch:main", "passages"]
        if not conversation.user_id:
            scopes.remove("user")
        memory_report = selection_report(selection, scopes=scopes, scope_id=scope_id)
    body: dict[str, Any] = {
        "conversation_id": conversation.external_id,
        "branch": branch.name,
        "format": request.format,
        "memory": memory_report,
        "summary": summary_text or None,
        "memory_stores": stores,
        "usage": usage,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    if request.format == "anthropic":
        wire = formats.to_anthropic(all_messages)
        body["system"] = system_text or None
        body["messages"] = wire["messages"]
    elif request.format == "openai":
        system_message = [{"role": "system", "content": system_text}] if system_text else []
        body["messages"] = system_message + formats.to_openai(all_messages)
    else:
        body["system"] = system_text or None
        body["messages"] = [{"role": "system", "content": system_text}] * bool(system_text) + all_messages
    return body


def _section_tokens(summary_text: str) -> int:
    """Tokens the summary's section takes in the system prompt, with the
    blank line that separates it from the memories (a merge at the seam is
    covered by the one token of slack)."""
    if not summary_text:
        return 0
    return count_tokens(f"## {LABELS['summary']}\n{summary_text}\n\n") + 1


def _clip_to_tokens(text: str, limit: int, *, header: str) -> str:
    """`text` cut at a sentence (or word) so that its section fits `limit` tokens."""
    if not text or _section_tokens(text) <= limit:
        return text
    if count_tokens(header) + 2 > limit:
        return ""
    sentences = _SENTENCE_RE.split(text)
    while len(sentences) > 1 and _section_tokens(" ".join(sentences)) > limit:
        sentences.pop()
    clipped = " ".join(sentences)
    while clipped and _section_tokens(clipped + " ...") > limit:
        clipped = clipped[: len(clipped) * 3 // 4].rsplit(" ", 1)[0] if " " in clipped else clipped[:-1]
    return clipped + " ..." if clipped else ""


def _normalized(text: str) -> str:
    return " ".join(_WORD_RE.findall(text.lower()))


_CHANGE_NOTE_RE = re.compile(r"\s*(?:\(changed from [^)]*\)|（原为[^）]*）)")


def _without_repeats(summary_text: str, injected: list[str]) -> str:
    """The summary without the clauses an injected memory already says (a
    fact the summary's "Facts:" list quotes, a micro summary's line). A
    dropped clause's label ("Facts: ") moves to the next clause kept."""
    if not summary_text or not injected:
        return summary_text
    said = [_normalized(text) for text in injected]
    kept: list[str] = []
    carry = ""
    for clause in _CLAUSE_RE.findall(summary_text):
        label_match = _LABEL_RE.match(clause)
        label = label_match.group(1) if label_match else ""
        # "User prefers aisle seats (changed from window seats)" is said by
        # the injected "User prefers aisle seats".
        body = _normalized(_CHANGE_NOTE_RE.sub("", clause[len(label):]))
        if body and any(body in other or (len(other) >= 0.6 * len(body) and other in body) for other in said):
            carry = label or carry
            continue
        kept.append(carry + clause if carry and not label else clause)
        carry = ""
    return "".join(kept).strip()


def _rolling_summary(conversation, branch) -> str:
    """The branch's rolling summary as a reader may see it: in a workspace that
    requires review, only what approved summaries say (`visible_rolling_summary`)."""
    return visible_rolling_summary(workspace=conversation.workspace, external_id=conversation.external_id,
                                   metadata=conversation.metadata, branch_name=branch.name)
