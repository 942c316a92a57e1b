"""Django's session, login and message middleware serve the admin console
only: API requests pass them by, console pages keep all three. The CSRF
middleware is Django's own for every request."""

from __future__ import annotations

import pytest
from django.middleware.csrf import CsrfViewMiddleware
from django.test import Client, RequestFactory

from memory_project.middleware import (
    AuthenticationMiddleware,
    MessageMiddleware,
    SessionMiddleware,
    is_api_request,
)
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "api"),
    [
        ("/v1/conversations/c1/messages", True),
        ("/v1/langgraph_checkpoints/batch", True),
        ("/v1/schema/", True),
        ("/mcp", True),
        ("/v1/docs/", False),
        ("/v1/redoc/", False),
        ("/admin/", False),
        ("/admin/login/", False),
        ("/healthz", False),
        ("/v1", False),
    ],
)
def test_which_requests_are_the_apis(path, api):
    assert is_api_request(RequestFactory().get(path)) is api


def _seen_by_the_chain(path: str):
    """The request for `path` as the view saw it, after the console middleware
    in their settings order (the view must run either way)."""
    from django.http import HttpResponse

    ran = []

    def view(request):
        ran.append(request)
        return HttpResponse("ok")

    chain = SessionMiddleware(CsrfViewMiddleware(AuthenticationMiddleware(MessageMiddleware(view))))
    response = chain(RequestFactory().get(path))
    assert ran and response.status_code == 200
    return ran[0]


def test_an_api_request_passes_by_the_console_middleware():
    request = _seen_by_the_chain("/v1/conversations")
    assert not any(hasattr(request, name) for name in ("session", "user", "_messages"))


def test_a_console_request_gets_django_own():
    request = _seen_by_the_chain("/admin/")
    assert all(hasattr(request, name) for name in ("session", "user", "_messages"))


def test_csrf_is_still_enforced_on_the_console():
    """A console form posted without its CSRF token is refused; an API POST
    (authenticated by key) never needed one."""
    client = Client(enforce_csrf_checks=True)
    assert client.post("/admin/login/", {"username": "x", "password": "y"}).status_code == 403


def test_an_api_post_needs_no_csrf_token(workspace):
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {make_api_key(workspace)}")
    response = client.post("/v1/conversations", {"conversation_id": "csrf-free"}, content_type="application/json")
    assert response.status_code == 201, response.content
    assert "csrftoken" not in response.cookies and "sessionid" not in response.cookies
