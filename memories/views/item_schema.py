"""OpenAPI annotations of spec 003's item and edge routes (kept out of the views
so the views stay thin)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from memories.serializers.items import (
    MemoryBatchDeleteInputSerializer,
    MemoryBatchStatusInputSerializer,
    MemoryEdgeCreateInputSerializer,
    MemoryEdgeUpdateInputSerializer,
    MemoryItemCreateInputSerializer,
    MemoryItemUpdateInputSerializer,
    MemoryRestoreInputSerializer,
)

Q = OpenApiParameter.QUERY
P = OpenApiParameter.PATH
ERRORS = {
    400: OpenApiResponse(description="invalid_request_error"),
    404: OpenApiResponse(description="not_found_error (also another workspace's ids)"),
    409: OpenApiResponse(description="conflict_error / memory_precondition_failed / memory_edge_conflict"),
}
OK = {200: OpenApiResponse(OpenApiTypes.OBJECT, description='{"data": ...}'), **ERRORS}
PAGE_META = (
    '{"data": [...], "meta": {"total", "limit", "offset", "has_more", "total_exact"}}. `total` is exact up to '
    "1,000 rows past the page (beyond that it is that bound and `total_exact` is false); with `q` nothing is "
    "counted and `total` is the page's lower bound (offset + rows, + 1 while `has_more`; past the last row, "
    "the rows before the offset, counted)."
)
LIST_OK = {200: OpenApiResponse(OpenApiTypes.OBJECT, description=PAGE_META), **ERRORS}
# Erasure that follows lineage: what went with a deleted memory or a redacted version.
LINEAGE = (
    '`lineage`: `{"memories_deleted": n, "memory_ids": [...], "summaries_cleared": n, "rederive_job_ids": [...]}`, '
    "the summaries compacted from this memory, deleted with all their versions, and the jobs that compact "
    "what remains again."
)
OK_LINEAGE = {200: OpenApiResponse(OpenApiTypes.OBJECT, description='{"data": ..., "lineage": {...}}. ' + LINEAGE),
              **ERRORS}
CREATED = {201: OpenApiResponse(OpenApiTypes.OBJECT, description='{"data": ...}'), **ERRORS}


def _q(name: str, kind=OpenApiTypes.STR, description: str = "") -> OpenApiParameter:
    return OpenApiParameter(name, kind, Q, required=False, description=description)


MEMORY_ID = OpenApiParameter("memory_id", OpenApiTypes.STR, P)
VERSION_ID = OpenApiParameter("version_id", OpenApiTypes.STR, P)
EDGE_ID = OpenApiParameter("edge_id", OpenApiTypes.STR, P)
PAGE = [_q("limit", OpenApiTypes.INT, "1-100, default 20"), _q("offset", OpenApiTypes.INT, "default 0")]
STATUS_DESCRIPTION = (
    "active | deprecated | pending. `pending`: awaiting an operator's review (workspaces that require "
    "review); such a memory reports status `pending`, never `active`, and is never injected into context"
)
ITEM_FILTERS = [
    *(_q(name) for name in ("scope", "scope_id", "type", "summary_tier")),
    _q("status", description=STATUS_DESCRIPTION),
    *(_q(name) for name in ("lifecycle_status", "fact_key")),
    *(_q(name) for name in ("source_floor_id", "source_message_id", "source_job_id", "store_id")),
    *(
        _q(name, OpenApiTypes.INT, "milliseconds since the epoch, inclusive")
        for name in ("created_from", "created_to", "updated_from", "updated_to")
    ),
    *(
        _q(name, OpenApiTypes.NUMBER)
        for name in ("importance_min", "importance_max", "confidence_min", "confidence_max")
    ),
    _q("q", description="case-insensitive substring of content or fact_key, any language"),
    _q("user_id", description="the user's scope (scope `user`, scope_id = user_id); with include_conversations=true "
                              "also the memories made from that user's conversations"),
    _q("include_conversations", OpenApiTypes.BOOL, "with user_id: add the memories of the user's conversations"),
    _q("conversation_id", description="the conversation's own memories (chat, branch and floor scopes) and the "
                                      "memories made from its messages wherever they are filed"),
    _q("metadata", description='a JSON object, e.g. {"source":"crm","priority":2}: memories whose metadata holds '
                               "each key with that value (strings, numbers, booleans)"),
    _q("sort_by", description="created_at | updated_at | importance | confidence"),
    _q("sort_order", description="asc | desc (default desc)"),
]
VERSION_FILTERS = [
    _q("operation"),
    _q("session_id"),
    _q("api_key_id"),
    _q("job_id"),
    _q("created_at_gte", OpenApiTypes.INT, "ms epoch"),
    _q("created_at_lte", OpenApiTypes.INT, "ms epoch"),
]

# Not a standard action (extend_schema_view does not reach it): the view
# method carries it as a decorator.
DESTROY_ALL_SCHEMA = extend_schema(
    operation_id="memories_delete_for_user",
    description="Delete every memory of a user (their scope; with include_conversations=true also the memories "
                "made from their conversations), following lineage: the summaries compacted from them are "
                "erased too. `user_id` is required.",
    parameters=[_q("user_id", description="required"), _q("include_conversations", OpenApiTypes.BOOL)],
    responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description='{"data": {"user_id", "deleted", "ids"}, '
                                                                      '"lineage": {...}}. ' + LINEAGE),
               **ERRORS},
)


SEARCH_DESCRIPTION = (
    "With `query`: a search by meaning and words, ranked by the recall index (BM25 fused with the embedding "
    "model's similarity), best first, each row with its `score` (relevance, 0-1); only memories in force unless "
    "`status` / `lifecycle_status` is given, only those at or above the documented relevance threshold. Needs "
    "`user_id`, `conversation_id` or `scope` (+ `scope_id`). A parameter that is no filter here is a 400."
)
ITEM_SCHEMA = {
    "list": extend_schema(
        operation_id="memories_list", description=SEARCH_DESCRIPTION,
        parameters=[*ITEM_FILTERS, _q("query", description="search text (see the description)"), *PAGE],
        responses=LIST_OK,
    ),
    "create": extend_schema(operation_id="memories_create", request=MemoryItemCreateInputSerializer, responses=CREATED),
    "retrieve": extend_schema(operation_id="memories_retrieve", parameters=[MEMORY_ID], responses=OK),
    "partial_update": extend_schema(
        operation_id="memories_update", parameters=[MEMORY_ID], request=MemoryItemUpdateInputSerializer, responses=OK
    ),
    "destroy": extend_schema(operation_id="memories_delete", parameters=[MEMORY_ID], responses=OK_LINEAGE),
    "stats": extend_schema(operation_id="memories_stats", parameters=ITEM_FILTERS, responses=OK),
    "batch_status": extend_schema(
        operation_id="memories_batch_status", request=MemoryBatchStatusInputSerializer, responses=OK
    ),
    "batch_delete": extend_schema(
        operation_id="memories_batch_delete", request=MemoryBatchDeleteInputSerializer, responses=OK_LINEAGE
    ),
    "versions": extend_schema(
        operation_id="memories_versions_list", parameters=[MEMORY_ID, *VERSION_FILTERS, *PAGE], responses=LIST_OK
    ),
    "version": extend_schema(
        operation_id="memories_versions_retrieve", parameters=[MEMORY_ID, VERSION_ID], responses=OK
    ),
    "redact": extend_schema(
        operation_id="memories_versions_redact", parameters=[MEMORY_ID, VERSION_ID], request=None,
        responses=OK_LINEAGE,
    ),
    "restore": extend_schema(
        operation_id="memories_restore", parameters=[MEMORY_ID], request=MemoryRestoreInputSerializer, responses=OK
    ),
}

EDGE_SCHEMA = {
    "list": extend_schema(
        operation_id="memory_edges_list",
        parameters=[_q("from_id"), _q("to_id"), _q("relation"), _q("sort_by"), _q("sort_order"), *PAGE],
        responses=LIST_OK,
    ),
    "create": extend_schema(
        operation_id="memory_edges_create", request=MemoryEdgeCreateInputSerializer, responses=CREATED
    ),
    "retrieve": extend_schema(operation_id="memory_edges_retrieve", parameters=[EDGE_ID], responses=OK),
    "partial_update": extend_schema(
        operation_id="memory_edges_update", parameters=[EDGE_ID], request=MemoryEdgeUpdateInputSerializer, responses=OK
    ),
    "destroy": extend_schema(operation_id="memory_edges_delete", parameters=[EDGE_ID], responses=OK),
}
