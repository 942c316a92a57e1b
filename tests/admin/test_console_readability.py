"""What the console shows a person: word-level diffs, actors by name, scopes
and floors in words, the review queue's inline decisions beside the source
message, and jobs with a readable result, seconds and the memories they wrote."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.utils import quote
from django.urls import reverse

from accounts.actors import Actor
from accounts.services import api_key_create
from memories.admin.history import word_diff
from memories.admin.labels import message_preview
from memories.models import MemoryJob, MemoryVersion
from memories.services.items import memory_item_update
from tests.admin.helpers import messages_of

pytestmark = pytest.mark.django_db
QUEUE = "/admin/memories/reviewitem/"


def test_word_diff_marks_only_the_changed_words():
    pieces = [(p.kind, p.text) for p in word_diff("The user drinks green tea daily.", "The user drinks oolong tea daily.")]
    assert pieces == [("eq", "The user drinks "), ("del", "green"), ("add", "oolong"), ("eq", " tea daily.")]
    # Chinese has no spaces: one changed character is marked alone.
    pieces = [(p.kind, p.text) for p in word_diff("用户喜欢喝绿茶", "用户喜欢喝红茶")]
    assert ("del", "绿") in pieces and ("add", "红") in pieces and ("eq", "用户喜欢喝") in pieces


def test_word_diff_folds_long_unchanged_text():
    before = "x " * 500 + "end one"
    pieces = word_diff(before, "x " * 500 + "end two")
    assert any(p.kind == "gap" and "unchanged characters" in p.text for p in pieces)
    assert sum(len(p.text) for p in pieces if p.kind == "eq") < 400


def test_message_preview_reads_cut_json():
    assert message_preview('"用户喜欢喝咖啡"') == "用户喜欢喝咖啡"
    assert message_preview('"\\u7528\\u6237\\u55') == "用户"  # cut inside an escape
    assert message_preview('[{"type": "text", "text": "Let me look"}, {"type": "tool_use", "id": "t"') == "Let me look"


def test_history_names_key_operator_and_job(admin_client, admin_user, workspace, make_memory):
    key = api_key_create(workspace=workspace, name="travel-agent")
    item = make_memory("Likes tea.")
    job = MemoryJob.objects.create(workspace=workspace, kind="extract", scope="global", status="succeeded")
    memory_item_update(workspace=workspace, actor=Actor.for_api_key(key.api_key.pk), memory_id=item.pk, changes={"content": "Likes green tea."})
    memory_item_update(workspace=workspace, actor=Actor.for_job(job.pk), memory_id=item.pk, changes={"content": "Likes oolong."})
    memory_item_update(workspace=workspace, actor=Actor.for_user(admin_user.pk), memory_id=item.pk, changes={"content": "Likes oolong tea."})
    html = admin_client.get(reverse("admin:memories_memoryitem_change", args=[quote(item.pk)])).content.decode()
    history = html[html.index('id="memory-history"') :]
    assert "by API key travel-agent" in history
    assert f"by operator {admin_user.username}" in history
    job_url = reverse("admin:memories_memoryjob_change", args=[quote(job.pk)])
    assert f'href="{job_url}"' in history and "extract job</a>" in history
    assert "apikey_" not in history
    versions = admin_client.get(f"/admin/memories/memoryversion/?q={item.pk}").content.decode()
    assert "API key travel-agent" in versions and "extract job" in versions


def test_list_shows_conversation_and_floor_not_ids(admin_client, make_memory, conversation_with_floors):
    conversation, branch, messages = conversation_with_floors
    make_memory("Lives in Lisbon.", scope="branch", scope_id='["chat-42","main"]', source_message_id=messages[2].pk)
    make_memory("Chat fact.", scope="chat", scope_id="chat-42")
    html = admin_client.get("/admin/memories/memoryitem/").content.decode()
    floor_url = reverse("admin:conversations_conversation_change", args=[conversation.pk])
    assert f'href="{floor_url}?branch={branch.pk}&amp;around=3#floor-{branch.pk}-3"' in html
    assert "chat-42 <b>#3</b>" in html
    assert "branch main" in html
    assert "conversation chat-42" in html
    assert '[&quot;chat-42&quot;' not in html.split('id="result_list"')[1].split("</table>")[0].replace('title="[&quot;', "")


def test_queue_shows_the_source_message_and_decides_inline(admin_client, admin_user, review_workspace, make_memory):
    from conversations.models import Branch, Conversation, Message

    conversation = Conversation.objects.create(workspace=review_workspace, external_id="clinic-1", message_count=1)
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=2)
    message = Message.objects.create(
        workspace=review_workspace, conversation=conversation, branch=branch, floor_no=1, role="user",
        content="I am allergic to peanuts, please remember.",
    )
    keep = make_memory("Allergic to peanuts.", ws=review_workspace, lifecycle_status="pending", source_message_id=message.pk)
    drop = make_memory("Likes peanuts.", ws=review_workspace, lifecycle_status="pending")
    html = admin_client.get(f"{QUEUE}?o=1").content.decode()
    assert "I am allergic to peanuts, please remember." in html
    assert "memories awaiting review" in html and "2 review queue" not in html
    decide = reverse("admin:memories_reviewitem_decide", args=[quote(keep.pk)])
    assert f'formaction="{decide}"' in html and f'value="approve@{keep.version}"' in html

    response = admin_client.post(decide, {"decision": f"approve@{keep.version}"}, HTTP_REFERER=f"http://testserver{QUEUE}?o=1", follow=True)
    assert response.redirect_chain[-1][0] == f"{QUEUE}?o=1"
    assert ("success", f"Approved memory {keep.pk}.") in messages_of(response)
    keep.refresh_from_db()
    assert keep.lifecycle_status == "active"
    head = MemoryVersion.objects.get(pk=keep.current_version_id)
    assert (head.actor_type, head.actor_user_id) == ("user", admin_user.pk)

    reject = reverse("admin:memories_reviewitem_decide", args=[quote(drop.pk)])
    stale = admin_client.post(reject, {"decision": f"reject@{drop.version + 5}"}, follow=True)
    assert any(level == "error" for level, _ in messages_of(stale))
    admin_client.post(reject, {"decision": f"reject@{drop.version}"})
    drop.refresh_from_db()
    assert drop.status == "deprecated"
    again = admin_client.post(reject, {"decision": f"reject@{drop.version}"}, follow=True)
    assert ("warning", "That memory no longer awaits review.") in messages_of(again)
    assert admin_client.get(decide).status_code == 404


def test_job_page_reads_as_words_with_seconds_and_its_memories(admin_client, workspace, make_memory):
    job = MemoryJob.objects.create(
        workspace=workspace, kind="extract", scope="branch", scope_id='["chat-42","main"]', status="succeeded",
        result={"summaries": 1, "facts": 2, "open_loops": 0, "edges": 3, "last_processed_floor_no": 12},
    )
    made = make_memory("Budget is 1400 euros.", source_job=job)
    changed = make_memory("Budget is 1300 euros.")
    memory_item_update(workspace=workspace, actor=Actor.for_job(job.pk), memory_id=changed.pk, changes={"status": "deprecated"})
    other = make_memory("Unrelated.")
    listing = admin_client.get("/admin/memories/memoryjob/").content.decode()
    assert "1 summary written, 2 facts written, up to floor 12" in listing
    assert "branch main of chat-42" in listing
    page = admin_client.get(reverse("admin:memories_memoryjob_change", args=[quote(job.pk)])).content.decode()
    assert "<li>1 summary written</li><li>2 facts written</li><li>3 edges</li><li>up to floor 12</li>" in page
    assert "open loops" not in page
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page)
    assert reverse("admin:memories_memoryitem_change", args=[quote(made.pk)]) in page
    assert reverse("admin:memories_memoryitem_change", args=[quote(changed.pk)]) in page
    written = admin_client.get(f"/admin/memories/memoryitem/?job={job.pk}")
    shown = {item.pk for item in written.context["cl"].result_list}
    assert shown == {made.pk, changed.pk} and other.pk not in shown


def test_small_defects(client, admin_client):
    assert client.get("/favicon.ico").status_code == 200
    index = admin_client.get("/admin/").content.decode()
    assert "Branchs" not in index and "Branches" in index
    assert 'href="/v1/docs/"' in index  # View site


def test_dashboard_failure_rate_and_latency_over_a_chosen_range(admin_client, workspace):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()

    def job(status, hours_ago, seconds):
        finished = now - timedelta(hours=hours_ago)
        return MemoryJob.objects.create(
            workspace=workspace, kind="extract", scope="global", status=status,
            started_at=finished - timedelta(seconds=seconds), finished_at=finished,
        )

    job("succeeded", 2, 1)
    job("failed", 2, 3)
    job("succeeded", 2, 2)
    job("succeeded", 24 * 20, 10)  # outside a 7-day range
    response = admin_client.get(reverse("admin:memories_dashboard"), {"range": "7d"})
    trend = response.context["job_trend"]
    assert response.context["range_key"] == "7d" and len(trend.failure_bars) == 28
    assert (trend.finished, trend.failed) == (3, 1)
    recent = [bar for bar in trend.failure_bars if bar.value]
    assert len(recent) == 1 and abs(recent[0].value - 1 / 3) < 1e-9 and recent[0].text == "1/3 failed"
    latency = [bar for bar in trend.latency_bars if bar.value]
    assert len(latency) == 1 and abs(latency[0].value - 2000) < 1 and latency[0].text == "2.0 s"
    html = response.content.decode()
    assert 'id="failure-chart"' in html and 'id="latency-chart"' in html
    assert '<option value="7d" selected>' in html and "33%" in html
    wide = admin_client.get(reverse("admin:memories_dashboard"), {"range": "90d"}).context["job_trend"]
    assert (wide.finished, wide.failed) == (4, 1)
    assert admin_client.get(reverse("admin:memories_dashboard"), {"range": "bogus"}).context["range_key"] == "30d"
