"""The floors the benchmarks compare the service's hot paths with, served by
the same gunicorn, through the same middleware, authentication, permission
and throttle as every API view (under `/v1/`, so the console-only middleware
is skipped for them as for the API):

- `GET /v1/bench/floor/ping`: an authenticated DRF view that does nothing.
- `POST /v1/bench/floor/insert`: an authenticated DRF view that inserts one row
  (the request's JSON, into `bench_floor_rows`, created by the benchmark) and
  commits.
"""

from __future__ import annotations

import json

from django.db import connection, transaction
from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView

from memory_project.urls import handler400, handler404, handler500  # noqa: F401 - the service's own error pages

TABLE = "bench_floor_rows"


class FloorPing(APIView):
    def get(self, request):
        return Response({"data": "pong"})


class FloorInsert(APIView):
    def post(self, request):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {TABLE} (workspace_id, body) VALUES (%s, %s)",  # noqa: S608 - a constant table name
                [request.auth.workspace_id, json.dumps(request.data)],
            )
        return Response({"data": "inserted"}, status=201)


urlpatterns = [
    path("v1/bench/floor/ping", FloorPing.as_view()),
    path("v1/bench/floor/insert", FloorInsert.as_view()),
    path("", include("memory_project.urls")),
]
