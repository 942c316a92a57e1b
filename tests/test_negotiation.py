"""The API's content negotiation answers as DRF's does, for every Accept
header and query: the short path only skips the parsing."""

from __future__ import annotations

import pytest
from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, StaticHTMLRenderer
from rest_framework.request import Request
from rest_framework.settings import APISettings
from rest_framework.test import APIRequestFactory

from memory_project.negotiation import ApiContentNegotiation, OwnFormatNegotiation
from memory_project.renderers import ApiJSONRenderer

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "application/json;indent=2",
    "text/html",
    "text/html, application/json;q=0.9, */*;q=0.8",
    "application/*",
    "image/png",
    "",
    " */*",
]
QUERIES = ["", "?format=json", "?format=api", "?format=xml", "?q=information&limit=5", "?format=anthropic"]
RENDERER_SETS = [
    [ApiJSONRenderer()],
    [ApiJSONRenderer(), BrowsableAPIRenderer()],
    [BrowsableAPIRenderer(), ApiJSONRenderer()],
    [StaticHTMLRenderer(), ApiJSONRenderer()],
]


class _NoFormatOverride(DefaultContentNegotiation):
    settings = APISettings(user_settings={"URL_FORMAT_OVERRIDE": None})


def _outcome(negotiation, accept, query, renderers, suffix):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/v1/anything{query}", **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers, suffix)
    except (NotAcceptable, Http404) as exc:
        return type(exc).__name__
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("renderers", RENDERER_SETS, ids=lambda rs: "+".join(type(r).__name__ for r in rs))
@pytest.mark.parametrize("suffix", [None, "json", "api"])
@pytest.mark.parametrize(("ours", "drf"), [(ApiContentNegotiation, DefaultContentNegotiation),
                                           (OwnFormatNegotiation, _NoFormatOverride)], ids=["api", "own-format"])
def test_every_answer_is_drfs(ours, drf, suffix, renderers):
    for accept in ACCEPTS:
        for query in QUERIES:
            expected = _outcome(drf(), accept, query, renderers, suffix)
            assert _outcome(ours(), accept, query, renderers, suffix) == expected, (accept, query)


def test_the_api_answers_as_asked(api):
    api.post("/v1/conversations", {"id": "negotiated"}, format="json")
    plain = api.get("/v1/conversations", HTTP_ACCEPT="*/*")
    indented = api.get("/v1/conversations", HTTP_ACCEPT="application/json; indent=2")
    assert plain.status_code == indented.status_code == 200
    assert plain["Content-Type"] == "application/json"
    assert b"\n  " in indented.content and b"\n" not in plain.content
    assert plain.json() == indented.json()
    refused = api.get("/v1/conversations", HTTP_ACCEPT="text/html")
    assert refused.status_code == 406 and refused.json()["error"]["type"]
