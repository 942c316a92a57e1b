from django.urls import re_path
from rest_framework.routers import SimpleRouter

from conversations.views import BranchViewSet, ConversationViewSet, MessageViewSet

router = SimpleRouter(trailing_slash=False)

# A conversation id is the caller's business id, percent-encoded into one path
# segment: anything but "/" (Django matches against the decoded path).
CID = r"(?P<conversation_id>[^/]+)"
MID = r"(?P<message_id>[^/]+)"

urlpatterns = [
    *router.urls,
    re_path(r"^conversations$", ConversationViewSet.as_view({"get": "list", "post": "create"}), name="conversation-list"),
    re_path(
        rf"^conversations/{CID}$",
        ConversationViewSet.as_view({"get": "retrieve", "patch": "partial_update", "delete": "destroy"}),
        name="conversation-detail",
    ),
    re_path(
        rf"^conversations/{CID}/messages$",
        MessageViewSet.as_view({"get": "list", "post": "create", "delete": "clear"}),
        name="conversation-messages",
    ),
    re_path(
        rf"^conversations/{CID}/messages/{MID}$",
        MessageViewSet.as_view({"patch": "partial_update", "delete": "destroy"}),
        name="conversation-message-detail",
    ),
    re_path(
        rf"^conversations/{CID}/branches$",
        BranchViewSet.as_view({"get": "list", "post": "create"}),
        name="conversation-branches",
    ),
]
