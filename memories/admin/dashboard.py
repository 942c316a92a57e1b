"""The review console's dashboard: what is in memory, what waits for a human,
what the pipeline is doing and what it has cost. Every figure is one
aggregate query, so the page costs the same at any volume."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, Sum
from django.http import Http404
from django.template.response import TemplateResponse

import memories.admin.trends as trends
from accounts.admin_scope import scope_queryset, visible_workspaces
from accounts.models import Workspace
from memories.admin.filters import compaction_due_q
from memories.admin.labels import scope_text
from memories.models import JobStatus, LifecycleStatus, MemoryItem, MemoryJob, MemoryType, ScopeState
from memories.recall.embeddings import get_embedding_provider
from memories.recall.models import RecallEntry

DUE_SCOPES_SHOWN = 10


def memory_totals(items) -> dict:
    """{type: {lifecycle: n, "total": n}} plus column totals."""
    table: dict[str, dict[str, int]] = {t: {s: 0 for s in LifecycleStatus.values} for t in MemoryType.values}
    for row in items.order_by().values("type", "lifecycle_status").annotate(n=Count("id")):
        table.setdefault(row["type"], {s: 0 for s in LifecycleStatus.values})[row["lifecycle_status"]] = row["n"]
    rows = [(kind, [counts.get(s, 0) for s in LifecycleStatus.values], sum(counts.values())) for kind, counts in table.items()]
    column_totals = [sum(row[1][i] for row in rows) for i in range(len(LifecycleStatus.values))]
    return {
        "statuses": LifecycleStatus.values,
        "rows": rows,
        "column_totals": column_totals,
        "grand_total": sum(column_totals),
    }


def vector_totals(*, workspace: Workspace | None, request=None) -> dict:
    """Recall entries with and without a vector of the current model: a
    workspace whose entries have none ranks by words alone, silently."""
    provider = get_embedding_provider()
    entries = RecallEntry.objects.all()
    if request is not None:
        entries = scope_queryset(entries, request)
    if workspace is not None:
        entries = entries.filter(workspace=workspace)
    if provider is None:
        return {"provider": None, "total": 0, "missing": 0}
    row = entries.order_by().aggregate(total=Count("id"), missing=Count("id", filter=~Q(embedding_model=provider.name)))
    return {"provider": provider.name, **row}


def dashboard_context(*, workspace: Workspace | None, request=None, range_key: str | None = None) -> dict:
    """The figures over one workspace, or over every workspace the operator of
    `request` may see (all of them without a request)."""
    items = MemoryItem.objects.all()
    jobs = MemoryJob.objects.all()
    scopes = ScopeState.objects.all()
    if request is not None:
        items, jobs, scopes = (scope_queryset(rows, request) for rows in (items, jobs, scopes))
    if workspace is not None:
        items, jobs, scopes = items.filter(workspace=workspace), jobs.filter(workspace=workspace), scopes.filter(workspace=workspace)
    job_counts = dict(jobs.order_by().values_list("status").annotate(n=Count("id")))
    due = scopes.filter(compaction_due_q())
    range_key, range_label, width, buckets = trends.time_range(range_key)
    bars = trends.created_series(items, buckets, width)
    job_trend = trends.job_series(jobs, buckets, width)
    return {
        "totals": memory_totals(items),
        "review_queue": items.filter(lifecycle_status="pending", workspace__requires_review=True).count(),
        "pending_anywhere": items.filter(lifecycle_status="pending").count(),
        "jobs": {status: job_counts.get(status, 0) for status in JobStatus.values},
        "due_count": due.count(),
        "due_scopes": [
            (scope, scope_text(scope.scope, scope.scope_id))
            for scope in due.select_related("workspace").order_by("-micro_count")[:DUE_SCOPES_SHOWN]
        ],
        "tokens": list(
            jobs.order_by()
            .values("workspace_id", "workspace__name")
            .annotate(input=Sum("input_tokens"), output=Sum("output_tokens"), jobs=Count("id"))
            .filter(Q(input__gt=0) | Q(output__gt=0))
            .order_by("-input")
        ),
        "vectors": vector_totals(workspace=workspace, request=request),
        "bars": bars,
        "chart_total": sum(int(bar.value) for bar in bars),
        "job_trend": job_trend,
        "ranges": [(key, label) for key, (label, _width, _count) in trends.RANGES.items()],
        "range_key": range_key,
        "range_label": range_label,
        "chart_width": trends.chart_width(buckets),
        "chart_height": trends.CHART_HEIGHT,
        "bar_width": trends.BAR_WIDTH,
    }


def dashboard_view(modeladmin, request):
    # The figures describe memories: whoever may not view them may not see this.
    if not modeladmin.has_view_or_change_permission(request):
        raise PermissionDenied
    workspaces = visible_workspaces(request)
    workspace = None
    workspace_id = request.GET.get("workspace")
    if workspace_id:
        workspace = workspaces.filter(pk=workspace_id).first()
        if workspace is None:
            raise Http404("No such workspace.")
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Memory dashboard",
        "opts": modeladmin.opts,
        "workspaces": workspaces.order_by("name").only("id", "name"),
        "workspace": workspace,
        **dashboard_context(workspace=workspace, request=request, range_key=request.GET.get("range")),
    }
    request.current_app = modeladmin.admin_site.name
    return TemplateResponse(request, "admin/memories/dashboard.html", context)
