"""`POST /v1/conversations/{cid}/context`: a prompt assembled from history and memory."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from conversations.context.serializers import ContextAssembleInputSerializer
from conversations.context.services import ContextRequest, context_assemble
from conversations.views import ConversationScopedViewSet
from memory_project.api import request_workspace


class ConversationContextViewSet(ConversationScopedViewSet):
    # Assembly only reads (and stamps `last_used_at`), so read-only keys may call it.
    read_only_safe_actions = ("assemble",)
    serializer_class = ContextAssembleInputSerializer

    def assemble(self, request: Request, conversation_id: str) -> Response:
        serializer = ContextAssembleInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        body = context_assemble(
            workspace=request_workspace(request), external_id=conversation_id,
            request=ContextRequest(**serializer.validated_data),
        )
        return Response({"data": body})
