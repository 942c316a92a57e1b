from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import cache_control, never_cache
from django.views.decorators.http import require_safe

from memories.recall.dense import recall_vector_cache_report
from memory_project.readiness import readiness_report

# The console's icon: browsers ask for /favicon.ico on every page, and a 404
# there fills the access log. An SVG answers at that path in every browser.
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
    '<rect width="64" height="64" rx="14" fill="#417690"/>'
    '<path d="M16 46V18l16 16 16-16v28" fill="none" stroke="#f5dd5d" stroke-width="7" '
    'stroke-linecap="round" stroke-linejoin="round"/></svg>'
)


def healthz(request):

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    # What this worker holds of recall vectors, against its limit.
    return JsonResponse({"status": "ok", "recall_vectors": recall_vector_cache_report()})


@require_safe
def root(request):
    """What lives here, for whoever opens the bare address: the API's docs,
    schema and console, and the probes."""
    return JsonResponse({
        "service": "memory service",
        "api": "/v1/",
        "docs": "/v1/docs/",
        "redoc": "/v1/redoc/",
        "schema": "/v1/schema/",
        "admin": "/admin/",
        "mcp": "/mcp",
        "healthz": "/healthz",
        "readyz": "/readyz",
    })


@require_safe
@never_cache
def readyz(request):
    """Readiness: 200 when the database, the broker and a worker answer, else
    503 with what failed (see `memory_project.readiness`)."""
    report = readiness_report()
    return JsonResponse(report, status=200 if report["status"] == "ready" else 503)


@require_safe
@cache_control(max_age=86400, public=True)
def favicon(request):
    return HttpResponse(FAVICON_SVG, content_type="image/svg+xml")
