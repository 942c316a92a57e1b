"""All test factories in one place.

Rows whose invariants a service owns are built through that service, so a
test's data is what the API would have written: an API key's hash, a
conversation's main branch and counters, a message's floor number and the
branch's counters, a memory's first version. Each factory takes the
service's own keyword arguments; `workspace` defaults to a new one.

    item = MemoryItemFactory(workspace=workspace, content="The user likes tea.")
    messages = MessageFactory.create_batch(3, workspace=workspace, conversation="c1")
"""

from __future__ import annotations

import factory

from accounts.actors import Actor
from accounts.models import ApiKey, Workspace
from accounts.services import api_key_create
from conversations.models import Branch, Conversation, Message
from conversations.services import conversation_get_or_create, message_append
from memories.models import MemoryItem, MemoryStore
from memories.services.items import memory_item_create
from memories.services.stores import memory_store_create


class WorkspaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Workspace

    name = factory.Sequence(lambda n: f"Workspace {n}")
    slug = factory.Sequence(lambda n: f"workspace-{n}")


class _ServiceFactory(factory.Factory):
    """A factory whose `create` calls a service (`_service`) with the
    declared fields as keyword arguments; `build` is not offered (a row
    outside its service would skip what the service guarantees)."""

    class Meta:
        abstract = True
        strategy = factory.CREATE_STRATEGY

    @classmethod
    def _build(cls, model_class, *args, **kwargs):
        raise TypeError(f"{cls.__name__} creates through its service; use create().")


class ApiKeyFactory(_ServiceFactory):
    """An API key (`api_key_create`); the raw secret is on `key.raw_key`."""

    class Meta:
        model = ApiKey

    workspace = factory.SubFactory(WorkspaceFactory)
    name = "test"
    read_only = False

    @classmethod
    def _create(cls, model_class, **kwargs):
        created = api_key_create(**kwargs)
        created.api_key.raw_key = created.raw_key
        return created.api_key


def make_api_key(workspace: Workspace, *, read_only: bool = False, name: str = "test") -> str:
    """A real key through the service; returns the raw secret."""
    return ApiKeyFactory(workspace=workspace, read_only=read_only, name=name).raw_key


class ConversationFactory(_ServiceFactory):
    """A conversation with its main branch (`conversation_get_or_create`)."""

    class Meta:
        model = Conversation

    workspace = factory.SubFactory(WorkspaceFactory)
    external_id = factory.Sequence(lambda n: f"conversation-{n}")

    @classmethod
    def _create(cls, model_class, **kwargs):
        return conversation_get_or_create(**kwargs)[0]


class MessageFactory(_ServiceFactory):
    """One message appended (`message_append`) to the conversation named
    `conversation` (an external id; created when new), alternating roles
    unless `role` is given."""

    class Meta:
        model = Message
        rename = {"conversation": "external_id"}

    workspace = factory.SubFactory(WorkspaceFactory)
    conversation = "c1"
    role = factory.Sequence(lambda n: "user" if n % 2 == 0 else "assistant")
    content = factory.Sequence(lambda n: f"message {n}")

    @classmethod
    def _create(cls, model_class, **kwargs):
        return message_append(**kwargs).message


def append_messages(workspace: Workspace, conversation: str, messages: list[dict], *, branch: str = "main") -> list:
    """`messages` ({"role", "content", ...}) appended one by one, in order: the messages stored."""
    return [MessageFactory(workspace=workspace, conversation=conversation, branch=branch, **message)
            for message in messages]


def written_floors(workspace: Workspace, external_id: str, texts: list[str]) -> tuple[Conversation, list[Message]]:
    """A conversation whose main branch holds `texts` as floors 1..n, the
    first said by the user and the roles alternating, written as rows
    (no service runs: nothing is extracted or indexed), for the pages that
    only read conversations."""
    conversation = Conversation.objects.create(workspace=workspace, external_id=external_id, message_count=len(texts))
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=len(texts) + 1)
    messages = [Message.objects.create(workspace=workspace, conversation=conversation, branch=branch, floor_no=n,
                                       role="user" if n % 2 else "assistant", content=text)
                for n, text in enumerate(texts, start=1)]
    return conversation, messages


class MemoryItemFactory(_ServiceFactory):
    """A memory with its `created` version (`memory_item_create`): a global
    fact by default, written by the system actor."""

    class Meta:
        model = MemoryItem

    workspace = factory.SubFactory(WorkspaceFactory)
    actor = factory.LazyFunction(Actor.system)
    scope = "global"
    type = "fact"
    content = factory.Sequence(lambda n: f"The user's fact number {n}.")

    @classmethod
    def _create(cls, model_class, **kwargs):
        return memory_item_create(**kwargs)


class MemoryStoreFactory(_ServiceFactory):
    """A memory store (`memory_store_create`)."""

    class Meta:
        model = MemoryStore

    workspace = factory.SubFactory(WorkspaceFactory)
    name = factory.Sequence(lambda n: f"store-{n}")

    @classmethod
    def _create(cls, model_class, **kwargs):
        return memory_store_create(**kwargs)
