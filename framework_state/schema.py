"""OpenAPI shapes of the framework endpoints (drf-spectacular).

The services check these bodies field by field (they carry the frameworks' own
opaque JSON), so these serializers only describe them: they are never used to
parse a request. Every success answer is the `{"data": ...}` envelope.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers

from conversations.schema import envelope
from framework_state.serializers import (
    CheckpointListQuerySerializer,
    CheckpointTupleQuerySerializer,
    ProjectQuerySerializer,
    SessionItemsQuerySerializer,
    SessionKeyQuerySerializer,
)
from framework_state.services.openai import MAX_ITEMS_PER_ADD

_OBJECT = serializers.DictField
NO_CONTENT = {204: OpenApiResponse(description="Done; no body.")}


def _data(name: str, field: serializers.Field, **meta: serializers.Field) -> type[serializers.Serializer]:
    fields: dict[str, serializers.Field] = {"data": field}
    if meta:
        fields["meta"] = inline_serializer(name=f"{name}Meta", fields=meta)
    return envelope(name, **fields)


def _count(name: str, key: str, help_text: str = "") -> serializers.Serializer:
    field = serializers.IntegerField(help_text=help_text)
    return _data(name, inline_serializer(name=f"{name}Data", fields={key: field}))


# --- Claude Agent SDK sessions --------------------------------------------------


class ClaudeSessionKeySerializer(serializers.Serializer):
    project_key = serializers.CharField(trim_whitespace=False)
    session_id = serializers.CharField(trim_whitespace=False)
    subpath = serializers.CharField(
        required=False, allow_null=True, trim_whitespace=False, help_text="A subagent stream; absent: the main transcript."
    )


class ClaudeSummarySerializer(serializers.Serializer):
    data = _OBJECT(allow_null=True, required=False, help_text="The SDK's folded summary (opaque).")
    expected_version = serializers.IntegerField(
        allow_null=True, required=False, help_text="The `summary_version` the summary was folded from (409 if stale)."
    )


class ClaudeAppendSerializer(ClaudeSessionKeySerializer):
    entries = serializers.ListField(
        child=_OBJECT(), help_text="Transcript entries, each an object with a string `type`; a repeated `uuid` is ignored."
    )
    summary = ClaudeSummarySerializer(required=False, allow_null=True, help_text="Main transcript only.")


claude_session_schema = {
    "list": extend_schema(
        parameters=[ProjectQuerySerializer],
        responses=_data(
            "ClaudeSessionList",
            inline_serializer(
                name="ClaudeSessionListing",
                fields={"session_id": serializers.CharField(), "mtime": serializers.IntegerField()},
                many=True,
            ),
        ),
    ),
    "append": extend_schema(
        request=ClaudeAppendSerializer,
        responses=_data(
            "ClaudeSessionAppend",
            inline_serializer(
                name="ClaudeSessionAppendData",
                fields={
                    "appended": serializers.IntegerField(),
                    "mtime": serializers.IntegerField(),
                    "summary": _OBJECT(allow_null=True),
                    "summary_version": serializers.IntegerField(),
                },
            ),
        ),
    ),
    "entries": extend_schema(
        parameters=[SessionKeyQuerySerializer],
        responses=_data(
            "ClaudeSessionEntries",
            serializers.ListField(child=_OBJECT(), allow_null=True, help_text="null: no such stream."),
        ),
    ),
    "delete_key": extend_schema(request=ClaudeSessionKeySerializer, responses=NO_CONTENT),
    "summaries": extend_schema(
        parameters=[ProjectQuerySerializer], responses=_data("ClaudeSessionSummaries", serializers.ListField(child=_OBJECT()))
    ),
    "summary": extend_schema(
        parameters=[SessionKeyQuerySerializer],
        responses=_data(
            "ClaudeSessionSummary",
            inline_serializer(
                name="ClaudeSessionSummaryData",
                fields={"summary": _OBJECT(allow_null=True), "summary_version": serializers.IntegerField()},
            ),
        ),
    ),
    "subkeys": extend_schema(
        parameters=[SessionKeyQuerySerializer],
        responses=_data("ClaudeSessionSubkeys", serializers.ListField(child=serializers.CharField())),
    ),
}


# --- OpenAI Agents SDK sessions -------------------------------------------------


class OpenAIItemsAddSerializer(serializers.Serializer):
    items = serializers.ListField(
        child=_OBJECT(), max_length=MAX_ITEMS_PER_ADD,
        help_text=f"Session items (Responses API input items), added in order, all or none; "
                  f"at most {MAX_ITEMS_PER_ADD}.",
    )


# The session id is the conversation id, percent-encoded into one path segment.
_SESSION_ID = OpenApiParameter("session_id", str, OpenApiParameter.PATH)

openai_items_schema = {
    "list": extend_schema(
        parameters=[_SESSION_ID, SessionItemsQuerySerializer], responses=_data("OpenAISessionItems", serializers.ListField(child=_OBJECT()))
    ),
    "create": extend_schema(
        request=OpenAIItemsAddSerializer,
        parameters=[_SESSION_ID, OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=False)],
        responses={201: _count("OpenAISessionItemsAdded", "added")},
    ),
    "clear": extend_schema(parameters=[_SESSION_ID], responses=NO_CONTENT),
    "pop": extend_schema(
        parameters=[_SESSION_ID],
        request=None, responses=_data("OpenAISessionItemPopped", _OBJECT(allow_null=True, help_text="null: empty session."))
    ),
}


# --- LangGraph checkpoints ------------------------------------------------------


class PendingWriteSerializer(serializers.Serializer):
    task_id = serializers.CharField()
    channel = serializers.CharField()
    type = serializers.CharField()
    value = serializers.CharField(help_text="Base64 of the serialized value.")


class CheckpointSerializer(serializers.Serializer):
    thread_id = serializers.CharField()
    checkpoint_ns = serializers.CharField(allow_blank=True)
    checkpoint_id = serializers.CharField()
    parent_checkpoint_id = serializers.CharField(allow_null=True)
    type = serializers.CharField()
    checkpoint = serializers.CharField(help_text="Base64 of the serialized checkpoint.")
    metadata = _OBJECT()
    pending_writes = PendingWriteSerializer(many=True)


class _ThreadSerializer(serializers.Serializer):
    thread_id = serializers.CharField(trim_whitespace=False)
    checkpoint_ns = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False)
    checkpoint_id = serializers.CharField(trim_whitespace=False)


class CheckpointPutSerializer(_ThreadSerializer):
    parent_checkpoint_id = serializers.CharField(required=False, allow_null=True, trim_whitespace=False)
    type = serializers.CharField(help_text="The serializer's type tag.")
    checkpoint = serializers.CharField(allow_blank=True, help_text="Base64 of the serialized checkpoint.")
    metadata = _OBJECT(required=False)


class CheckpointWriteSerializer(serializers.Serializer):
    idx = serializers.IntegerField(help_text="< 0: a special write (error, interrupt...) that overwrites.")
    channel = serializers.CharField()
    type = serializers.CharField()
    value = serializers.CharField(allow_blank=True, help_text="Base64 of the serialized value.")


class CheckpointWritesSerializer(_ThreadSerializer):
    task_id = serializers.CharField(trim_whitespace=False)
    task_path = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False)
    writes = CheckpointWriteSerializer(many=True)


class CheckpointBatchOpSerializer(serializers.Serializer):
    op = serializers.ChoiceField(
        choices=["put", "put_writes"],
        help_text="The other fields are those of a put's body (put) or a writes' body (put_writes).",
    )


class CheckpointBatchSerializer(serializers.Serializer):
    ops = CheckpointBatchOpSerializer(
        many=True, help_text="At most 100 ops, stored as if applied in order: all or, one op refused, none."
    )


class ThreadIdSerializer(serializers.Serializer):
    thread_id = serializers.CharField(trim_whitespace=False)


class RunIdsSerializer(serializers.Serializer):
    run_ids = serializers.ListField(child=serializers.CharField())


class ThreadCopySerializer(serializers.Serializer):
    source_thread_id = serializers.CharField(trim_whitespace=False)
    target_thread_id = serializers.CharField(trim_whitespace=False)


class ThreadPruneSerializer(serializers.Serializer):
    thread_ids = serializers.ListField(child=serializers.CharField())
    strategy = serializers.ChoiceField(choices=["keep_latest", "delete"], required=False)


checkpoint_schema = {
    "list": extend_schema(
        parameters=[CheckpointListQuerySerializer],
        responses=_data(
            "CheckpointPage", CheckpointSerializer(many=True), next_cursor=serializers.CharField(allow_null=True)
        ),
    ),
    "create": extend_schema(
        request=CheckpointPutSerializer,
        responses={
            201: _data(
                "CheckpointStored",
                inline_serializer(
                    name="CheckpointStoredData",
                    fields={
                        "thread_id": serializers.CharField(),
                        "checkpoint_ns": serializers.CharField(allow_blank=True),
                        "checkpoint_id": serializers.CharField(),
                    },
                ),
            )
        },
    ),
    "get_tuple": extend_schema(
        parameters=[CheckpointTupleQuerySerializer],
        responses=_data("CheckpointTuple", CheckpointSerializer(allow_null=True)),
    ),
    "writes": extend_schema(request=CheckpointWritesSerializer, responses=_count(
        "CheckpointWritesStored", "written",
        "The writes the request sent, as a replay of it answers too. A regular write (idx >= 0) of an index "
        "already held, in this request or before, is not stored again: the first one stands, as in "
        "LangGraph's own savers; a special one (idx < 0) replaces the one held.",
    )),
    "batch": extend_schema(
        request=CheckpointBatchSerializer,
        responses=_data(
            "CheckpointBatch",
            serializers.ListField(
                child=_OBJECT(),
                help_text="Per op, in order, what its own endpoint answers: a put's stored ids, a writes' count.",
            ),
        ),
        description=(
            "Puts and task writes stored together: all or, when one op is refused (the error names `ops[i]`), "
            "none. The saver sends in one request what its threads ask for at once."
        ),
    ),
    "delete_thread": extend_schema(request=ThreadIdSerializer, responses=NO_CONTENT),
    "delete_for_runs": extend_schema(request=RunIdsSerializer, responses=_count("CheckpointsDeleted", "deleted")),
    "copy_thread": extend_schema(request=ThreadCopySerializer, responses=_count("ThreadCopied", "copied")),
    "prune": extend_schema(request=ThreadPruneSerializer, responses=_count("ThreadsPruned", "deleted")),
}


# --- LangGraph store ------------------------------------------------------------


class StoreOpSerializer(serializers.Serializer):
    op = serializers.ChoiceField(
        choices=["get", "search", "put", "list_namespaces"],
        help_text=(
            "The other fields follow LangGraph's ops: get: namespace, key, refresh_ttl; "
            "search: namespace_prefix, query, filter, limit, offset, refresh_ttl; "
            "put: namespace, key, value (null deletes), ttl; "
            "list_namespaces: match_conditions, max_depth, limit, offset."
        ),
    )


class StoreBatchSerializer(serializers.Serializer):
    store_id = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, help_text="Absent, null or empty: the workspace's default store."
    )
    ops = StoreOpSerializer(many=True)


langgraph_store_schema = {
    "batch": extend_schema(
        request=StoreBatchSerializer,
        responses=_data(
            "LangGraphStoreBatch",
            serializers.ListField(
                child=serializers.JSONField(allow_null=True),
                help_text="One result per op: an item or null (get), a list of items (search), "
                "a list of namespaces (list_namespaces), null (put).",
            ),
        ),
    ),
}
