from rest_framework.routers import SimpleRouter

from memories.urls_stores import store_urlpatterns

router = SimpleRouter(trailing_slash=False)

urlpatterns = [*router.urls, *store_urlpatterns]
