"""Content negotiation for the API: DRF's, with the common case answered
without parsing.

Nearly every API call sends `Accept: */*` (httpx, curl, the client and its
adapters) or no Accept header at all. DRF's negotiation still parses the
header into media types, orders them by precedence and matches each renderer
against each, a tenth of a small request (bench/README.md). For those
headers, and for an Accept naming the first renderer's media type exactly,
the answer is known: the first renderer, and the media type DRF would
accept. Anything else (a list, parameters such as `indent=4`, a `?format=`
override, a format suffix) goes through DRF's own negotiation unchanged.
"""

from __future__ import annotations

from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.settings import APISettings


class ApiContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request: Any, renderers: list[Any], format_suffix: str | None = None) -> tuple[Any, str]:
        if renderers and format_suffix is None and not self._may_override_format(request):
            first = renderers[0]
            accept = request.META.get("HTTP_ACCEPT")
            # DRF: `*/*` is matched by the first renderer, accepted as that
            # renderer's own media type; an exact media type, as it was asked.
            if accept is None or accept in ("*/*", first.media_type):
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)

    def _may_override_format(self, request: Any) -> bool:
        # A cheap test of the raw query string; when it may name the format
        # parameter, DRF's negotiation reads the query as it always does.
        name = self.settings.URL_FORMAT_OVERRIDE
        return bool(name) and name in request.META.get("QUERY_STRING", "")


class OwnFormatNegotiation(ApiContentNegotiation):
    """For views where `?format=` names a format of the view's own (a message
    or prompt dialect, a tool schema), not a DRF renderer."""

    settings = APISettings(user_settings={"URL_FORMAT_OVERRIDE": None})
