"""Reads of conversations, branches and messages, always scoped to a workspace.

The memory pipeline and context assembly read through these functions:

- `conversation_get(workspace=, external_id=)` / `conversation_get_or_404(...)`
- `branch_get(conversation=, name=)` / `branch_get_or_404(...)`
- `conversation_branch_get_or_404(workspace=, external_id=, name=)`: both in one query
- `branch_messages(branch=, after_floor_no=, until_floor_no=, ...)`: the messages
  a branch shows, inherited parent segments included, in floor order
  (`branch_message_rows(...)`: the same as `MessageRow`s).
- `conversation_list(workspace=, filters=, order=, limit=, after=, before=)`
- `branch_pending_annotations(prefix)`, `branch_last_floor_no(branch_id=)`,
  `branches_idle_with_pending(idle_before=, limit=)`: the pipeline's pending
  work, derived from the branch counters the appends move.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from django.db import connection
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Greatest

from accounts.models import Workspace
from conversations.filters import ConversationFilterSet
from conversations.models import MAIN_BRANCH, Branch, Conversation, ConversationResource, Message
from conversations.statements import NO_FLOOR_BOUND, page_statements
from memory_project.db import StoredJson, fetch_one, json_column
from memory_project.errors import NotFoundError, ValidationError
from memory_project.instants import in_utc

# A fork of a fork of a fork...: reading walks the parent chain; this bounds the
# walk (and the number of per-segment queries a page can cost).
MAX_BRANCH_DEPTH = 32


def conversation_get(*, workspace: Workspace, external_id: str) -> Conversation | None:
    conversation = Conversation.objects.filter(workspace=workspace, external_id=external_id).first()
    if conversation is not None:
        # The caller's row, so `conversation.workspace` (its review setting,
        # say) costs no query of its own.
        conversation.workspace = workspace
    return conversation


def conversation_get_or_404(*, workspace: Workspace, external_id: str) -> Conversation:
    conversation = conversation_get(workspace=workspace, external_id=external_id)
    if conversation is None:
        raise NotFoundError(f"Conversation '{external_id}' not found.")
    return conversation


def branch_get(*, conversation: Conversation, name: str = MAIN_BRANCH) -> Branch | None:
    return Branch.objects.filter(conversation=conversation, name=name).first()


def branch_get_or_404(*, conversation: Conversation, name: str = MAIN_BRANCH) -> Branch:
    branch = branch_get(conversation=conversation, name=name)
    if branch is None:
        raise NotFoundError(f"Branch '{name}' not found in conversation '{conversation.external_id}'.")
    return branch


def conversation_branch_get_or_404(*, workspace: Workspace, external_id: str,
                                   name: str = MAIN_BRANCH) -> tuple[Conversation, Branch]:
    """The conversation and its branch `name` in one query, for a read that
    needs both; the same answers as `conversation_get_or_404`, then
    `branch_get_or_404`. The conversation also says whether it has memory
    stores attached (`has_resources`), so that most reads skip that query."""
    attached = ConversationResource.objects.filter(conversation_id=OuterRef("conversation_id"))
    branch = (Branch.objects.select_related("conversation").annotate(has_resources=Exists(attached))
              .filter(conversation__workspace=workspace, conversation__external_id=external_id, name=name).first())
    if branch is None:
        conversation = conversation_get_or_404(workspace=workspace, external_id=external_id)
        branch = branch_get_or_404(conversation=conversation, name=name)  # made meanwhile if no 404
        conversation.has_resources = True  # not known: read them
        return conversation, branch
    conversation = branch.conversation
    conversation.workspace = workspace  # as `conversation_get`
    conversation.has_resources = branch.has_resources
    return conversation, branch


def branch_list(*, conversation: Conversation) -> list[Branch]:
    return list(conversation.branches.select_related("parent").order_by("created_at", "id"))


def message_get_or_404(*, conversation: Conversation, message_id: str) -> Message:
    message = Message.objects.filter(conversation=conversation, pk=message_id).select_related("branch").first()
    if message is None:
        raise NotFoundError(f"Message '{message_id}' not found in conversation '{conversation.external_id}'.")
    return message


# --- The memory pipeline's pending work ------------------------------------------


def branch_pending_annotations(prefix: str = "") -> dict[str, Any]:
    """`pending_floors` and `pending_tokens` of the branch reached through
    `prefix` (e.g. "branch__" from a row with a branch foreign key), as
    annotations; 0 when there is no branch. The formula lives here so nobody
    else has to know how the counters make pending work."""
    def col(name: str) -> F:
        return F(f"{prefix}{name}")

    return {
        "pending_floors": Coalesce(Greatest(col("next_floor_no") - 1 - col("processed_floor_no"), Value(0)), Value(0)),
        "pending_tokens": Coalesce(Greatest(col("appended_tokens") - col("processed_tokens"), Value(0)), Value(0)),
    }


def branch_last_floor_no(*, branch_id: str) -> int:
    """The last floor number handed out on the branch (0 before its first message)."""
    next_floor_no = Branch.objects.filter(pk=branch_id).values_list("next_floor_no", flat=True).first()
    return (next_floor_no or 1) - 1


@dataclass(frozen=True)
class PendingBranch:
    workspace_id: str
    external_id: str
    branch_id: str
    branch_name: str


def branches_idle_with_pending(*, idle_before: datetime, limit: int) -> list[PendingBranch]:
    """Branches with floors the memory pipeline has not read, in conversations
    that have had no new message since `idle_before`, across workspaces (for
    the periodic sweep). A periodic scan of the branch table: nothing on the
    append path pays for an index on it."""
    rows = (
        Branch.objects.filter(
            conversation__last_message_at__lt=idle_before, next_floor_no__gt=F("processed_floor_no") + 1
        )
        .order_by("conversation__last_message_at")
        .values_list("conversation__workspace_id", "conversation__external_id", "pk", "name")[:limit]
    )
    return [PendingBranch(*row) for row in rows]


# --- Branch visibility ----------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """The floors `(low, high]` of one branch that a reader of some branch sees."""

    branch_id: str
    branch_name: str
    low: int  # exclusive
    high: int | None  # inclusive; None = unbounded


@dataclass
class BranchView:
    """A branch with the chain of segments it shows, oldest floors first."""

    branch: Branch
    segments: list[Segment] = field(default_factory=list)

    @property
    def branch_names(self) -> dict[str, str]:
        return {segment.branch_id: segment.branch_name for segment in self.segments}

    def shows(self, message: Message) -> bool:
        return self.shows_floor(branch_id=message.branch_id, floor_no=message.floor_no)

    def shows_floor(self, *, branch_id: str, floor_no: int) -> bool:
        for segment in self.segments:
            if branch_id == segment.branch_id:
                return floor_no > segment.low and (segment.high is None or floor_no <= segment.high)
        return False


def branch_view(*, branch: Branch) -> BranchView:
    """Resolve the parent chain of `branch` into floor segments.

    A fork at floor F of its parent starts its own floors at F+1, so the
    segments' floor ranges never overlap and floor order is reading order.
    One query per ancestor (forks are rarely more than a level or two deep).
    """
    segments: list[Segment] = []
    current: Branch | None = branch
    high: int | None = None
    depth = 0
    while current is not None and depth < MAX_BRANCH_DEPTH:
        low = (current.fork_floor_no or 0) if current.parent_id else 0
        if high is None or high > low:
            segments.append(Segment(branch_id=current.pk, branch_name=current.name, low=low, high=high))
        if current.parent_id is None:
            break
        fork = current.fork_floor_no or 0
        high = fork if high is None else min(high, fork)
        current = Branch.objects.filter(pk=current.parent_id).first()
        depth += 1
    segments.reverse()
    return BranchView(branch=branch, segments=segments)


def branch_messages(
    *,
    branch: Branch | BranchView,
    after_floor_no: int | None = None,
    before_floor_no: int | None = None,
    until_floor_no: int | None = None,
    limit: int | None = None,
    order: str = "asc",
) -> list[Message]:
    """The messages `branch` shows (its parents' up to each fork, then its own).

    `after_floor_no` / `before_floor_no` are exclusive bounds, `until_floor_no`
    an inclusive upper bound; `order` is "asc" (oldest first) or "desc". Each
    segment is one keyset query on the (branch, floor_no) unique index, so a
    page costs the same at any depth.
    """
    view = branch if isinstance(branch, BranchView) else branch_view(branch=branch)
    upper = before_floor_no - 1 if before_floor_no is not None else None
    if until_floor_no is not None:
        upper = until_floor_no if upper is None else min(upper, until_floor_no)
    results: list[Message] = []
    for segment, low, high in _segment_ranges(view, lower=after_floor_no or 0, upper=upper, ascending=order == "asc"):
        remaining = None if limit is None else limit - len(results)
        if remaining is not None and remaining <= 0:
            break
        qs = Message.objects.filter(branch_id=segment.branch_id, floor_no__gt=low)
        if high is not None:
            qs = qs.filter(floor_no__lte=high)
        qs = qs.order_by("floor_no" if order == "asc" else "-floor_no")
        if remaining is not None:
            qs = qs[:remaining]
        results.extend(qs)
    return results


def branch_message_rows(
    *, branch: BranchView, lower: int = 0, upper: int | None = None, limit: int, ascending: bool = True
) -> list[MessageRow]:
    """Up to `limit` of the messages `branch` shows with floors in `(lower,
    upper]`, in reading order, as `MessageRow`s: one keyset statement
    per segment and no model objects, for the hot reads that only show them."""
    rows: list[MessageRow] = []
    for segment, low, high in _segment_ranges(branch, lower=lower, upper=upper, ascending=ascending):
        remaining = limit - len(rows)
        if remaining <= 0:
            break
        rows.extend(_segment_rows(segment, low=low, high=high, limit=remaining, ascending=ascending))
    return rows


def _segment_ranges(
    view: BranchView, *, lower: int, upper: int | None, ascending: bool
) -> Iterator[tuple[Segment, int, int | None]]:
    """The floors `(low, high]` to read from each of the view's segments in
    reading order, within the exclusive `lower` and inclusive `upper` bounds;
    segments with nothing in range are skipped."""
    for segment in view.segments if ascending else reversed(view.segments):
        low = max(segment.low, lower)
        high = segment.high if upper is None else (upper if segment.high is None else min(segment.high, upper))
        if high is None or high > low:
            yield segment, low, high


# Not frozen: a frozen dataclass sets each field through object.__setattr__,
# 12 of the 14 us that building a page's 20 rows took here (2 us unfrozen).
@dataclass(slots=True)
class MessageRow:
    """A message as a page shows it, read without building a model object.
    Has the attributes of `Message` the API writes out. Its JSON columns are
    kept as the statement read them (`stored_content`, `stored_metadata`:
    the stored text) and decoded when read as `content` and `metadata`, so
    an answer that passes them on unread (`StoredJson`) never decodes them.
    Its fields are `statements.MESSAGE_COLUMNS`, in their order."""

    pk: str
    branch_id: str
    floor_no: int
    role: str
    stored_content: Any
    stored_metadata: Any
    created_at: datetime
    updated_at: datetime | None

    @property
    def content(self) -> Any:
        return json_column(self.stored_content)

    @property
    def metadata(self) -> dict[str, Any]:
        return json_column(self.stored_metadata)


@dataclass(slots=True)
class WrittenMessage:
    """A message of a page read already written as the API answers it
    (`statements._written_columns`): its id, for the page's cursors, and
    its JSON text, passed on unread (`StoredJson`)."""

    pk: str
    data: StoredJson


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _fetch_rows(sql: str, params: list[Any]) -> list[MessageRow]:
    """The statement's rows (`MESSAGE_COLUMNS`) as `MessageRow`s."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        # The cursor's own connection: `django.db.connection` would find it
        # again through a context-local.
        vendor = cursor.db.vendor
    if vendor == "postgresql":  # timestamptz: read aware
        return [MessageRow(*row) for row in rows]
    # SQLite's converter gives the stored UTC text back naive.
    return [MessageRow(*row[:6], _aware(row[6]), _aware(row[7])) for row in rows]


def _segment_rows(segment: Segment, *, low: int, high: int | None, limit: int, ascending: bool) -> list[MessageRow]:
    sql = page_statements()["segment"].format(order="ASC" if ascending else "DESC")
    return _fetch_rows(sql, [segment.branch_id, low, NO_FLOOR_BOUND if high is None else high, limit])


def _root_page_rows(
    *, workspace: Workspace, external_id: str, branch_name: str, limit: int, ascending: bool, cursor_id: str | None,
    written: bool = False,
) -> tuple[list[MessageRow] | list[WrittenMessage], bool]:
    """Up to `limit` rows of a branch that is no fork, past the cursor message
    when one is given, in one statement. Empty when there is nothing to show
    *or* the branch is a fork, unknown, or the cursor not one of its messages:
    the caller then takes the general path, which tells these apart. With
    `written`, on PostgreSQL, `WrittenMessage`s; the second value says
    whether they are."""
    sql = page_statements()
    branch = sql["root_branch"]
    key = [workspace.pk, external_id, branch_name]
    if cursor_id is None:
        bound, bound_params = "%s", [0 if ascending else NO_FLOOR_BOUND]
    else:
        bound, bound_params = "(" + sql["cursor_floor"].format(branch=branch) + ")", [cursor_id, *key]
    written = written and "written_columns" in sql
    statement = sql["root_page"].format(
        columns=sql["written_columns"] if written else sql["columns"],
        branch=branch, op=">" if ascending else "<", bound=bound, order="ASC" if ascending else "DESC",
    )
    params = [*key, *bound_params, limit]
    if not written:
        return _fetch_rows(statement, params), False
    # The conversation id and branch name as the renderer writes a string.
    names = [orjson.dumps(external_id).decode(), orjson.dumps(branch_name).decode()]
    with connection.cursor() as cursor:
        cursor.execute(statement, [*names, *params])
        return [WrittenMessage(pk, StoredJson(text)) for pk, text in cursor.fetchall()], True


def _page_view(*, workspace: Workspace, external_id: str, branch_name: str) -> tuple[BranchView, int] | None:
    """The branch's view and its conversation's pk; None when it is missing."""
    row = fetch_one(page_statements()["branch"], [workspace.pk, external_id, branch_name])
    if row is None:
        return None
    branch_id, parent_id, fork_floor_no, conversation_id = row
    if parent_id is not None:
        # A fork: its parents' segments, one short query per ancestor.
        return branch_view(branch=Branch.objects.get(pk=branch_id)), conversation_id
    segment = Segment(branch_id=branch_id, branch_name=branch_name, low=0, high=None)
    branch = Branch(id=branch_id, conversation_id=conversation_id, name=branch_name, fork_floor_no=fork_floor_no)
    return BranchView(branch=branch, segments=[segment]), conversation_id


@dataclass
class MessagePage:
    messages: list[MessageRow] | list[WrittenMessage]
    next_cursor: str | None
    previous_cursor: str | None
    branch_names: dict[str, str]
    # The messages are `WrittenMessage`s (asked for and read so, `message_page`).
    written: bool = False


def message_page(
    *,
    workspace: Workspace,
    external_id: str,
    branch_name: str = MAIN_BRANCH,
    limit: int = 20,
    order: str = "asc",
    after: str | None = None,
    before: str | None = None,
    written: bool = False,
) -> MessagePage:
    """One page of a conversation's messages (spec 000 `get_messages`).

    Cursors are message ids and exclusive: `after` continues in the reading
    direction, `before` goes back. `next_cursor` is set when more messages
    follow the page in the reading direction, `previous_cursor` when some
    precede it. An unknown conversation reads as an empty page; an unknown
    branch of an existing conversation is a 404; a cursor id that is not a
    message this branch shows is a 400.

    The API's most frequent read, one statement for a branch that is no fork
    (a keyset query on the (branch, floor_no) unique index, the branch and the
    cursor's floor as subqueries), the same at floor 20 as at 9,800. A fork,
    an empty page or an error takes the general path: the branch with its
    conversation, the cursor, one keyset query per segment.

    With `written`, that one statement reads the messages on PostgreSQL
    already written as the service's own format answers them
    (`WrittenMessage`); otherwise, and on the general path, `MessageRow`s.
    """
    if after and before:
        raise ValidationError("after and before are mutually exclusive.")
    # Moving "forward" in the reading order is ascending floors for asc.
    forward = before is None
    ascending = (order == "asc") == forward
    cursor_id = after or before
    rows, written = _root_page_rows(
        workspace=workspace, external_id=external_id, branch_name=branch_name, limit=limit + 1,
        ascending=ascending, cursor_id=cursor_id, written=written,
    )
    if rows:
        return _page_of(rows, limit=limit, forward=forward, cursor_given=cursor_id is not None,
                        branch_names={} if written else {rows[0].branch_id: branch_name}, written=written)
    found = _page_view(workspace=workspace, external_id=external_id, branch_name=branch_name)
    if found is None:
        if conversation_get(workspace=workspace, external_id=external_id) is None:
            return MessagePage(messages=[], next_cursor=None, previous_cursor=None, branch_names={})
        raise NotFoundError(f"Branch '{branch_name}' not found in conversation '{external_id}'.")
    view, conversation_id = found

    cursor_floor: int | None = None
    if cursor_id:
        cursor = fetch_one(page_statements()["cursor"], [conversation_id, cursor_id])
        if cursor is None or not view.shows_floor(branch_id=cursor[0], floor_no=cursor[1]):
            param = "after" if after else "before"
            raise ValidationError(f"{param}: message '{cursor_id}' is not a message of branch '{branch_name}'.")
        cursor_floor = cursor[1]

    lower = cursor_floor if cursor_floor is not None and ascending else 0
    upper = cursor_floor - 1 if cursor_floor is not None and not ascending else None
    rows = branch_message_rows(branch=view, lower=lower, upper=upper, limit=limit + 1, ascending=ascending)
    return _page_of(rows, limit=limit, forward=forward, cursor_given=cursor_floor is not None,
                    branch_names=view.branch_names)


def _page_of(
    rows: list[MessageRow] | list[WrittenMessage], *, limit: int, forward: bool, cursor_given: bool,
    branch_names: dict[str, str], written: bool = False,
) -> MessagePage:
    """The page from up to `limit + 1` rows read in the reading direction."""
    has_more = len(rows) > limit
    rows = rows[:limit]
    if not forward:
        rows.reverse()

    first_id = rows[0].pk if rows else None
    last_id = rows[-1].pk if rows else None
    if forward:
        next_cursor = last_id if has_more else None
        # The cursor message itself precedes the page.
        previous_cursor = first_id if cursor_given else None
    else:
        previous_cursor = first_id if has_more else None
        next_cursor = last_id
    return MessagePage(messages=rows, next_cursor=next_cursor, previous_cursor=previous_cursor,
                       branch_names=branch_names, written=written)


# --- Conversation lists ---------------------------------------------------------


def encode_conversation_cursor(conversation: Conversation) -> str:
    raw = json.dumps([conversation.last_message_at.isoformat(), conversation.pk], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_conversation_cursor(cursor: str, *, param: str) -> tuple[datetime, int]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        stamp, pk = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
        moment = datetime.fromisoformat(stamp)
        if not isinstance(pk, int) or moment.tzinfo is None:
            raise ValueError
        # The service writes cursors in UTC; one no datetime can hold is forged.
        moment = in_utc(moment)
        if moment is None:
            raise ValueError
    except (ValueError, TypeError, binascii.Error, UnicodeError):
        raise ValidationError(f"{param}: not a cursor this API returned.")
    return moment, pk


@dataclass
class ConversationPage:
    conversations: list[Conversation]
    next_cursor: str | None
    previous_cursor: str | None


def conversation_list(
    *,
    workspace: Workspace,
    filters: Mapping[str, Any] | None = None,
    order: str = "desc",
    limit: int = 20,
    after: str | None = None,
    before: str | None = None,
) -> ConversationPage:
    """Conversations ordered by `last_message_at` (then id), keyset-paged.

    `last_message_at` is the time of the newest message, or the creation time
    while a conversation has none, so every row has a sort key. Cursors are
    opaque (`next_cursor` -> `after`, `previous_cursor` -> `before`). One query.
    """
    if after and before:
        raise ValidationError("after and before are mutually exclusive.")
    qs = ConversationFilterSet(filters or {}, queryset=Conversation.objects.filter(workspace=workspace)).qs
    forward = before is None
    descending = (order == "desc") == forward
    cursor = after or before
    if cursor:
        moment, pk = decode_conversation_cursor(cursor, param="after" if after else "before")
        if descending:
            qs = qs.filter(Q(last_message_at__lt=moment) | Q(last_message_at=moment, pk__lt=pk))
        else:
            qs = qs.filter(Q(last_message_at__gt=moment) | Q(last_message_at=moment, pk__gt=pk))
    ordering = ("-last_message_at", "-pk") if descending else ("last_message_at", "pk")
    rows = list(qs.order_by(*ordering)[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    if not forward:
        rows.reverse()
    first = encode_conversation_cursor(rows[0]) if rows else None
    last = encode_conversation_cursor(rows[-1]) if rows else None
    if forward:
        return ConversationPage(rows, next_cursor=last if has_more else None, previous_cursor=first if cursor else None)
    return ConversationPage(rows, next_cursor=last, previous_cursor=first if has_more else None)


# --- Reads for the memory pipeline and recall -------------------------------------


def message_conversation_ids(*, workspace_id: int, message_ids: list[str]) -> dict[str, str]:
    """message id -> its conversation's business id, for the given ids of this workspace."""
    if not message_ids:
        return {}
    return dict(Message.objects.filter(workspace_id=workspace_id, pk__in=message_ids)
                .values_list("pk", "conversation__external_id"))


def message_rows(*, workspace_id: str, message_ids: list[str]) -> dict[str, dict]:
    """The workspace's messages with these ids as plain rows (id, role, content,
    created_at, floor_no), by id: one query, no model objects."""
    if not message_ids:
        return {}
    return {row["id"]: row for row in Message.objects.filter(workspace_id=workspace_id, pk__in=message_ids)
            .values("id", "role", "content", "created_at", "floor_no")}


def messages_for_reindex(*, workspace_id: str | None, chunk: int):
    """(workspace id, messages) in chunks of one workspace, in primary-key order,
    for rebuilding derived indexes."""
    rows = Message.objects.order_by("workspace_id", "pk").only(
        "id", "workspace_id", "conversation_id", "branch_id", "floor_no", "role", "content", "created_at")
    if workspace_id:
        rows = rows.filter(workspace_id=workspace_id)
    last: tuple[str, str] = ("", "")
    while True:
        page = list(rows.filter(Q(workspace_id__gt=last[0]) | Q(workspace_id=last[0], pk__gt=last[1]))[:chunk])
        if not page:
            return
        last = (page[-1].workspace_id, page[-1].pk)
        by_workspace: dict[str, list[Message]] = {}
        for message in page:
            by_workspace.setdefault(message.workspace_id, []).append(message)
        yield from by_workspace.items()


def messages_quoting(*, workspace: Workspace, text: str) -> list[tuple[str, str, Any]]:
    """(conversation's business id, message id, content) of the workspace's
    messages whose content holds `text`, for redacting a text everywhere.

    The database narrows by the content's JSON text (where a non-ASCII
    character may be stored escaped, so both spellings are asked for); each
    candidate is then checked on its decoded strings."""
    from django.db.models import TextField
    from django.db.models.functions import Cast

    escaped = json.dumps(text)[1:-1]
    rows = (Message.objects.filter(workspace=workspace)
            .annotate(raw=Cast("content", TextField()))
            .filter(Q(raw__contains=text) | Q(raw__contains=escaped))
            .order_by("conversation_id", "floor_no")
            .values_list("conversation__external_id", "pk", "content"))
    return [row for row in rows if _holds(row[2], text)]


def _holds(value: Any, text: str) -> bool:
    if isinstance(value, str):
        return text in value
    if isinstance(value, list):
        return any(_holds(element, text) for element in value)
    if isinstance(value, dict):
        return any(text in key or _holds(element, text) for key, element in value.items())
    return False


def conversation_message_ids(*, workspace_id: str, external_id: str | None = None,
                             user_id: str | None = None) -> QuerySet:
    """The ids of the messages of one conversation (`external_id`) or of all
    of a user's conversations (`user_id`), as a subquery for a filter."""
    messages = Message.objects.filter(workspace_id=workspace_id)
    if external_id is not None:
        messages = messages.filter(conversation__external_id=external_id)
    if user_id is not None:
        messages = messages.filter(conversation__user_id=user_id)
    return messages.values("id")


def user_conversation_ids(*, workspace_id: str, user_id: str) -> QuerySet:
    """The business ids of a user's conversations, as a subquery for a filter."""
    return Conversation.objects.filter(workspace_id=workspace_id, user_id=user_id).values("external_id")
