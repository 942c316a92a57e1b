from django.urls import re_path
from rest_framework.routers import SimpleRouter

from memories.recall.views import ConversationContextViewSet
from memories.resources.views import ConversationResourceViewSet
from memories.urls_stores import store_urlpatterns
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
    *store_urlpatterns,
    # Under the conversation's path, as spec 002 puts it; served by recall.
    re_path(r"^conversations/(?P<conversation_id>[^/]+)/context$",
            ConversationContextViewSet.as_view({"post": "assemble"}), name="conversation-context"),
    # The memory stores attached to a conversation (spec 004's session resources).
    re_path(r"^conversations/(?P<conversation_id>[^/]+)/resources$",
            ConversationResourceViewSet.as_view({"get": "list", "put": "replace"}), name="conversation-resources"),
]
