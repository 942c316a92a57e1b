"""Forms for the memory pages. The edit form carries the version it was
rendered from, so a save over someone else's newer change is refused."""

from __future__ import annotations

from django import forms

import memories.services.item_rules as rules
from accounts.actors import Actor
from memories.models import MemoryItem
from memory_project.errors import DomainError


class ContentField(forms.CharField):
    """Memory text as typed: no stripping, and the CRLF line breaks browsers
    submit folded back to LF, so an untouched textarea is not a change."""

    def __init__(self, **kwargs):
        kwargs["strip"] = False
        kwargs.pop("max_length", None)
        super().__init__(**kwargs)

    def to_python(self, value):
        value = super().to_python(value)
        return value.replace("\r\n", "\n") if isinstance(value, str) else value


EDITABLE_FIELDS = ("content", "fact_key", "due_date", "metadata", "importance", "confidence", "status",
                   "lifecycle_status", "summary_tier")


class MemoryItemForm(forms.ModelForm):
    expected_version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)

    class Meta:
        model = MemoryItem
        fields = EDITABLE_FIELDS
        field_classes = {"content": ContentField}
        widgets = {"content": forms.Textarea(attrs={"rows": 8, "cols": 100}),
                   "metadata": forms.Textarea(attrs={"rows": 3, "cols": 100})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["expected_version"] = self.instance.version

    def clean(self):
        cleaned = super().clean()
        expected = cleaned.get("expected_version")
        # An early, friendly check so the operator keeps what they typed; the
        # service repeats it under the row lock, which is what really decides.
        if self.instance.pk and expected is not None:
            current = MemoryItem.objects.filter(pk=self.instance.pk).values_list("version", flat=True).first()
            if current is not None and current != expected:
                raise forms.ValidationError(
                    f"This memory was changed by someone else (now version {current}, you edited version "
                    f"{expected}). Reload the page to see their change, then apply yours again.",
                    code="stale_version",
                )
        self._check_rules(cleaned)
        return cleaned

    def _check_rules(self, cleaned: dict) -> None:
        """The service's field rules, run early so a refusal keeps the input."""
        changed = set(self.changed_data)
        try:
            if "content" in changed:
                rules.clean_content(cleaned.get("content") or "")
            if "metadata" in changed:
                rules.clean_metadata(cleaned.get("metadata"))
            if changed & {"status", "lifecycle_status"}:
                rules.resolve_statuses(
                    current_status=self.instance.status,
                    current_lifecycle=self.instance.lifecycle_status,
                    status=cleaned.get("status") if "status" in changed else None,
                    lifecycle=cleaned.get("lifecycle_status") if "lifecycle_status" in changed else None,
                    # Operators approve; the form is only ever used by one.
                    actor=Actor.for_user(0),
                )
        except DomainError as error:
            raise forms.ValidationError(error.message, code="rule") from error

    def changes(self) -> dict:
        """Only the fields the operator actually changed."""
        return {name: self.cleaned_data[name] for name in self.changed_data if name in EDITABLE_FIELDS}


class MemoryCreateForm(forms.ModelForm):
    class Meta:
        model = MemoryItem
        fields = (
            "workspace",
            "scope",
            "scope_id",
            "type",
            "summary_tier",
            "content",
            "fact_key",
            "importance",
            "confidence",
        )
        field_classes = {"content": ContentField}
        widgets = {"content": forms.Textarea(attrs={"rows": 8, "cols": 100})}


class RedactAndReplaceForm(forms.Form):
    content = ContentField(
        widget=forms.Textarea(attrs={"rows": 6, "cols": 100}),
        help_text="The memory's new content. Every earlier version is cleared for good.",
    )
    expected_version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)


class RedactEverywhereForm(forms.Form):
    """A text to redact across one of the operator's workspaces."""

    workspace = forms.ModelChoiceField(queryset=None, empty_label=None)
    text = forms.CharField(
        min_length=4, max_length=2000, strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 100}),
        help_text="The exact text (at least 4 characters). Every copy in the workspace's messages, memories, "
                  "versions and summaries is cleared.",
    )
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, workspaces, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].queryset = workspaces
