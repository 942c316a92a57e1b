"""Endpoints of the framework adapters: thin, parse -> service/selector -> `{"data": ...}`."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

import framework_state.selectors as selectors
import framework_state.services.checkpoints as checkpoints
import framework_state.services.claude as claude
import framework_state.services.openai as openai
import framework_state.services.store as store
from conversations.models import Message
from framework_state.models import AgentSession, Checkpoint
from framework_state.schema import (
    checkpoint_schema,
    claude_session_schema,
    langgraph_store_schema,
    openai_items_schema,
)
from framework_state.serializers import (
    CheckpointListQuerySerializer,
    CheckpointTupleQuerySerializer,
    ProjectQuerySerializer,
    SessionItemsQuerySerializer,
    SessionKeyQuerySerializer,
    encode_checkpoint_cursor,
)
from memory_project.api import request_actor, request_workspace
from memory_project.errors import ValidationError


def _query(serializer_class, request) -> dict[str, Any]:
    # A plain dict, not the QueryDict: DRF drops a present-but-empty optional
    # form value (`?limit=`) as if absent; here it is validated (400).
    serializer = serializer_class(data=request.query_params.dict())
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _items_limit(request) -> int | None:
    """`?limit=` of an OpenAI session read (`SessionItemsQuerySerializer`)."""
    return _query(SessionItemsQuerySerializer, request).get("limit")


def _checkpoint_key(body: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint a write names: its thread, namespace (default the root
    one) and id, as the checkpoint services take them."""
    return {"thread_id": body.get("thread_id"), "checkpoint_ns": body.get("checkpoint_ns", ""),
            "checkpoint_id": body.get("checkpoint_id")}


