from django.contrib import admin
from django.core.exceptions import DisallowedHost
from django.http import JsonResponse
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from agent_tools.mcp.views import McpView
from conversations.views import SLASH_MESSAGE, has_encoded_slash
from memory_project.api import error_body
from memory_project.middleware import invalid_request_response
from memory_project.views import favicon, healthz, readyz, root

api_patterns = [
    path("", include("conversations.urls")),
    path("", include("framework_state.urls")),
    path("", include("memories.urls")),
    path("", include("agent_tools.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include(api_patterns)),
    path("", root, name="root"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("favicon.ico", favicon, name="favicon"),
    re_path(r"^mcp/?$", McpView.as_view(), name="mcp"),
]


def handler400(request, exception=None):
    """Django's answer to a request it refuses before any view (a Host header
    not in ALLOWED_HOSTS, a form with too many fields), in the API's shape."""
    if isinstance(exception, DisallowedHost):
        return invalid_request_response(
            "The Host header names a host this service does not answer for (ALLOWED_HOSTS).")
    return invalid_request_response("The request is malformed.")


def handler404(request, exception=None):

    if request.path.startswith("/v1/conversations/") and has_encoded_slash(request):
        return invalid_request_response(SLASH_MESSAGE)
    return JsonResponse(error_body("not_found_error", f"No route for {request.path}."), status=404)


handler500 = "memory_project.middleware.server_error"
