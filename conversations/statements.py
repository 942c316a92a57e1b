"""SQL of the hot reads, written once per process and database from model
metadata: building these with the ORM cost more than running them.

Table and column names come from the models, quoted by the backend; every
value is a bound parameter. `{columns}`, `{branch}`, `{op}`, `{bound}` and
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
        # `{columns}` are `columns`, or on PostgreSQL `written_columns`.
        "root_page": (
            f"SELECT {{columns}} FROM {table(m)} WHERE {column(m, 'branch')} = ({{branch}}) "
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
    if vendor == "postgresql":
        sql["written_columns"] = _written_columns()
    return sql


def _written_columns() -> str:
    """PostgreSQL: a page's columns as `id`, then the message as the API
    writes it (`serializers.message_data`'s keys in their order), one JSON
    text per row, the conversation id and branch name given as JSON text
    (two parameters before the statement's own). Writing it here spares the
    web process reading eight columns and building, then encoding, a dict
    per message: a 20-message page took ~560 -> ~435 us of its CPU
    in-process (median of alternating blocks), for ~10-20 us more of
    PostgreSQL's (~105 -> ~120 us).

    The JSON columns go in as stored (jsonb's own text, as they are read
    otherwise). The times are `epoch_ms`'s: `date_part` answers the seconds
    as the same double Python's `timestamp()` does (microseconds over 10^6,
    correctly rounded), and the product is truncated as `int()` does."""
    m = Message

    # A message's id is the service's own (`new_message_id`: a prefix and
    # base32), a JSON string once quoted; `to_json` looks up how to write its
    # argument's type for every value, and twice per row was ~10% of the
    # statement's cost.
    quoted_id = f"""'"' || {column(m, 'id')} || '"'"""

    def epoch_ms(name: str) -> str:
        return f"trunc(date_part('epoch', {column(m, name)}) * 1000)::bigint::text"

    written = " || ".join([
        """'{"id":'""", quoted_id, """',"message_id":'""", quoted_id,
        """',"conversation_id":' || %s""", """',"branch":' || %s""",
        """',"floor_no":'""", f"{column(m, 'floor_no')}::text", """',"role":'""", f"to_json({column(m, 'role')})::text",
        """',"content":'""", f"{column(m, 'content')}::text", """',"metadata":'""", f"{column(m, 'metadata')}::text",
        """',"created_at":'""", epoch_ms("created_at"),
        """',"updated_at":'""", f"coalesce({epoch_ms('updated_at')}, 'null')", "'}'",
    ])
    return f"{column(m, 'id')}, {written}"
