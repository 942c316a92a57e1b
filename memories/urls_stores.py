"""Routes of the memory-store API (`/v1/memory_stores/...`), without trailing
slashes, as the `anthropic` SDK calls them."""

from django.urls import path

from memories.views.stores import MemoryStoreViewSet, MemoryVersionAliasViewSet, MemoryVersionViewSet, MemoryViewSet

_versions = MemoryVersionViewSet.as_view({"get": "list"})
_version = MemoryVersionViewSet.as_view({"get": "retrieve"})
_redact = MemoryVersionViewSet.as_view({"post": "redact"})
_alias_versions = MemoryVersionAliasViewSet.as_view({"get": "list"})
_alias_version = MemoryVersionAliasViewSet.as_view({"get": "retrieve"})
_alias_redact = MemoryVersionAliasViewSet.as_view({"post": "redact"})

store_urlpatterns = [
    path("memory_stores", MemoryStoreViewSet.as_view({"get": "list", "post": "create"}), name="memory-store-list"),
    path(
        "memory_stores/<str:store_id>",
        MemoryStoreViewSet.as_view({"get": "retrieve", "post": "update", "delete": "destroy"}),
        name="memory-store-detail",
    ),
    path(
        "memory_stores/<str:store_id>/archive",
        MemoryStoreViewSet.as_view({"post": "archive"}),
        name="memory-store-archive",
    ),
    path(
        "memory_stores/<str:store_id>/memories",
        MemoryViewSet.as_view({"get": "list", "post": "create"}),
        name="memory-store-memories",
    ),
    path(
        "memory_stores/<str:store_id>/memories/<str:memory_id>",
        MemoryViewSet.as_view({"get": "retrieve", "post": "update", "put": "put_versioned", "delete": "destroy"}),
        name="memory-store-memory-detail",
    ),
    path("memory_stores/<str:store_id>/memory_versions", _versions, name="memory-store-versions"),
    path("memory_stores/<str:store_id>/memory_versions/<str:version_id>", _version, name="memory-store-version"),
    path(
        "memory_stores/<str:store_id>/memory_versions/<str:version_id>/redact",
        _redact,
        name="memory-store-version-redact",
    ),
    # Spec 001 spells the version routes `/versions/...`.
    path("memory_stores/<str:store_id>/versions", _alias_versions, name="memory-store-versions-alias"),
    path("memory_stores/<str:store_id>/versions/<str:version_id>", _alias_version, name="memory-store-version-alias"),
    path(
        "memory_stores/<str:store_id>/versions/<str:version_id>/redact",
        _alias_redact,
        name="memory-store-version-redact-alias",
    ),
]
