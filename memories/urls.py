from django.urls import re_path
from rest_framework.routers import SimpleRouter

from memories.recall.views import ConversationContextViewSet
from memories.urls_stores import store_urlpatterns
from memories.views.agent_tools import AgentToolViewSet
from memories.views.edges import MemoryEdgeViewSet
from memories.views.items import MemoryItemViewSet
from memories.views.jobs import MemoryJobViewSet, MemoryScopeViewSet


class MemoryRouter(SimpleRouter):
    """The default routes, plus DELETE on a list route for a viewset with a
    `destroy_all` action (`DELETE /memories?user_id=...`)."""

    routes = [SimpleRouter.routes[0]._replace(mapping={**SimpleRouter.routes[0].mapping, "delete": "destroy_all"}),
              *SimpleRouter.routes[1:]]


router = MemoryRouter(trailing_slash=False)
router.register("memories", MemoryItemViewSet, basename="memory-item")
router.register("memory_edges", MemoryEdgeViewSet, basename="memory-edge")
router.register("memory_jobs", MemoryJobViewSet, basename="memory-job")
router.register("memory_scopes", MemoryScopeViewSet, basename="memory-scope")

urlpatterns = [
    *router.urls,
    re_path(r"^agent_tools$", AgentToolViewSet.as_view({"get": "catalogue"}), name="agent-tool-list"),
    re_path(r"^agent_tools/(?P<tool_name>[^/]+)$", AgentToolViewSet.as_view({"post": "execute"}),
            name="agent-tool-execute"),
    *store_urlpatterns,
    # Under the conversation's path, as spec 002 puts it; served by recall.
    re_path(r"^conversations/(?P<conversation_id>[^/]+)/context$",
            ConversationContextViewSet.as_view({"post": "assemble"}), name="conversation-context"),
]
