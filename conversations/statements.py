"""SQL of the hot reads, written once per process and database from model
metadata: building these with the ORM cost more than running them.

Table and column names come from the models, quoted by the backend; every
value is a bound parameter. `{branch}`, `{op}`, `{bound}` and
`{order}` are filled by the caller with other statements of this module and
SQL keywords.
"""

# ruff: noqa: S608
from __future__ import annotations

import functools

from django.db import connection

from conversations.models import Branch, Conversation, Message
from memory_project.db import column, table

# "No upper bound" as a number the floor column always stays under.
NO_FLOOR_BOUND = 2**31 - 1
# A page's columns, in the order of `selectors.MessageRow`'s fields.
MESSAGE_COLUMNS = ("id", "branch", "floor_no", "role", "content", "metadata", "created_at", "updated_at")


def page_statements() -> dict[str, str]:
    """The statements of a page of messages (`selectors.message_page`)."""
    return _page_statements(connection.vendor)


@functools.cache
def _page_statements(vendor: str) -> dict[str, str]:
    b, c, m = Branch, Conversation, Message
    columns = ", ".join(column(m, name) for name in MESSAGE_COLUMNS)
    branch_of_conversation = (
        f"FROM {table(b)} INNER JOIN {table(c)} ON {table(c)}.{column(c, 'id')} = {table(b)}.{column(b, 'conversation')} "
        f"WHERE {table(c)}.{column(c, 'workspace')} = %s AND {table(c)}.{column(c, 'external_id')} = %s "
        f"AND {table(b)}.{column(b, 'name')} = %s"
    )
    sql = {
        "columns": columns,
        # The branch (workspace, conversation id, name) with its conversation's pk.
        "branch": (
            f"SELECT {table(b)}.{column(b, 'id')}, {column(b, 'parent')}, {column(b, 'fork_floor_no')}, "
            f"{column(b, 'conversation')} {branch_of_conversation}"
        ),
        # A cursor message (conversation pk, message id): its branch and floor.
        "cursor": (
            f"SELECT {column(m, 'branch')}, {column(m, 'floor_no')} FROM {table(m)} "
            f"WHERE {column(m, 'conversation')} = %s AND {column(m, 'id')} = %s"
        ),
        # Up to LIMIT messages of one branch segment (branch pk, floors (low, high]).
        "segment": (
            f"SELECT {columns} FROM {table(m)} WHERE {column(m, 'branch')} = %s AND {column(m, 'floor_no')} > %s "
            f"AND {column(m, 'floor_no')} <= %s ORDER BY {column(m, 'floor_no')} {{order}} LIMIT %s"
        ),
        # The usual read in one statement: a page of a branch that is no
        # fork, the branch found by its name in `{branch}` (`root_branch`)
        # and the page's bound a number or the cursor's floor (`cursor_floor`);
        "root_page": (
            f"SELECT {columns} FROM {table(m)} WHERE {column(m, 'branch')} = ({{branch}}) "
            f"AND {column(m, 'floor_no')} {{op}} {{bound}} ORDER BY {column(m, 'floor_no')} {{order}} LIMIT %s"
        ),
        # The role, content and metadata of a branch's messages, the
        # branch by name in `{branch}` (`main` of an OpenAI session).
        "items": (
            f"SELECT {column(m, 'role')}, {column(m, 'content')}, {column(m, 'metadata')} FROM {table(m)} "
            f"WHERE {column(m, 'branch')} = ({{branch}}) ORDER BY {column(m, 'floor_no')} {{order}} {{limit}}"
        ),
        "root_branch": (
            f"SELECT {table(b)}.{column(b, 'id')} {branch_of_conversation} AND {table(b)}.{column(b, 'parent')} IS NULL"
        ),
        "cursor_floor": (
            f"SELECT {column(m, 'floor_no')} FROM {table(m)} WHERE {column(m, 'id')} = %s "
            f"AND {column(m, 'branch')} = ({{branch}})"
        ),
    }
    return sql