def _body(request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ValidationError("The request body must be a JSON object.")
    return request.data


@extend_schema_view(**claude_session_schema)
class ClaudeSessionViewSet(viewsets.GenericViewSet):
    """`/v1/claude_sessions`: Claude Agent SDK `SessionStore` operations."""

    queryset = AgentSession.objects.none()  # for the schema generator only

    def list(self, request):
        params = _query(ProjectQuerySerializer, request)
        return Response({"data": selectors.session_list(workspace=request_workspace(request), **params)})

    @action(detail=False, methods=["post"])
    def append(self, request):
        body = _body(request)
        key = claude.clean_key(
            project_key=body.get("project_key"), session_id=body.get("session_id"), subpath=body.get("subpath")
        )
        summary = body.get("summary")
        if summary is not None and not isinstance(summary, dict):
            raise ValidationError("summary: must be an object {data, expected_version}.")
        # Checked even without `data`, so a wrong type is never silently ignored.
        version = (summary or {}).get("expected_version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise ValidationError("summary.expected_version: must be an integer.")
        outcome = claude.session_entries_append(
            workspace=request_workspace(request),
            key=key,
            entries=body.get("entries"),
            summary_data=(summary or {}).get("data"),
            expected_summary_version=(summary or {}).get("expected_version"),
        )
        return Response(
            {
                "data": {
                    "appended": outcome.appended,
                    "mtime": outcome.mtime,
                    "summary": outcome.summary,
                    "summary_version": outcome.summary_version,
                }
            }
        )

    @action(detail=False, methods=["get"])
    def entries(self, request):
        key = claude.clean_key(**_query(SessionKeyQuerySerializer, request))
        return Response({"data": selectors.session_entries_load(workspace=request_workspace(request), key=key)})

    @action(detail=False, methods=["post"], url_path="delete")
    def delete_key(self, request):
        body = _body(request)
        key = claude.clean_key(
            project_key=body.get("project_key"), session_id=body.get("session_id"), subpath=body.get("subpath")
        )
        claude.session_key_delete(workspace=request_workspace(request), key=key)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @action(detail=False, methods=["get"])
    def summaries(self, request):
        params = _query(ProjectQuerySerializer, request)
        return Response({"data": selectors.session_summary_list(workspace=request_workspace(request), **params)})

    @action(detail=False, methods=["get"])
    def summary(self, request):
        params = _query(SessionKeyQuerySerializer, request)
        params.pop("subpath", None)
        return Response({"data": selectors.session_summary_get(workspace=request_workspace(request), **params)})

    @action(detail=False, methods=["get"])
    def subkeys(self, request):
        params = _query(SessionKeyQuerySerializer, request)
        params.pop("subpath", None)
        return Response({"data": selectors.session_subkeys(workspace=request_workspace(request), **params)})


class OpenAISessionItemsViewSet(viewsets.GenericViewSet):
    """`/v1/openai_sessions/{session_id}/items`: OpenAI Agents SDK `Session` operations."""

    queryset = Message.objects.none()  # for the schema generator only

    @openai_items_schema["list"]
    def list(self, request, session_id: str):
        limit = _items_limit(request)
        items = selectors.session_items(workspace=request_workspace(request), session_id=session_id, limit=limit)
        return Response({"data": items})

    @openai_items_schema["create"]
    def create(self, request, session_id: str):
        body = _body(request)
        added = openai.session_items_add(
            workspace=request_workspace(request),
            session_id=session_id,
            items=body.get("items"),
            idempotency_key=request.headers.get("Idempotency-Key") or None,
        )
        return Response({"data": {"added": added}}, status=status.HTTP_201_CREATED)

    @openai_items_schema["clear"]
    def clear(self, request, session_id: str):
        openai.session_items_clear(workspace=request_workspace(request), session_id=session_id)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @openai_items_schema["pop"]
    def pop(self, request, session_id: str):
        item = openai.session_item_pop(workspace=request_workspace(request), session_id=session_id)
        return Response({"data": item})


@extend_schema_view(**checkpoint_schema)
class CheckpointViewSet(viewsets.GenericViewSet):
    """`/v1/langgraph_checkpoints`: LangGraph `BaseCheckpointSaver` operations."""

    queryset = Checkpoint.objects.none()  # for the schema generator only

    def list(self, request):
        params = _query(CheckpointListQuerySerializer, request)
        rows, cursor = selectors.checkpoint_page(
            workspace=request_workspace(request),
            thread_id=params.get("thread_id"),
            checkpoint_ns=params.get("checkpoint_ns"),
            checkpoint_id=params.get("checkpoint_id") or None,
            before=params.get("before") or None,
            metadata_filter=params.get("filter"),
            limit=params["limit"],
            cursor=params.get("cursor"),
        )
        return Response({"data": rows, "meta": {"next_cursor": encode_checkpoint_cursor(cursor)}})

    def create(self, request):
        body = _body(request)
        row = checkpoints.checkpoint_put(
            workspace=request_workspace(request),
            **_checkpoint_key(body),
            parent_checkpoint_id=body.get("parent_checkpoint_id"),
            type=body.get("type"),
            checkpoint=body.get("checkpoint"),
            metadata=body.get("metadata", {}),
        )
        return Response(
            {"data": {"thread_id": body["thread_id"], "checkpoint_ns": row.checkpoint_ns, "checkpoint_id": row.checkpoint_id}},
            status=status.HTTP_201_CREATED,
        )

    @action(detail=False, methods=["get"], url_path="tuple")
    def get_tuple(self, request):
        params = _query(CheckpointTupleQuerySerializer, request)
        found = selectors.checkpoint_tuple(
            workspace=request_workspace(request),
            thread_id=params["thread_id"],
            checkpoint_ns=params["checkpoint_ns"],
            checkpoint_id=params.get("checkpoint_id") or None,
        )
        return Response({"data": found})

    @action(detail=False, methods=["post"])
    def writes(self, request):
        body = _body(request)
        stored = checkpoints.checkpoint_writes_put(
            workspace=request_workspace(request),
            **_checkpoint_key(body),
            task_id=body.get("task_id"),
            task_path=body.get("task_path", ""),
            writes=body.get("writes"),
        )
        return Response({"data": {"written": stored}})

    @action(detail=False, methods=["post"])
    def batch(self, request):
        results = checkpoints.checkpoint_batch(workspace=request_workspace(request), ops=_body(request).get("ops"))
        return Response({"data": results})

    @action(detail=False, methods=["post"])
    def delete_thread(self, request):
        checkpoints.thread_delete(workspace=request_workspace(request), thread_id=_body(request).get("thread_id"))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @action(detail=False, methods=["post"])
    def delete_for_runs(self, request):
        deleted = checkpoints.checkpoints_delete_for_runs(
            workspace=request_workspace(request), run_ids=_body(request).get("run_ids")
        )
        return Response({"data": {"deleted": deleted}})

    @action(detail=False, methods=["post"])
    def copy_thread(self, request):
        body = _body(request)
        copied = checkpoints.thread_copy(
            workspace=request_workspace(request),
            source_thread_id=body.get("source_thread_id"),
            target_thread_id=body.get("target_thread_id"),
        )
        return Response({"data": {"copied": copied}})

    @action(detail=False, methods=["post"])
    def prune(self, request):
        body = _body(request)
        removed = checkpoints.threads_prune(
            workspace=request_workspace(request),
            thread_ids=body.get("thread_ids"),
            strategy=body.get("strategy", "keep_latest"),
        )
        return Response({"data": {"deleted": removed}})


@extend_schema_view(**langgraph_store_schema)
class LangGraphStoreViewSet(viewsets.GenericViewSet):
    """`/v1/langgraph_store/batch`: LangGraph `BaseStore.batch` over memory-store documents."""

    # A batch of gets and searches only reads; the service refuses puts for a read-only key.
    read_only_safe_actions = ("batch",)

    @action(detail=False, methods=["post"])
    def batch(self, request):
        body = _body(request)
        results = store.store_batch(
            workspace=request_workspace(request),
            store_id=body.get("store_id"),
            ops=body.get("ops"),
            actor=request_actor(request),
            read_only=request.auth.read_only,
        )
        return Response({"data": results})
