"""`POST /v1/conversations/{cid}/context`: a prompt assembled from history and memory."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from conversations.views import ConversationScopedViewSet
from memories.recall.context import ContextRequest, context_assemble
from memories.recall.serializers import ContextAssembleInputSerializer
from memory_project.api import request_workspace
from memory_project.negotiation import OwnFormatNegotiation


class ConversationContextViewSet(ConversationScopedViewSet):
    # Assembly only reads (and stamps `last_used_at`), so read-only keys may call it.
    read_only_safe_actions = ("assemble",)
    serializer_class = ContextAssembleInputSerializer
    content_negotiation_class = OwnFormatNegotiation  # `?format=` names the prompt's format (raw|anthropic|openai)

    def assemble(self, request: Request, conversation_id: str) -> Response:
        data = request.data
        if "format" in request.query_params and isinstance(data, dict) and "format" not in data:
            # The query parameter works as on message reads; the body wins when both are given.
            data = {**data, "format": request.query_params["format"]}
        serializer = ContextAssembleInputSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        body = context_assemble(
            workspace=request_workspace(request), external_id=conversation_id,
            request=ContextRequest(**serializer.validated_data),
        )
        return Response({"data": body})
