"""All test factories in one place."""

from __future__ import annotations

import factory

from accounts.models import Workspace
from accounts.services import api_key_create


class WorkspaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Workspace

    name = factory.Sequence(lambda n: f"Workspace {n}")
    slug = factory.Sequence(lambda n: f"workspace-{n}")


def make_api_key(workspace: Workspace, *, read_only: bool = False, name: str = "test") -> str:
    """A real key through the service; returns the raw secret."""
    return api_key_create(workspace=workspace, name=name, read_only=read_only).raw_key
