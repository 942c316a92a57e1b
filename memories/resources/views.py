"""`GET/PUT /v1/conversations/{conversation_id}/resources`: the memory stores
attached to a conversation. PUT replaces the list (and creates the conversation
when it does not exist yet); GET of an unknown conversation is 404."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import memories.resources.selectors as selectors
import memories.resources.services as services
from conversations.schema import envelope
from conversations.views import ConversationScopedViewSet
from memories.resources.models import ConversationResource
from memories.resources.serializers import ConversationResourcesInputSerializer, resources_payload
from memory_project.api import request_workspace

_RESOURCES = envelope(
    "ConversationResources",
    data=inline_serializer(
        "ConversationResourcesData",
        {"conversation_id": serializers.CharField(), "resources": serializers.ListField(child=serializers.DictField())},
    ),
)


class ConversationResourceViewSet(ConversationScopedViewSet):
    queryset = ConversationResource.objects.none()  # for the schema generator only
    serializer_class = ConversationResourcesInputSerializer

    @extend_schema(operation_id="conversations_resources_list", responses=_RESOURCES)
    def list(self, request: Request, conversation_id: str) -> Response:
        conversation, attached = selectors.conversation_resources_get(
            workspace=request_workspace(request), external_id=conversation_id
        )
        return Response(resources_payload(conversation.external_id, attached))

    @extend_schema(
        operation_id="conversations_resources_replace", request=ConversationResourcesInputSerializer, responses=_RESOURCES
    )
    def replace(self, request: Request, conversation_id: str) -> Response:
        serializer = ConversationResourcesInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        attached = services.conversation_resources_set(
            workspace=request_workspace(request),
            external_id=conversation_id,
            resources=serializer.validated_data["resources"],
        )
        return Response(resources_payload(conversation_id, attached))
