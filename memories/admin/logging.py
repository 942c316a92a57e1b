"""Admin log entries that never carry memory text.

The admin writes `str(obj)` into `LogEntry.object_repr` and a field summary
into `change_message`. A memory's `__str__` is its path, and paths are cleared
by redaction, so a log entry that quoted one would outlive the redaction. These
entries name the row by id and type only.
"""

from __future__ import annotations

import json

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model


def safe_repr(obj: Model) -> str:
    kind = getattr(obj, "type", None) or obj._meta.model_name
    return f"{obj.pk} ({kind})"[:200]


def _log(request, obj: Model, flag: int, message: str | list) -> LogEntry:
    return LogEntry.objects.create(
        user_id=request.user.pk,
        content_type_id=ContentType.objects.get_for_model(obj, for_concrete_model=False).pk,
        object_id=str(obj.pk),
        object_repr=safe_repr(obj),
        action_flag=flag,
        change_message=message if isinstance(message, str) else _field_names_only(message),
    )


def _field_names_only(message: list) -> str:
    """Keep only the names of changed fields from the admin's structured message."""
    kept = []
    for entry in message or []:
        for verb, detail in entry.items():
            fields = detail.get("fields") if isinstance(detail, dict) else None
            kept.append({verb: {"fields": list(fields)} if fields else {}})
    return json.dumps(kept)


class ContentFreeLogMixin:
    """For ModelAdmins of rows that hold memory content or paths."""

    def log_addition(self, request, obj, message):
        return _log(request, obj, ADDITION, message)

    def log_change(self, request, obj, message):
        return _log(request, obj, CHANGE, message)

    def log_deletions(self, request, queryset):
        return [_log(request, obj, DELETION, "") for obj in queryset]
