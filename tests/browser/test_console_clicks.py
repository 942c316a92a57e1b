"""The console as an operator reaches it: every page by clicking from the
admin index (never a typed URL), at a laptop's 1280 px and a desktop's
1920 px, with no list or confirmation page scrolling sideways."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from conversations.models import Branch, Conversation, Message
from memories.models import MemoryItem, MemoryJob
from memories.services.items import memory_item_update
from tests.browser.console import fits, home
from tests.factories import MemoryItemFactory, WorkspaceFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = [1280, 1920]


def at_width(page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})


@pytest.fixture
def world():
    """A workspace under review with a conversation, memories drawn from its
    floors, a job that wrote some of them, and an edited memory."""
    workspace = WorkspaceFactory(name="Careful Health", slug="careful", requires_review=True)
    conversation = Conversation.objects.create(
        workspace=workspace, external_id="support:u1001:c2002", message_count=3,
        metadata={"summary": "The user is allergic to peanuts and prefers email.", "summarized_until": 3},
    )
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=4)
    texts = [("user", "I am allergic to peanuts."), ("assistant", "Noted, no peanuts."), ("user", "Please contact me by email.")]
    messages = [
        Message.objects.create(workspace=workspace, conversation=conversation, branch=branch, floor_no=i + 1, role=r, content=t)
        for i, (r, t) in enumerate(texts)
    ]
    job = MemoryJob.objects.create(
        workspace=workspace, kind="extract", scope="branch", scope_id='["support:u1001:c2002","main"]', status="succeeded",
        result={"facts": 2, "summaries": 0, "last_processed_floor_no": 3},
    )
    scope = {"scope": "branch", "scope_id": '["support:u1001:c2002","main"]'}
    allergy = MemoryItemFactory(workspace=workspace, content="The user is allergic to peanuts.", fact_key="user.allergy", lifecycle_status="pending",
                      source_message_id=messages[0].pk, source_job=job, confidence=0.6, **scope)
    contact = MemoryItemFactory(workspace=workspace, content="The user prefers email contact.", fact_key="user.contact", lifecycle_status="pending",
                      source_message_id=messages[2].pk, source_job=job, confidence=0.4, **scope)
    edited = MemoryItemFactory(workspace=workspace, content="Card number 4111 1111 1111 1111 on file.", fact_key="user.card", **scope)
    memory_item_update(workspace=workspace, actor=Actor.system(), memory_id=edited.pk, changes={"content": "Card on file (number removed)."})
    for i in range(30):
        MemoryItemFactory(workspace=workspace, content=f"Filler fact {i} about the user's travel preferences and budget.", fact_key=f"user.pref_{i}")
    return {"allergy": allergy, "contact": contact, "edited": edited, "job": job, "conversation": conversation}


@pytest.mark.parametrize("width", WIDTHS)
def test_list_to_memory_to_redaction_and_back(page, shot, world, width):
    at_width(page, width)
    home(page)
    page.click("#console-shortcuts a:has-text('Memories')")
    page.wait_for_selector("#result_list")
    fits(page)
    shot(page, f"{width}_memories_list")
    page.click("#searchbar")
    page.fill("#searchbar", "Card on file")
    page.press("#searchbar", "Enter")
    page.click("#result_list a:has-text('Card on file')")
    # The page reached by the list's (quoted) link has its whole console.
    page.wait_for_selector("#memory-history .word-diff del.w-del")
    assert page.locator("#memory-history .version-row").count() == 2
    assert page.locator("input.restore-button").count() == 1
    assert page.locator("a.redact-link").count() == 1
    assert page.locator("#memory-source").count() == 1 and page.locator("#memory-edges").count() == 1
    assert page.locator(".object-tools a:has-text('Redact and replace')").count() == 1
    fits(page)
    shot(page, f"{width}_memory_page")
    page.click("a.redact-link")
    page.wait_for_selector("table.confirm-table")
    assert "4111 1111" in page.locator("table.confirm-table").inner_text()
    fits(page)
    shot(page, f"{width}_redact_confirmation")
    page.click("a.cancel-link")
    page.wait_for_selector("#memory-history")
    page.click(".object-tools a:has-text('Redact and replace')")
    page.wait_for_selector("#redact-replace-form")
    fits(page)
    shot(page, f"{width}_redact_and_replace")


@pytest.mark.parametrize("width", WIDTHS)
def test_review_queue_inline_approve_and_reject(page, shot, world, width):
    at_width(page, width)
    home(page)
    page.click("#console-shortcuts a:has-text('Review queue')")
    page.wait_for_selector("#result_list")
    fits(page)
    rows = page.locator("#result_list tbody tr")
    assert rows.count() == 2
    # Least confident first, each beside the message it came from.
    assert "prefers email" in rows.nth(0).inner_text() and "Please contact me by email." in rows.nth(0).inner_text()
    assert "I am allergic to peanuts." in rows.nth(1).inner_text()
    shot(page, f"{width}_review_queue")
    rows.nth(0).locator("button.reject-button").click()
    page.wait_for_selector("ul.messagelist li.success")
    assert page.locator("#result_list tbody tr").count() == 1
    page.locator("#result_list tbody tr").first.locator("button.approve-button").click()
    page.wait_for_selector("ul.messagelist li.success")
    shot(page, f"{width}_review_queue_after_decisions")
    assert MemoryItem.objects.get(pk=world["allergy"].pk).lifecycle_status == "active"
    assert MemoryItem.objects.get(pk=world["contact"].pk).status == "deprecated"


@pytest.mark.parametrize("width", WIDTHS)
def test_conversation_to_memory_and_job_to_memories(page, shot, world, width):
    at_width(page, width)
    home(page)
    page.click("#content-main tr.model-conversation th a")
    page.click("#result_list a:has-text('support:u1001:c2002')")
    page.wait_for_selector("#floors .floor")
    fits(page)
    shot(page, f"{width}_conversation")
    page.click("#floors .floor-memories a >> nth=0")
    page.wait_for_selector("#memory-history")
    assert page.locator("#memory-source").count() == 1
    home(page)
    page.click("#content-main tr.model-memoryjob th a")
    page.wait_for_selector("#result_list")
    fits(page)
    shot(page, f"{width}_jobs_list")
    page.click("#result_list tbody tr a >> nth=0")
    page.wait_for_selector(".field-memories_display")
    assert "2 facts written" in page.locator(".field-result_display").inner_text()
    fits(page)
    shot(page, f"{width}_job_page")
    page.click(".field-memories_display ul a >> nth=0")
    page.wait_for_selector("#memory-history")
    assert page.locator("#memory-source").count() == 1


@pytest.mark.parametrize("width", WIDTHS)
def test_dashboard_and_versions(page, shot, world, width):
    at_width(page, width)
    home(page)
    shot(page, f"{width}_index")
    page.click("#console-shortcuts a:has-text('Dashboard')")
    page.wait_for_selector("#failure-chart svg")
    page.select_option("#dash-range", "7d")
    page.wait_for_url("**range=7d**")
    assert page.locator("#latency-chart svg").count() == 1
    fits(page)
    shot(page, f"{width}_dashboard")
    home(page)
    page.click("#content-main tr.model-memoryversion th a")
    page.wait_for_selector("#result_list")
    fits(page)
    shot(page, f"{width}_versions_list")
