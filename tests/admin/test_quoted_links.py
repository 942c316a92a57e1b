"""Every admin page reached through a link works exactly as by typing its URL.

The admin quotes primary keys in the URLs it builds (`mem_01...` becomes
`mem_5F01...`); each custom view must unquote them the way the admin does.
These tests follow the links the pages themselves render."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.utils import quote
from django.urls import reverse

from memories.models import MemoryJob
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_create

pytestmark = pytest.mark.django_db

CONSOLE_PANELS = ('id="memory-history"', 'id="memory-source"', 'id="memory-edges"', "Redact and replace")


def _links(html: str, pattern: str) -> list[str]:
    return [href.replace("&amp;", "&") for href in re.findall(r'href="([^"]+)"', html) if re.search(pattern, href)]


def test_memory_page_reached_from_the_list_has_its_console(admin_client, make_memory, edit_memory):
    item = make_memory("The user likes oolong.")
    edit_memory(item, content="The user likes green tea.")
    changelist = admin_client.get(reverse("admin:memories_memoryitem_changelist")).content.decode()
    link = _links(changelist, r"/memoryitem/[^/]+/change/$")[0]
    assert quote(item.pk) in link and "_5F" in link
    html = admin_client.get(link).content.decode()
    for panel in CONSOLE_PANELS:
        assert panel in html, panel
    assert "Restore this version" in html and "Redact…" in html


def test_redact_links_and_redirects_keep_working(admin_client, make_memory, edit_memory):
    item = make_memory("Card 4111 1111 1111 1111.")
    edit_memory(item, content="Card removed.")
    page = admin_client.get(reverse("admin:memories_memoryitem_change", args=[quote(item.pk)])).content.decode()
    redact = _links(page, r"/redact/")[0]
    confirm = admin_client.get(redact)
    assert confirm.status_code == 200
    assert "4111 1111" in confirm.content.decode()
    done = admin_client.post(redact, {"post": "yes"}, follow=True)
    html = done.content.decode()
    assert done.redirect_chain[-1][0].endswith(f"/{quote(item.pk)}/change/")
    assert 'id="memory-history"' in html and "4111" not in html


def test_store_page_and_job_links_from_a_memory(admin_client, workspace, make_memory):
    store = memory_store_create(workspace=workspace, name="Handbook")
    from accounts.actors import Actor

    store_memory_write(workspace=workspace, store_id=store.pk, path="/a.md", content="Alpha", actor=Actor.system())
    html = admin_client.get(reverse("admin:memories_memorystore_change", args=[quote(store.pk)])).content.decode()
    assert 'id="store-tree"' in html and "a.md" in html
    job = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="chat", scope_id="c1", status="succeeded")
    item = make_memory("From a job.", source_job=job)
    page = admin_client.get(reverse("admin:memories_memoryitem_change", args=[quote(item.pk)])).content.decode()
    job_link = _links(page, r"/memoryjob/[^/]+/change/$")[0]
    assert quote(job.pk) in job_link
    job_page = admin_client.get(job_link)
    assert job_page.status_code == 200
    assert job.pk in job_page.content.decode()


def test_conversation_floor_links_open_the_memory_console(admin_client, make_memory, conversation_with_floors):
    conversation, _branch, messages = conversation_with_floors
    item = make_memory("Lives in Lisbon.", source_message_id=messages[2].pk)
    html = admin_client.get(reverse("admin:conversations_conversation_change", args=[conversation.pk])).content.decode()
    link = next(href for href in _links(html, r"/memoryitem/[^/]+/change/$") if quote(item.pk) in href)
    page = admin_client.get(link).content.decode()
    for panel in CONSOLE_PANELS:
        assert panel in page, panel
