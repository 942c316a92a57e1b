"""One summary message per admin action, at the level its outcome deserves, and
the confirmation page every destructive action goes through."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.contrib import messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse

from memory_project.errors import DomainError

# How many distinct failure reasons the summary quotes; the rest are counted.
MAX_QUOTED_ERRORS = 3


@dataclass
class Outcome:
    """Tally of a batch: rows done, rows already in the wanted state, rows refused."""

    verb: str
    succeeded: int = 0
    skipped: int = 0
    failed: int = 0
    reasons: Counter = field(default_factory=Counter)

    def attempt(self, service, /, **kwargs) -> bool:
        """Call one service for one row and count the result: a DomainError is a
        refused row (its message is quoted in the report), anything else raises."""
        try:
            service(**kwargs)
        except DomainError as error:
            self.fail(error)
            return False
        self.succeeded += 1
        return True

    def fail(self, error: Exception) -> None:
        self.failed += 1
        self.reasons[error.message if isinstance(error, DomainError) else str(error)] += 1

    @property
    def level(self) -> int:
        if self.failed and not self.succeeded:
            return messages.ERROR
        if self.failed or (self.skipped and not self.succeeded):
            return messages.WARNING
        return messages.SUCCESS

    def text(self) -> str:
        parts = [f"{self.verb}: {self.succeeded} succeeded, {self.skipped} skipped, {self.failed} failed."]
        for reason, count in self.reasons.most_common(MAX_QUOTED_ERRORS):
            parts.append(f"{reason} (×{count})" if count > 1 else reason)
        return " ".join(parts)

    def report(self, modeladmin, request) -> None:
        modeladmin.message_user(request, self.text(), self.level)


def confirmation_page(
    modeladmin,
    request,
    queryset,
    *,
    action: str,
    title: str,
    question: str,
    rows: list,
    template: str = "admin/memories/action_confirmation.html",
    danger: bool = True,
    extra: dict | None = None,
) -> TemplateResponse:
    """The page an action shows before it changes anything; posting it back
    with `post=yes` runs the action for real on the same selection."""
    opts = modeladmin.model._meta
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "subtitle": None,
        "question": question,
        "rows": rows,
        "queryset": queryset,
        "opts": opts,
        "action": action,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "selected_ids": [str(pk) for pk in queryset.values_list("pk", flat=True)],
        "danger": danger,
        "media": modeladmin.media,
        **(extra or {}),
    }
    request.current_app = modeladmin.admin_site.name
    return TemplateResponse(request, template, context)
