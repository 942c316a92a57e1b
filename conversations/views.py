"""The conversations API (`/v1/conversations...`): thin views over services and selectors.

A conversation is addressed by the caller's own id, percent-encoded into the
path; see `services.validate_conversation_id` for what it may contain.
"""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.viewsets import GenericViewSet

import conversations.hooks as hooks
import conversations.services as services
import memory_client.formats as formats
from conversations.models import Branch, Conversation, Message
from conversations.schema import (
    PREFER_PARAMETER,
    BranchEnvelope,
    BranchList,
    ConversationCleared,
    ConversationEnvelope,
    ConversationPage,
    DeletedWithLineage,
    MessageAppendAnswer,
    MessageAppendRequest,
    MessagePage,
    MessageUpdated,
)
from conversations.selectors.branches import branch_list
from conversations.selectors.conversations import conversation_get_or_404, conversation_list
from conversations.selectors.messages import message_page
from conversations.serializers import (
    BranchCreateInputSerializer,
    BranchOutputSerializer,
    ConversationCreateInputSerializer,
    ConversationListInputSerializer,
    ConversationOutputSerializer,
    ConversationUpdateInputSerializer,
    MessageAppendInputSerializer,
    MessageBatchAppendInputSerializer,
    MessageListInputSerializer,
    MessageOutputSerializer,
    MessageUpdateInputSerializer,
    message_data,
)
from memory_project.api import request_actor, request_workspace
from memory_project.errors import ValidationError
from memory_project.negotiation import OwnFormatNegotiation

# The fields of a one-message append that a batch (`messages`) has per message.
SINGLE_MESSAGE_FIELDS = ("role", "content", "metadata")
SLASH_MESSAGE = "conversation_id: must not contain '/' (it cannot travel in a URL path segment)."


def _raw_path(request: Any) -> str:
    """The request path as the client sent it, before the server decoded it, when known."""
    django_request = getattr(request, "_request", request)
    meta = django_request.META
    raw = meta.get("RAW_URI") or meta.get("REQUEST_URI")  # gunicorn / uWSGI
    if raw is None:
        scope = getattr(django_request, "scope", None)  # ASGI servers
        raw_bytes = scope.get("raw_path") if isinstance(scope, dict) else None
        raw = raw_bytes.decode("latin-1") if isinstance(raw_bytes, bytes) else ""
    return raw.split("?", 1)[0]


def has_encoded_slash(request: Any) -> bool:
    """Whether the client percent-encoded a '/' into the path (`a%2Fb`).

    WSGI servers decode %2F before routing, so such an id either lands on the
    wrong route or on none; the root 404 handler uses this to answer 400.
    """
    return "%2f" in _raw_path(request).lower()


class ConversationScopedViewSet(GenericViewSet):
    """Base for routes under `/conversations/{conversation_id}`."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # WSGI servers decode %2F before routing, so `a%2Fb` would otherwise be
        # routed as two segments; the raw path shows what the client meant.
        if has_encoded_slash(request):
            raise ValidationError(SLASH_MESSAGE)
        if "conversation_id" in kwargs:
            services.validate_conversation_id(kwargs["conversation_id"])


def _input(serializer_class: type, data: Any) -> dict[str, Any]:
    """Query strings come as `query_params.dict()`: DRF drops a present-but-empty
    optional value of a QueryDict (`?user_id=`) as if absent, where it is a 400."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _deleted(request: Request, object_id: str, answers: dict[str, Any]) -> Response:
    """A delete answers 204 as it always did, with what the memory service
    erased along with it in the `Memory-Lineage` header (JSON); a client that
    sends `Prefer: return=representation` gets 200 and the same in the body."""
    if "return=representation" in request.headers.get("Prefer", ""):
        return Response({"data": {"id": object_id, "deleted": True}, **answers})
    headers = {}
    if "lineage" in answers:
        headers["Memory-Lineage"] = _header_json(answers["lineage"])
    return Response(status=status.HTTP_204_NO_CONTENT, headers=headers)


# A header stays well under common proxies' 8 KB limit; past this the ids are
# left out (the counts stay) and the body form has them all.
MAX_LINEAGE_HEADER_CHARS = 4000


def _header_json(value: dict[str, Any]) -> str:
    text = json.dumps(value, separators=(",", ":"))
    if len(text) > MAX_LINEAGE_HEADER_CHARS:
        text = json.dumps({**value, "memory_ids": None}, separators=(",", ":"))
    return text


