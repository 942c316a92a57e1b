"""The console's defects of issue 44 as an operator meets them: at a laptop's
1280x800, every page reached by clicking from the admin index or a list."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memories.models import MemoryEdge, MemoryJob, ScopeState
from memories.services.items import memory_item_update
from tests.browser.console import fits, home
from tests.factories import MemoryItemFactory, WorkspaceFactory, written_floors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LONG_ID = "support-ticket-2026-11-29-8f3a9c1e-4b7d"

# Every word of the list's cells whose line boxes sit on more than one line:
# an id broken mid-token (a word wrapped whole onto the next line is fine).
BROKEN_WORDS_JS = """(selector) => {
  const broken = [];
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const words = /\\S+/g;
    let m;
    while ((m = words.exec(node.data))) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  return broken;
}"""


@pytest.fixture
def laptop(page):
    page.set_viewport_size({"width": 1280, "height": 800})
    return page


@pytest.fixture
def pipeline_rows():
    """Jobs and scope states with the long ids real clients choose, and a
    conversation whose summary the summarizer recorded up to a message id."""
    workspace = WorkspaceFactory(name="Operations team workspace", slug="ops")
    conversation, messages = written_floors(workspace, LONG_ID, [f"Floor {n} text." for n in range(1, 4)])
    conversation.metadata = {"summary": "The user wants a refund.", "summarized_until": messages[1].pk}
    conversation.save(update_fields=["metadata"])
    scope_id = f'["{LONG_ID}","main"]'
    for status in ("succeeded", "failed", "pending"):
        MemoryJob.objects.create(
            workspace=workspace, kind="extract", scope="branch", scope_id=scope_id, status=status, attempts=3,
            result={"facts": 2, "summaries": 1, "last_processed_floor_no": 3} if status == "succeeded" else {},
            error="memory_project.errors.ValidationError: memory mem_01M8KCRQ79KT860HZ688WHNP5P conflicts with "
                  "job_01M8KCRQ774KRS50HPZVZFMXCH at msg_01M8KCRP0SDGZE3QYH25PV8GAB" if status == "failed" else "",
        )
    MemoryJob.objects.create(workspace=workspace, kind="compact", scope="user",
                             scope_id="user_0001928374-customer-portal-account", status="pending")
    MemoryJob.objects.create(workspace=None, kind="maintenance", status="succeeded", result={})
    ScopeState.objects.create(workspace=workspace, scope="branch", scope_id=scope_id, conversation=conversation,
                              branch=messages[0].branch, last_processed_floor_no=2, item_count=7, micro_count=1, token_total=1234)
    ScopeState.objects.create(workspace=workspace, scope="user", scope_id="user_0001928374-customer-portal-account",
                              item_count=3)
    return {"conversation": conversation, "messages": messages}


def test_jobs_list_keeps_ids_whole(laptop, shot, pipeline_rows):
    page = laptop
    home(page)
    page.click("#content-main tr.model-memoryjob th a")
    page.wait_for_selector("#result_list")
    fits(page)
    shot(page, "1280_fixes_jobs_list")
    assert page.evaluate(BROKEN_WORDS_JS, "#result_list tbody") == []
    # Shortened ids carry the whole id in their tooltip.
    titles = page.eval_on_selector_all("#result_list .id-token", "els => els.map(e => e.title)")
    assert f"{LONG_ID}" in titles and "mem_01M8KCRQ79KT860HZ688WHNP5P" in titles
    assert "ValidationError: memory" in page.locator("#result_list").inner_text()
    assert "memory_project.errors" not in page.locator("#result_list").inner_text()


def test_scope_states_fit_with_a_title(laptop, shot, pipeline_rows):
    page = laptop
    home(page)
    page.click("#content-main tr.model-scopestate th a")
    page.wait_for_selector("#result_list")
    fits(page)
    shot(page, "1280_fixes_scope_states")
    heading = page.locator("#content h1").inner_text()
    assert heading.startswith("Scope states") and "Select" not in heading
    assert page.evaluate(BROKEN_WORDS_JS, "#result_list tbody") == []
    row = page.locator("#result_list tbody tr", has_text="branch main").first
    assert "up to floor 2" in row.inner_text() and "7 items" in row.inner_text()
    # From the list to the conversation, by its link.
    row.locator("a:has-text('conversation')").click()
    page.wait_for_selector("#floors .floor")
    assert page.locator("#content h2, #content-main h2").first.is_visible()


def test_conversation_page_dates_and_summary_floor(laptop, shot, pipeline_rows):
    page = laptop
    home(page)
    page.click("#content-main tr.model-conversation th a")
    page.wait_for_selector("#result_list")
    fits(page)
    page.click(f"#result_list a:has-text('{LONG_ID}')")
    page.wait_for_selector("#rolling-summary")
    fits(page)
    shot(page, "1280_fixes_conversation")
    heading = page.locator("#rolling-summary h2").inner_text()
    assert "until floor 2" in heading and "msg_" not in heading
    # The floor's link reads on the heading's bar: the colour of the words
    # around it, not the page's link colour (which vanished on the bar).
    around, link, bar = page.evaluate("""() => { const a = document.querySelector('#rolling-summary h2 a');
        const h = a.closest('h2');
        return [getComputedStyle(a.parentElement).color, getComputedStyle(a).color,
                getComputedStyle(h).backgroundColor]; }""")
    assert link == around and link != bar, (around, link, bar)
    assert "msg_" not in page.locator(".field-metadata_display").inner_text()
    conversation = pipeline_rows["conversation"]
    created = page.locator(".field-created_at .readonly").inner_text()
    assert created == f"{conversation.created_at:%Y-%m-%d %H:%M:%S}"
    floor_time = page.locator("#floors .floor-role").first.inner_text()
    assert created[:10] in floor_time
    page.click("#rolling-summary h2 a")
    page.wait_for_url("**#floor-*-2")


def test_memory_page_edges_name_the_other_memory(laptop, shot):
    page = laptop
    workspace = WorkspaceFactory(name="Travel", slug="travel")
    old = MemoryItemFactory(workspace=workspace, content="User prefers aisle seats on long flights.", fact_key="user.seat")
    new = MemoryItemFactory(workspace=workspace, content="User prefers window seats.", fact_key="user.seat_v2")
    MemoryEdge.objects.create(workspace=workspace, from_item=new, to_item=old, relation="updates")
    home(page)
    page.click("#console-shortcuts a:has-text('Memories')")
    page.click("#result_list a:has-text('aisle seats')")
    page.wait_for_selector("#memory-edges")
    fits(page)
    page.locator("#memory-edges").scroll_into_view_if_needed()
    shot(page, "1280_fixes_memory_edges")
    row = page.locator("#memory-edges tr.edge-in")
    assert row.count() == 1
    text = row.inner_text()
    assert "is replaced by" in text and "updates" in text and "User prefers window seats." in text
    assert "mem_" not in text
    row.locator("a.edge-text").click()
    page.wait_for_selector("#memory-edges tr.edge-out")
    assert "User prefers window seats." in page.locator("#id_content").input_value()
    assert "User prefers aisle seats on long flights." in page.locator("#memory-edges tr.edge-out").inner_text()


def test_review_queue_context_belongs_to_the_item(laptop, shot):
    page = laptop
    workspace = WorkspaceFactory(name="Travel", slug="travel", requires_review=True)
    _, messages = written_floors(workspace, "trip:u-ana:c1", [f"Floor {n}: words of turn {n}." for n in range(1, 13)])
    MemoryItemFactory(workspace=workspace, content="User prefers window seats.", status="pending", confidence=0.3,
                      source_message_id=messages[10].pk, sources=[messages[10].pk])
    MemoryItemFactory(workspace=workspace, content="Facts: the trip, the seats, the dates.", status="pending",
                      confidence=0.5, type="summary", summary_tier="micro", coverage_start_floor_no=1,
                      coverage_end_floor_no=12, source_message_id=messages[11].pk, sources=[m.pk for m in messages[::2]])
    home(page)
    page.click("#console-shortcuts a:has-text('Review queue')")
    page.wait_for_selector("#result_list")
    fits(page)
    shot(page, "1280_fixes_review_queue")
    rows = page.locator("#result_list tbody tr")
    fact_row, summary_row = rows.nth(0).inner_text(), rows.nth(1).inner_text()
    assert "Floor 11: words of turn 11." in fact_row and "Floor 10: words" in fact_row
    assert "Floor 12" not in fact_row and "Floor 9" not in fact_row
    assert "summarizes floors 1–12" in summary_row and "6 source messages" in summary_row
    assert "Floor 12" not in summary_row and "3 more source floors" in summary_row
    rows.nth(1).locator("a:has-text('Facts: the trip')").click()
    page.wait_for_selector("#review-context")
    fits(page)
    shot(page, "1280_fixes_review_item")
    panel = page.locator("#review-context").inner_text()
    assert all(f"Floor {n}: words" in panel for n in (1, 3, 5, 7, 9, 11)) and "Floor 12" not in panel
    # The span's link opens the conversation at the floors it covers.
    page.click("#review-context .context-span a")
    page.wait_for_selector("#floors .floor")
    assert "floor-" in page.url


def test_redact_history_of_a_one_version_memory_is_no_dead_end(laptop, shot):
    page = laptop
    workspace = WorkspaceFactory(name="Careful Health", slug="careful")
    item = MemoryItemFactory(workspace=workspace, content="Card number 4111 1111 1111 1111 on file.", fact_key="user.card")
    home(page)
    page.click("#console-shortcuts a:has-text('Memories')")
    page.wait_for_selector("#result_list")
    page.locator("#result_list tbody tr", has_text="Card number 4111").locator("input.action-select").check()
    page.select_option("select[name=action]", "redact_history")
    page.click("button[name=index]")
    page.wait_for_selector("#redact-history")
    fits(page)
    shot(page, "1280_fixes_redact_history_one_version")
    text = page.locator("#redact-history").inner_text()
    assert "Nothing to do" not in text and "4111 1111" in page.locator("#current-content").inner_text()
    page.click("#redact-current")
    page.wait_for_selector("ul.messagelist li.success")
    assert "1 succeeded" in page.locator("ul.messagelist").inner_text()
    page.click("#result_list a:has-text('[redacted]')")
    page.wait_for_selector("#memory-history")
    assert page.locator("#id_content").input_value() == "[redacted]"
    assert page.locator("#memory-history .redacted-note").count() == 1
    assert "4111" not in page.content()
    item.refresh_from_db()
    assert item.content == "[redacted]"


def test_redact_everywhere_result_says_what_the_preview_said(laptop, shot):
    page = laptop
    workspace = WorkspaceFactory(name="Careful Health", slug="careful")
    written_floors(workspace, "support:u1:c2", ["My locker code is 4711-9923."])
    item = MemoryItemFactory(workspace=workspace, content="Locker code 4711-9923.", fact_key="user.locker")
    memory_item_update(workspace=workspace, actor=Actor.system(), memory_id=item.pk,
                       changes={"content": "Locker code 4711-9923, second floor."})
    home(page)
    page.click("#console-shortcuts a:has-text('Memories')")
    page.click(".object-tools a:has-text('Redact a text everywhere')")
    page.wait_for_selector("#redact-everywhere-form")
    page.select_option("#id_workspace", label="Careful Health")
    page.fill("#id_text", "4711-9923")
    page.click("input[type=submit][value='Find where it appears']")
    page.wait_for_selector("#text-places")
    fits(page)
    shot(page, "1280_fixes_redact_everywhere_preview")
    sentence = page.locator("#found-sentence").inner_text()
    assert sentence == "1 message, 1 memory and 2 memory versions"
    page.click("input[type=submit][value='Yes, redact everywhere']")
    page.wait_for_selector("ul.messagelist li.success")
    shot(page, "1280_fixes_redact_everywhere_result")
    result = page.locator("ul.messagelist li.success").inner_text()
    assert f"it was in {sentence}. None of it is left." in result
    assert "4711" not in result
