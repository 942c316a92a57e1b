"""The console's main flows in a real headless Chromium."""

from __future__ import annotations

import re

import pytest

from accounts.actors import Actor
from memories.models import MemoryItem, MemoryVersion
from memories.services.items import memory_item_update
from tests.factories import MemoryItemFactory, WorkspaceFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]




@pytest.fixture
def workspace():
    return WorkspaceFactory(name="Acme", slug="acme")


def test_dashboard(page, shot, workspace):
    MemoryItemFactory(workspace=workspace, content="The user drinks coffee every morning.")
    MemoryItemFactory(workspace=workspace, content="Summary of the onboarding call.", type="summary", summary_tier="micro")
    page.goto(f"{page.base_url}/admin/")
    shot(page, "01_index")
    page.click("text=Dashboard")
    page.wait_for_selector("#created-chart svg")
    assert page.locator("#totals-table").inner_text().count("fact") >= 1
    assert page.locator("#created-chart rect").count() == 30
    shot(page, "02_dashboard")


def test_filter_and_search_memories(page, shot, workspace):
    MemoryItemFactory(workspace=workspace, content="用户喜欢喝咖啡，每天早上一杯。", fact_key="drink")
    MemoryItemFactory(workspace=workspace, content="The user lives in Lisbon.", fact_key="city", confidence=0.2)
    MemoryItemFactory(workspace=workspace, content="Weekly summary: planning the trip.", type="summary", summary_tier="micro")
    page.goto(f"{page.base_url}/admin/memories/memoryitem/")
    assert page.locator("#result_list tbody tr").count() == 3
    page.click("#changelist-filter details[data-filter-title='type'] >> text=fact")
    page.wait_for_url(re.compile(r"type__exact=fact"))
    assert page.locator("#result_list tbody tr").count() == 2
    page.fill("#searchbar", "咖啡")
    page.press("#searchbar", "Enter")
    page.wait_for_url(re.compile(r"q="))
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 1
    assert "咖啡" in rows.first.inner_text()
    shot(page, "03_memories_filtered_search")


def test_batch_deprecate(page, shot, workspace):
    items = [MemoryItemFactory(workspace=workspace, content=f"Fact number {i} about the user.") for i in range(3)]
    page.goto(f"{page.base_url}/admin/memories/memoryitem/")
    for item in items[:2]:
        page.check(f"input.action-select[value='{item.pk}']")
    page.select_option("select[name=action]", "deprecate_selected")
    page.click("button[name=index]")
    page.wait_for_selector("ul.messagelist li")
    message = page.locator("ul.messagelist li").first.inner_text()
    assert "2 succeeded, 0 skipped, 0 failed" in message
    shot(page, "04_batch_deprecated")
    statuses = dict(MemoryItem.objects.values_list("pk", "status"))
    assert [statuses[i.pk] for i in items] == ["deprecated", "deprecated", "active"]


def test_restore_a_version(page, shot, workspace):
    item = MemoryItemFactory(workspace=workspace, content="The user's dog is called Rex.")
    memory_item_update(workspace=workspace, actor=Actor.system(), memory_id=item.pk, changes={"content": "The user's dog is called Max."})
    page.goto(f"{page.base_url}/admin/memories/memoryitem/{item.pk}/change/")
    page.wait_for_selector("#memory-history .word-diff ins.w-add")
    shot(page, "05_memory_page_history")
    first = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    page.click(f"#version-{first.pk} input.restore-button")
    page.wait_for_selector("ul.messagelist li.success")
    assert "Restored version 1 as version 3" in page.locator("ul.messagelist").inner_text()
    item.refresh_from_db()
    assert item.content == "The user's dog is called Rex."
    assert item.version == 3
    latest = MemoryVersion.objects.get(memory_id=item.pk, version=3)
    assert latest.actor_type == "user"
    shot(page, "06_memory_restored")