def _message_data(
    messages: list, *, conversation_id: str, branch_names: dict[str, str], as_stored: bool = False
) -> list[dict[str, Any]]:
    return [
        message_data(message, conversation_id=conversation_id, branch=branch_names[message.branch_id],
                     as_stored=as_stored)
        for message in messages
    ]


class ConversationViewSet(ConversationScopedViewSet):
    queryset = Conversation.objects.none()  # for the schema; reads go through selectors
    serializer_class = ConversationOutputSerializer

    @extend_schema(parameters=[ConversationListInputSerializer], responses=ConversationPage)
    def list(self, request: Request) -> Response:
        params = _input(ConversationListInputSerializer, request.query_params.dict())
        filters = {key: params[key] for key in ("user_id", "source") if key in params}
        page = conversation_list(
            workspace=request_workspace(request),
            filters=filters,
            order=params.get("order") or "desc",
            limit=params["limit"],
            after=params.get("after"),
            before=params.get("before"),
        )
        return Response(
            {
                "data": ConversationOutputSerializer(page.conversations, many=True).data,
                "meta": {"next_cursor": page.next_cursor, "previous_cursor": page.previous_cursor},
            }
        )

    @extend_schema(request=ConversationCreateInputSerializer, responses={201: ConversationEnvelope})
    def create(self, request: Request) -> Response:
        params = _input(ConversationCreateInputSerializer, request.data)
        conversation = services.conversation_create(
            workspace=request_workspace(request),
            external_id=params["conversation_id"],
            user_id=params.get("user_id"),
            metadata=params.get("metadata"),
        )
        return Response({"data": ConversationOutputSerializer(conversation).data}, status=status.HTTP_201_CREATED)

    @extend_schema(responses=ConversationEnvelope)
    def retrieve(self, request: Request, conversation_id: str) -> Response:
        conversation = conversation_get_or_404(
            workspace=request_workspace(request), external_id=conversation_id
        )
        return Response({"data": ConversationOutputSerializer(conversation).data})

    @extend_schema(request=ConversationUpdateInputSerializer, responses=ConversationEnvelope)
    def partial_update(self, request: Request, conversation_id: str) -> Response:
        params = _input(ConversationUpdateInputSerializer, request.data)
        conversation = services.conversation_update(
            workspace=request_workspace(request),
            external_id=conversation_id,
            metadata=params.get("metadata", services.UNSET),
            user_id=params.get("user_id", services.UNSET),
        )
        return Response({"data": ConversationOutputSerializer(conversation).data})

    @extend_schema(parameters=[PREFER_PARAMETER], responses={200: DeletedWithLineage, 204: None})
    def destroy(self, request: Request, conversation_id: str) -> Response:
        with hooks.collect_answers(actor=request_actor(request)) as answers:
            services.conversation_delete(workspace=request_workspace(request), external_id=conversation_id)
        return _deleted(request, conversation_id, answers)


