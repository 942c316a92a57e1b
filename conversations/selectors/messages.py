"""Reads of messages: a branch's messages in floor order (inherited parent
segments included), a page of them, and the reads the memory pipeline and
recall make by message id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from accounts.models import Workspace
from conversations.models import MAIN_BRANCH, Branch, Conversation, Message
from conversations.selectors.branches import BranchView, Segment, branch_view
from conversations.selectors.conversations import conversation_get
from conversations.statements import NO_FLOOR_BOUND, page_statements
from memory_project.db import fetch_one, json_column
from memory_project.errors import NotFoundError, ValidationError


def message_get_or_404(*, conversation: Conversation, message_id: str) -> Message:
    message = Message.objects.filter(conversation=conversation, pk=message_id).select_related("branch").first()
    if message is None:
        raise NotFoundError(f"Message '{message_id}' not found in conversation '{conversation.external_id}'.")
    return message


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
# which was most of the cost of building a page's rows.
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
) -> list[MessageRow]:
    """Up to `limit` rows of a branch that is no fork, past the cursor message
    when one is given, in one statement. Empty when there is nothing to show
    *or* the branch is a fork, unknown, or the cursor not one of its messages:
    the caller then takes the general path, which tells these apart."""
    sql = page_statements()
    branch = sql["root_branch"]
    key = [workspace.pk, external_id, branch_name]
    if cursor_id is None:
        bound, bound_params = "%s", [0 if ascending else NO_FLOOR_BOUND]
    else:
        bound, bound_params = "(" + sql["cursor_floor"].format(branch=branch) + ")", [cursor_id, *key]
    statement = sql["root_page"].format(
        branch=branch, op=">" if ascending else "<", bound=bound, order="ASC" if ascending else "DESC",
    )
    return _fetch_rows(statement, [*key, *bound_params, limit])


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
    messages: list[MessageRow]
    next_cursor: str | None
    previous_cursor: str | None
    branch_names: dict[str, str]


def message_page(
    *,
    workspace: Workspace,
    external_id: str,
    branch_name: str = MAIN_BRANCH,
    limit: int = 20,
    order: str = "asc",
    after: str | None = None,
    before: str | None = None,
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
    """
    if after and before:
        raise ValidationError("after and before are mutually exclusive.")
    # Moving "forward" in the reading order is ascending floors for asc.
    forward = before is None
    ascending = (order == "asc") == forward
    cursor_id = after or before
    rows = _root_page_rows(
        workspace=workspace, external_id=external_id, branch_name=branch_name, limit=limit + 1,
        ascending=ascending, cursor_id=cursor_id,
    )
    if rows:
        return _page_of(rows, limit=limit, forward=forward, cursor_given=cursor_id is not None,
                        branch_names={rows[0].branch_id: branch_name})
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
    rows: list[MessageRow], *, limit: int, forward: bool, cursor_given: bool, branch_names: dict[str, str],
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
                       branch_names=branch_names)




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
