"""Memory jobs and scope states over REST (spec 003's advanced endpoints)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

import memories.selectors.jobs as selectors
import memories.services.jobs as job_services
import memories.services.scopes as scope_services
from memories.models import MemoryJob, ScopeState
from memories.serializers.jobs import MemoryJobOutputSerializer, ScopeActionInputSerializer, ScopeStateOutputSerializer
from memories.views.items import paginate, validated
from memories.views.job_schema import JOB_SCHEMA, SCOPE_SCHEMA
from memory_project.api import request_workspace


@extend_schema_view(**JOB_SCHEMA)
class MemoryJobViewSet(viewsets.GenericViewSet):
    lookup_url_kwarg = "job_id"
    queryset = MemoryJob.objects.none()  # for the schema generator only (path parameter types)
    serializer_class = MemoryJobOutputSerializer

    def list(self, request: Request) -> Response:
        queryset = selectors.memory_job_list(workspace=request_workspace(request), filters=request.query_params)
        return Response(paginate(queryset, request.query_params, MemoryJobOutputSerializer))

    def retrieve(self, request: Request, job_id: str) -> Response:
        job = selectors.memory_job_get(workspace=request_workspace(request), job_id=job_id)
        return Response({"data": MemoryJobOutputSerializer(job).data})

    @action(detail=True, methods=["post"])
    def retry(self, request: Request, job_id: str) -> Response:
        job = job_services.memory_job_retry(workspace=request_workspace(request), job_id=job_id)
        return Response({"data": MemoryJobOutputSerializer(job).data})

    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, job_id: str) -> Response:
        job = job_services.memory_job_cancel(workspace=request_workspace(request), job_id=job_id)
        return Response({"data": MemoryJobOutputSerializer(job).data})


@extend_schema_view(**SCOPE_SCHEMA)
class MemoryScopeViewSet(viewsets.GenericViewSet):
    queryset = ScopeState.objects.none()  # for the schema generator only
    serializer_class = ScopeStateOutputSerializer

    def list(self, request: Request) -> Response:
        queryset = selectors.scope_state_list(workspace=request_workspace(request), filters=request.query_params)
        return Response(paginate(queryset, request.query_params, ScopeStateOutputSerializer))

    @action(detail=False, methods=["post"])
    def rebuild(self, request: Request) -> Response:
        data = validated(ScopeActionInputSerializer, request)
        job = scope_services.scope_rebuild_request(workspace=request_workspace(request), **data)
        return Response({"data": MemoryJobOutputSerializer(job).data}, status=status.HTTP_202_ACCEPTED)

    @action(detail=False, methods=["post"])
    def compact(self, request: Request) -> Response:
        data = validated(ScopeActionInputSerializer, request)
        job = scope_services.scope_compact_request(workspace=request_workspace(request), **data)
        return Response({"data": MemoryJobOutputSerializer(job).data}, status=status.HTTP_202_ACCEPTED)