class MessageViewSet(ConversationScopedViewSet):
    queryset = Message.objects.none()
    serializer_class = MessageOutputSerializer
    content_negotiation_class = OwnFormatNegotiation  # `?format=` names a message format (anthropic|openai)

    @extend_schema(parameters=[MessageListInputSerializer], responses=MessagePage)
    def list(self, request: Request, conversation_id: str) -> Response:
        query = request.query_params.dict()
        params = _input(MessageListInputSerializer, query)
        own_format = params.get("format") not in ("anthropic", "openai")
        page = message_page(
            workspace=request_workspace(request),
            external_id=conversation_id,
            branch_name=params["branch"],
            limit=params["limit"],
            order=params.get("order") or "asc",
            after=params.get("after"),
            before=params.get("before"),
        )
        # The service's own format writes each message's JSON as stored;
        # the others are built from its value.
        data: Any = _message_data(page.messages, conversation_id=conversation_id, branch_names=page.branch_names,
                                  as_stored=own_format)
        if params.get("format") == "anthropic":
            data = formats.to_anthropic(data)
        elif params.get("format") == "openai":
            data = formats.to_openai(data)
        return Response(
            {"data": data, "meta": {"next_cursor": page.next_cursor, "previous_cursor": page.previous_cursor}}
        )

    @extend_schema(
        request=MessageAppendRequest,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description=(
                    "Unique per workspace. A retry with the same key answers with the first append and writes "
                    "nothing. For `{\"messages\": [...]}` each message without its own `idempotency_key` "
                    "gets `<key>:<index>`."
                ),
            )
        ],
        # A replay of an earlier append answers as the first one did (201),
        # marked `Idempotent-Replayed: true`. One message in, `{"data": {...}}`
        # out; `{"messages": [...]}` in (up to 100, all or none), `{"data": [...]}` out.
        responses={201: MessageAppendAnswer},
    )
    def create(self, request: Request, conversation_id: str) -> Response:
        workspace = request_workspace(request)
        idempotency_key = request.headers.get("Idempotency-Key")
        if isinstance(request.data, dict) and "messages" in request.data:
            # A lone message's fields beside `messages` would be dropped unseen
            # (a batch carries metadata per message, in `messages[i].metadata`).
            if any(name in request.data for name in SINGLE_MESSAGE_FIELDS):
                raise ValidationError("Give one message (role, content, metadata) or `messages`, not both.")
            params = _input(MessageBatchAppendInputSerializer, request.data)
            batch = services.messages_append(
                workspace=workspace,
                external_id=conversation_id,
                messages=services.new_messages(params["messages"], key_prefix=idempotency_key),
                user_id=params.get("user_id"),
                branch=params["branch"],
            )
            data: Any = _message_data(
                batch.messages,
                conversation_id=conversation_id,
                branch_names={message.branch_id: batch.branch_name for message in batch.messages},
            )
            created = batch.created
        else:
            params = _input(MessageAppendInputSerializer, request.data)
            result = services.message_append(
                workspace=workspace,
                external_id=conversation_id,
                role=params["role"],
                content=params["content"],
                metadata=params.get("metadata"),
                user_id=params.get("user_id"),
                branch=params["branch"],
                idempotency_key=idempotency_key,
            )
            data = message_data(result.message, conversation_id=conversation_id, branch=result.branch_name)
            created = result.created
        # The same status as the first answer, so a client that retried after a
        # lost response sees exactly what it would have seen.
        headers = None if created else {"Idempotent-Replayed": "true"}
        return Response({"data": data}, status=status.HTTP_201_CREATED, headers=headers)

    @extend_schema(operation_id="conversations_messages_clear", responses={200: ConversationCleared})
    def clear(self, request: Request, conversation_id: str) -> Response:
        workspace = request_workspace(request)
        with hooks.collect_answers(actor=request_actor(request)) as answers:
            deleted = services.messages_clear(workspace=workspace, external_id=conversation_id)
        conversation = conversation_get_or_404(workspace=workspace, external_id=conversation_id)
        return Response({
            "data": ConversationOutputSerializer(conversation).data, "meta": {"deleted_count": deleted}, **answers,
        })

    @extend_schema(request=MessageUpdateInputSerializer, responses=MessageUpdated)
    def partial_update(self, request: Request, conversation_id: str, message_id: str) -> Response:
        params = _input(MessageUpdateInputSerializer, request.data)
        with hooks.collect_answers(actor=request_actor(request)) as answers:
            message = services.message_update(
                workspace=request_workspace(request),
                external_id=conversation_id,
                message_id=message_id,
                content=params.get("content", services.UNSET),
                metadata=params.get("metadata", services.UNSET),
            )
        data = MessageOutputSerializer(message, context={"conversation_id": conversation_id}).data
        return Response({"data": data, **answers})

    @extend_schema(parameters=[PREFER_PARAMETER], responses={200: DeletedWithLineage, 204: None})
    def destroy(self, request: Request, conversation_id: str, message_id: str) -> Response:
        with hooks.collect_answers(actor=request_actor(request)) as answers:
            services.message_delete(
                workspace=request_workspace(request), external_id=conversation_id, message_id=message_id
            )
        return _deleted(request, message_id, answers)


class BranchViewSet(ConversationScopedViewSet):
    queryset = Branch.objects.none()
    serializer_class = BranchOutputSerializer

    @extend_schema(responses=BranchList)
    def list(self, request: Request, conversation_id: str) -> Response:
        conversation = conversation_get_or_404(
            workspace=request_workspace(request), external_id=conversation_id
        )
        branches = branch_list(conversation=conversation)
        return Response({"data": BranchOutputSerializer(branches, many=True).data})

    @extend_schema(request=BranchCreateInputSerializer, responses={201: BranchEnvelope})
    def create(self, request: Request, conversation_id: str) -> Response:
        params = _input(BranchCreateInputSerializer, request.data)
        branch = services.branch_create(
            workspace=request_workspace(request),
            external_id=conversation_id,
            name=params["name"],
            from_message_id=params["from_message_id"],
        )
        return Response({"data": BranchOutputSerializer(branch).data}, status=status.HTTP_201_CREATED)
