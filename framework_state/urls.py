from django.urls import re_path
from rest_framework.routers import SimpleRouter

from framework_state.views import (
    CheckpointViewSet,
    ClaudeSessionViewSet,
    LangGraphStoreViewSet,
    OpenAISessionItemsViewSet,
)

router = SimpleRouter(trailing_slash=False)
router.register("claude_sessions", ClaudeSessionViewSet, basename="claude-session")
router.register("langgraph_checkpoints", CheckpointViewSet, basename="langgraph-checkpoint")
router.register("langgraph_store", LangGraphStoreViewSet, basename="langgraph-store")

# An OpenAI session id is a conversation id: one percent-encoded path segment.
SID = r"(?P<session_id>[^/]+)"

urlpatterns = [
    *router.urls,
    re_path(
        rf"^openai_sessions/{SID}/items$",
        OpenAISessionItemsViewSet.as_view({"get": "list", "post": "create", "delete": "clear"}),
        name="openai-session-items",
    ),
    re_path(
        rf"^openai_sessions/{SID}/items/pop$",
        OpenAISessionItemsViewSet.as_view({"post": "pop"}),
        name="openai-session-items-pop",
    ),
]
