from rest_framework.routers import SimpleRouter

from memories.urls_stores import store_urlpatterns
from memories.views.edges import MemoryEdgeViewSet
from memories.views.items import MemoryItemViewSet
from memories.views.jobs import MemoryJobViewSet, MemoryScopeViewSet

router = SimpleRouter(trailing_slash=False)
router.register("memories", MemoryItemViewSet, basename="memory-item")
router.register("memory_edges", MemoryEdgeViewSet, basename="memory-edge")
router.register("memory_jobs", MemoryJobViewSet, basename="memory-job")
router.register("memory_scopes", MemoryScopeViewSet, basename="memory-scope")

urlpatterns = [*router.urls, *store_urlpatterns]
