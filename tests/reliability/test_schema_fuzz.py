"""Property-based fuzzing of every operation in `/v1/schema/` (schemathesis).

For each operation, generated valid and invalid requests go through the real
WSGI application with a real key: no response may be a 500, every response
must match what the schema documents for its status, and requests that break
the schema must be refused.

Not checked: that every schema-valid request is accepted. The schema cannot
say that two query parameters are mutually exclusive or that an id must
exist, so such requests are rightly refused with a 400 or 404.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.factories import make_api_key
from tests.reliability.world import build_world

# Bounded so the whole run stays within a couple of minutes on two cores.
MAX_EXAMPLES = 8

# Operations with a known defect outside this module, each failing for the
# stated reason. Not strict: schemathesis's pytest plugin asserts on the report
# of a strict XPASS (no exception info) and aborts the whole session with an
# INTERNALERROR; a fixed operation shows up as XPASS in the summary instead.
KNOWN_DEFECTS: dict[str, str] = {}

# The schema endpoint is public and reads no table, so it is loaded once at
# collection: one test per operation, named after it. (The lazy
# `schemathesis.pytest.from_fixture` loader reads a pytest-internal attribute
# that pytest 9 no longer has.)
schema = schemathesis.openapi.from_wsgi("/v1/schema/", get_wsgi_application())


@pytest.fixture
def world_key(workspace, api) -> str:
    # Real objects exist, so list and search operations have rows to render.
    build_world(api, workspace)
    return make_api_key(workspace, name="fuzz")


@pytest.fixture
def fuzz_key(world_key, _keep_the_test_connection) -> str:
    return world_key


@pytest.fixture
def _keep_the_test_connection():
    """The real WSGI handler closes "obsolete" connections when a request
    starts and ends; inside the test's transaction that would close it. Django's
    own test client unhooks the same handler around each of its requests (and
    hooks it back, so this runs after the last test-client request)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _known_defects(request):
    label = request.node.name.partition("[")[2].rstrip("]")
    if label in KNOWN_DEFECTS:
        request.applymarker(pytest.mark.xfail(strict=False, reason=KNOWN_DEFECTS[label]))


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_every_operation_survives_generated_input(case, fuzz_key):
    case.call_and_validate(
        headers={"Authorization": f"Bearer {fuzz_key}"}, excluded_checks=[positive_data_acceptance]
    )


def test_the_schema_documents_the_error_shape_everywhere():
    raw = schema.raw_schema
    assert "ErrorResponse" in raw["components"]["schemas"]
    operations = [
        (path, method, op)
        for path, item in raw["paths"].items()
        for method, op in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]
    assert len(operations) > 20
    for path, method, op in operations:
        for status in ("400", "401", "404", "429"):
            assert status in op["responses"], (method, path, status)
