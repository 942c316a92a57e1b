from __future__ import annotations

import pytest

from accounts.actors import Actor
from conversations.models import Branch, Conversation, Message
from memories.services.items import memory_item_update
from tests.factories import WorkspaceFactory


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The admin user's password is hashed on every test; the production hasher
    # is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def review_workspace(db):
    return WorkspaceFactory(name="Reviewed", slug="reviewed", requires_review=True)


@pytest.fixture
def edit_memory():
    def edit(item, **changes):
        return memory_item_update(workspace=item.workspace, actor=Actor.system(), memory_id=item.pk, changes=changes)

    return edit


@pytest.fixture
def conversation_with_floors(workspace):
    """A conversation with four floors on its main branch, written directly
    (the admin only reads conversations)."""
    conversation = Conversation.objects.create(workspace=workspace, external_id="chat-42", message_count=4)
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=5)
    texts = ["你好，我喜欢喝咖啡", "好的，记住了", "I live in Lisbon", "Noted: Lisbon"]
    messages = [
        Message.objects.create(
            workspace=workspace,
            conversation=conversation,
            branch=branch,
            floor_no=i + 1,
            role="user" if i % 2 == 0 else "assistant",
            content=text,
        )
        for i, text in enumerate(texts)
    ]
    conversation.metadata = {"summary": "User likes coffee and lives in Lisbon.", "summarized_until": 4}
    conversation.save(update_fields=["metadata"])
    return conversation, branch, messages
