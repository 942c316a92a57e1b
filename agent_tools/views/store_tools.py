"""The agent's memory tools over HTTP:

- `GET /v1/memory_stores/{sid}/tools?format=anthropic|openai|openai_responses
  [&conversation_id=]`: the tool definitions (only the read tools when the
  store is attached read-only to that conversation).
- `POST /v1/memory_stores/{sid}/tools/{name}` with `{"input": {...},
  "conversation_id": "..."}`: runs the tool. With a conversation, the store
  must be attached to it, a `read_only` attachment refuses write tools (403),
  and the versions written record the conversation as a `session_actor`.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.actors import Actor
from agent_tools.store_tools import memory_tool_execute, tool_definitions
from conversations.selectors.conversations import conversation_get_or_404
from memories.models import MemoryStore
from memories.resources.models import AccessMode
from memories.resources.selectors import conversation_store_access
from memories.selectors.stores import memory_store_exists
from memories.views.store_schema import schema_for_generic_methods, tool_schema
from memories.views.stores import MemoryStoreDialectMixin
from memory_project.api import request_workspace
from memory_project.errors import PermissionDeniedError, ValidationError
from memory_project.negotiation import OwnFormatNegotiation


class MemoryToolExecuteInputSerializer(serializers.Serializer):
    input = serializers.JSONField(required=False)
    conversation_id = serializers.CharField(required=False, allow_null=True, trim_whitespace=False)


def _access(request: Request, store: MemoryStore, conversation_id: str | None) -> tuple[str | None, str | None]:
    """(access, denial reason) for this caller and conversation."""
    if conversation_id is None:
        return None, None
    conversation = conversation_get_or_404(workspace=request_workspace(request), external_id=conversation_id)
    access = conversation_store_access(conversation=conversation, store_id=store.pk)
    if access is None:
        raise PermissionDeniedError(f"Memory store '{store.pk}' is not attached to conversation '{conversation_id}'.")
    return access, f"Memory store '{store.pk}' is attached read-only to conversation '{conversation_id}'."


@extend_schema_view(**schema_for_generic_methods(tool_schema, "execute"))
class MemoryToolViewSet(MemoryStoreDialectMixin, viewsets.GenericViewSet):
    """The agent memory tools of one store: definitions and execution."""

    content_negotiation_class = OwnFormatNegotiation  # `?format=` names the tool format
    queryset = MemoryStore.objects.none()  # for the schema generator only
    serializer_class = MemoryToolExecuteInputSerializer
    # Read tools are allowed with a read-only key; the executor refuses the
    # write tools for such a key (403).
    read_only_safe_actions = ("execute",)

    def list(self, request: Request, store_id: str) -> Response:
        store = memory_store_exists(workspace=request_workspace(request), store_id=store_id)
        fmt = request.query_params.get("format", "anthropic")
        access, _ = _access(request, store, request.query_params.get("conversation_id") or None)
        writable = access != AccessMode.READ_ONLY and not request.auth.read_only
        label = f"{store.name}" + (f" - {store.description}" if store.description else "")
        tools = tool_definitions(fmt=fmt, store_label=label, writable=writable)
        return Response({"format": fmt, "memory_store_id": store.pk, "data": tools})

    @tool_schema["execute"]
    def execute(self, request: Request, store_id: str, tool_name: str) -> Response:
        serializer = MemoryToolExecuteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = serializer.validated_data
        conversation_id = data.get("conversation_id") or None
        store = memory_store_exists(workspace=request_workspace(request), store_id=store_id)
        access, denial = _access(request, store, conversation_id)
        if request.auth.read_only:
            can_write, denial = False, "This API key is read-only."
        else:
            can_write = access != AccessMode.READ_ONLY
        tool_input = data.get("input", {})
        if tool_input is None:
            raise ValidationError("input must be an object.")
        result = memory_tool_execute(
            store=store,
            name=tool_name,
            tool_input=tool_input,
            actor=Actor.for_api_key(request.auth.pk, session_id=conversation_id),
            can_write=can_write,
            denial=denial or "",
        )
        return Response(result.to_wire())
