"""What a reviewer reads beside a memory awaiting review: the floors it was
extracted from and, for a memory drawn from one floor, a short excerpt of the
floor before it (the question its answer replies to). A summary names the
floors it covers and shows the first few of its sources, never a whole
conversation beside one floor. The floors of a page cost two queries."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from conversations.selectors.references import floor_labels, message_labels
from memories.admin.labels import TEXT_HEAD_CHARS, FloorRef, id_token, message_preview, short

# Sources read per memory (a macro summary may name hundreds).
MAX_SOURCES = 50
# A source's text when it is the only one, and when it is one of several.
ONE_SOURCE_CHARS = 280
SOURCE_CHARS = 120
# The floor before a single source: a short excerpt only.
BEFORE_CHARS = 120


@dataclass
class ReviewContext:
    sources: list[FloorRef] = field(default_factory=list)  # shown, in floor order
    hidden: int = 0  # sources found but not shown
    before: FloorRef | None = None
    coverage: tuple[int, int] | None = None
    named: int = 0  # source ids the memory names
    conversation_url: str = ""

    @property
    def gone(self) -> bool:
        return self.named > 0 and not self.sources


def _source_ids(item) -> list[str]:
    ids = [str(i) for i in (item.sources or []) if i]
    fallback = item.source_message_id or item.source_floor_id
    if not ids and fallback:
        ids = [fallback]
    if not ids and item.scope == "floor" and getattr(item, "scope_ref", item.scope_id):
        ids = [getattr(item, "scope_ref", item.scope_id)]
    return ids[:MAX_SOURCES]


def review_contexts(items, *, shown: int) -> dict[str, ReviewContext]:
    """The context of each item, `shown` source floors at most."""
    items = list(items)
    wanted = {item.pk: _source_ids(item) for item in items}
    all_ids = {i for ids in wanted.values() for i in ids}
    refs: dict[str, FloorRef] = {}
    for row in message_labels(message_ids=all_ids, head_chars=TEXT_HEAD_CHARS) if all_ids else []:
        refs[row[0]] = FloorRef(*row[1:7], text=message_preview(row[7], ONE_SOURCE_CHARS))
    contexts: dict[str, ReviewContext] = {}
    for item in items:
        found = sorted((refs[i] for i in wanted[item.pk] if i in refs), key=lambda f: (f.branch_id, f.floor_no))
        context = ReviewContext(named=len(wanted[item.pk]))
        if item.coverage_start_floor_no and item.coverage_end_floor_no:
            context.coverage = (item.coverage_start_floor_no, item.coverage_end_floor_no)
        if found:
            context.conversation_url = found[0].url
            cut = ONE_SOURCE_CHARS if len(found) == 1 else SOURCE_CHARS
            context.sources = [_cut(ref, cut) for ref in found[:shown]]
            context.hidden = len(found) - len(context.sources)
        contexts[item.pk] = context
    # The floor before a memory's single source, on its branch.
    places = {(c.sources[0].branch_id, c.sources[0].floor_no - 1)
              for c in contexts.values() if len(c.sources) == 1 and not c.coverage and c.sources[0].floor_no > 1}
    before = {(row[3], row[5]): FloorRef(*row[1:7], text=message_preview(row[7], BEFORE_CHARS))
              for row in floor_labels(places=places, head_chars=BEFORE_CHARS * 4)} if places else {}
    for context in contexts.values():
        if len(context.sources) == 1 and not context.coverage:
            context.before = before.get((context.sources[0].branch_id, context.sources[0].floor_no - 1))
    return contexts


def _cut(ref: FloorRef, limit: int) -> FloorRef:
    return replace(ref, text=short(ref.text, limit))


def _floor_link(ref: FloorRef) -> SafeString:
    return format_html('<a href="{}" title="{} · branch {} · floor {}">{} <b>#{}</b></a>', ref.url,
                       ref.conversation_id, ref.branch_name, ref.floor_no, short(ref.conversation_id), ref.floor_no)


def context_html(context: ReviewContext | None) -> SafeString:
    """The queue's cell: where the memory came from, and only that."""
    if context is None or not context.named:
        return format_html('<span class="quiet">{}</span>', "no source message")
    if context.gone:
        return format_html('<span class="quiet">{}</span>', "source message gone")
    parts = []
    if context.coverage:
        first = context.sources[0]
        parts.append(format_html(
            '<div class="context-span">summarizes <a href="{}">floors {}–{}</a> of {} · {} source message{}</div>',
            first.url, context.coverage[0], context.coverage[1], id_token(first.conversation_id), context.named,
            "" if context.named == 1 else "s",
        ))
    if context.before is not None:
        parts.append(format_html('<div class="context-before quiet">#{} · {}: {}</div>',
                                 context.before.floor_no, context.before.role, context.before.text or "(no text)"))
    parts.append(format_html_join("", (
        '<div class="source-message"><div class="source-message-head">{} · {}</div>'
        '<div class="source-message-text">{}</div></div>'
    ), ((_floor_link(ref), ref.role, ref.text or "(no text)") for ref in context.sources)))
    if context.hidden:
        parts.append(format_html('<div class="quiet"><a href="{}">{} more source floor{}</a></div>',
                                 context.conversation_url, context.hidden, "" if context.hidden == 1 else "s"))
    return format_html('<div class="review-context">{}</div>', format_html_join("", "{}", ((p,) for p in parts)))