def test_redact_a_version_with_confirmation(page, shot, workspace):
    item = MemoryItemFactory(workspace=workspace, content="My card number is 4111 1111 1111 1111.")
    memory_item_update(workspace=workspace, actor=Actor.system(), memory_id=item.pk, changes={"content": "The user shared payment details (removed)."})
    old = MemoryVersion.objects.get(memory_id=item.pk, version=1)
    page.goto(f"{page.base_url}/admin/memories/memoryitem/{item.pk}/change/")
    page.click(f"#version-{old.pk} a.redact-link")
    page.wait_for_selector("table.confirm-table")
    assert "4111 1111" in page.locator("table.confirm-table").inner_text()
    shot(page, "07_redact_confirmation")
    page.click("input[value='Yes, redact this version']")
    page.wait_for_selector("ul.messagelist li.success")
    old.refresh_from_db()
    assert old.redacted_at is not None and old.content is None
    assert "4111" not in page.content()
    shot(page, "08_after_redaction")


def test_conversation_with_its_memories(page, shot, workspace):
    from conversations.models import Branch, Conversation, Message

    conversation = Conversation.objects.create(
        workspace=workspace, external_id="support-chat-7", message_count=3,
        metadata={"summary": "The user wants a refund for order 1234.", "summarized_until": 3},
    )
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=4)
    texts = [("user", "Hi, I want a refund for order 1234."), ("assistant", "Sure, let me check."), ("user", "I prefer email contact.")]
    messages = [
        Message.objects.create(workspace=workspace, conversation=conversation, branch=branch, floor_no=i + 1, role=role, content=text)
        for i, (role, text) in enumerate(texts)
    ]
    MemoryItemFactory(workspace=workspace, content="The user prefers email contact.", fact_key="contact", source_message_id=messages[2].pk)
    MemoryItemFactory(workspace=workspace, content="Refund requested for order 1234.", type="open_loop", source_message_id=messages[0].pk)
    page.goto(f"{page.base_url}/admin/conversations/conversation/{conversation.pk}/change/")
    page.wait_for_selector("#floors .floor")
    assert page.locator("#floors .floor").count() == 3
    assert "prefers email" in page.locator(f"#floor-{branch.pk}-3 .floor-memories").inner_text()
    assert "refund" in page.locator("#rolling-summary").inner_text()
    shot(page, "09_conversation")


def test_review_queue_approve(page, shot):
    reviewed = WorkspaceFactory(name="Careful", slug="careful", requires_review=True)
    pending = MemoryItemFactory(workspace=reviewed, content="The user is allergic to peanuts.", lifecycle_status="pending")
    page.goto(f"{page.base_url}/admin/memories/reviewitem/")
    assert page.locator("#result_list tbody tr").count() == 1
    shot(page, "10_review_queue")
    page.click("a:has-text('allergic to peanuts')")
    page.fill("#id_content", "The user is severely allergic to peanuts.")
    page.click("input[name=_approve]")
    page.wait_for_selector("ul.messagelist li.success")
    pending.refresh_from_db()
    assert pending.lifecycle_status == "active"
    assert pending.content == "The user is severely allergic to peanuts."
    shot(page, "11_review_queue_after_approve")


def test_store_tree_and_jobs(page, shot, workspace):
    from memories.models import MemoryJob
    from memories.services.store_memories import store_memory_write
    from memories.services.stores import memory_store_create

    store = memory_store_create(workspace=workspace, name="Team handbook")
    for path in ["/readme.md", "/policies/leave.md", "/policies/travel.md", "/onboarding/day1.md"]:
        store_memory_write(workspace=workspace, store_id=store.pk, path=path, content=f"Text of {path}", actor=Actor.system())
    page.goto(f"{page.base_url}/admin/memories/memorystore/{store.pk}/change/")
    page.click("#store-tree a:has-text('policies/')")
    page.wait_for_url(re.compile(r"prefix=%2Fpolicies%2F|prefix=/policies/"))
    assert page.locator("#store-tree .tree-document").count() == 2
    shot(page, "12_store_tree")
    MemoryJob.objects.create(
        workspace=workspace, kind="extract", scope="chat", scope_id="chat-9", status="failed",
        error="Traceback (most recent call last):\n  File \"extract.py\", line 10\nTimeoutError: provider timed out",
    )
    page.goto(f"{page.base_url}/admin/memories/memoryjob/?status__exact=failed")
    assert page.locator("#result_list tbody tr").count() == 1
    shot(page, "13_jobs_failed")
    page.click("#result_list tbody tr a >> nth=0")
    assert "TimeoutError: provider timed out" in page.locator(".field-error_display .error-full").inner_text()
    shot(page, "14_job_error")
