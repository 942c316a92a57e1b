from __future__ import annotations

from django.conf import settings
from django.db import models

from memory_project.ids import new_api_key_id, new_workspace_id


class Workspace(models.Model):
    """The tenant: every row of the service belongs to exactly one workspace."""

    id = models.CharField(primary_key=True, max_length=40, default=new_workspace_id, editable=False)
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    # When set, memories the pipeline extracts start as `pending` and are never
    # injected into context until an operator approves them.
    requires_review = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiKey(models.Model):
    """An agent's credential for one workspace.

    The secret is shown once at creation; only its SHA-256 is stored. A key has
    256 bits of entropy, so a fast hash is enough (no stretching needed), and the
    lookup goes by the public `prefix` before a constant-time digest comparison.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_api_key_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    read_only = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class WorkspaceMembership(models.Model):
    """A staff user's access to one workspace in the admin console.

    Operators see and act on the objects of their workspaces only; superusers
    see every workspace without memberships. What an operator may do there is
    still decided by their Django permissions (a reviewer, a redactor ...)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workspace_memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace__name", "user_id"]
        # Also the index behind every admin page of an operator, which filters
        # by "the workspaces of user X".
        constraints = [models.UniqueConstraint(fields=["user", "workspace"], name="uniq_workspace_membership")]

    def __str__(self) -> str:
        return f"user {self.user_id} in {self.workspace_id}"
