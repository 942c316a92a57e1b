"""The memories changelist: columns, every filter, search (Chinese too), the
review-first ordering, and a query count that does not grow with the page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.actors import Actor
from memories.models import MemoryItem
from memories.services.items import memory_item_create
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_create

URL = "/admin/memories/memoryitem/"
pytestmark = pytest.mark.django_db


def shown(response) -> list[str]:
    return [item.pk for item in response.context["cl"].result_list]


@pytest.fixture
def corpus(workspace, other_workspace, make_memory):
    made = {
        "coffee": make_memory("用户喜欢喝咖啡，每天早上一杯。", fact_key="drink", importance=0.9, confidence=0.95),
        "city": make_memory("The user lives in Lisbon.", fact_key="home_city", importance=0.2, confidence=0.25),
        "summary": make_memory(
            "Planning a trip to Kyoto in spring.",
            type="summary",
            summary_tier="micro",
            scope="chat",
            scope_id="chat-1",
            importance=0.5,
            confidence=0.6,
        ),
        "loop": make_memory("Send the invoice next week.", type="open_loop", scope="chat", scope_id="chat-2"),
        "other": make_memory("Other workspace fact.", ws=other_workspace),
    }
    store = memory_store_create(workspace=workspace, name="Notes")
    doc, _ = store_memory_write(workspace=workspace, store_id=store.pk, path="/notes/a.md", content="Doc A", actor=Actor.system())
    made["doc"] = doc
    made["store"] = store
    return made


def test_changelist_columns(admin_client, corpus):
    response = admin_client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert "用户喜欢喝咖啡" in html  # the excerpt
    assert "memory-state-active" in html
    assert "home_city" in html
    assert "/notes/a.md" in html
    assert "never used" in html
    assert len(shown(response)) == 6


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("type__exact=summary", {"summary"}),
        ("type__exact=document", {"doc"}),
        ("scope__exact=chat", {"summary", "loop"}),
        ("summary_tier__exact=micro", {"summary"}),
        ("importance__gte=0.7", {"coffee"}),
        ("importance__lt=0.3", {"city"}),
        ("importance__gte=0.3&importance__lt=0.7", {"summary", "loop", "other", "doc"}),
        ("confidence__lt=0.3", {"city"}),
        ("confidence__gte=0.5&confidence__lt=0.7", {"summary"}),
        ("used=never", {"coffee", "city", "summary", "loop", "other", "doc"}),
        ("path_prefix=/notes/", {"doc"}),
        ("path_prefix=/other/", set()),
        ("scope_id=chat-2", {"loop"}),
    ],
)
def test_filters(admin_client, corpus, query, expected):
    response = admin_client.get(f"{URL}?{query}")
    assert response.status_code == 200
    ids = {name for name, item in corpus.items() if name != "store" and item.pk in shown(response)}
    assert ids == expected


def test_workspace_store_status_and_lifecycle_filters(admin_client, corpus, workspace, other_workspace, edit_memory):
    edit_memory(corpus["city"], status="deprecated")
    response = admin_client.get(f"{URL}?workspace__id__exact={other_workspace.pk}")
    assert shown(response) == [corpus["other"].pk]
    response = admin_client.get(f"{URL}?store_id={corpus['store'].pk}")
    assert shown(response) == [corpus["doc"].pk]
    response = admin_client.get(f"{URL}?status__exact=deprecated")
    assert shown(response) == [corpus["city"].pk]
    response = admin_client.get(f"{URL}?lifecycle_status__exact=deprecated")
    assert shown(response) == [corpus["city"].pk]


def test_used_filter(admin_client, corpus):
    from memories.services.items_batch import memory_items_mark_used

    memory_items_mark_used(workspace=corpus["coffee"].workspace, ids=[corpus["coffee"].pk])
    response = admin_client.get(f"{URL}?used=used")
    assert shown(response) == [corpus["coffee"].pk]


def test_bad_range_is_not_a_500(admin_client, corpus):
    response = admin_client.get(f"{URL}?importance__gte=lots")
    # The admin answers a bad lookup by redirecting to the unfiltered list with ?e=1.
    assert response.status_code == 302
    assert "e=1" in response["Location"]


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("咖啡", {"coffee"}),  # two characters: shorter than a trigram
        ("每天早上", {"coffee"}),
        ("lisbon", {"city"}),  # case-insensitive
        ("home_city", {"city"}),  # fact key
        ("kyoto in", {"summary"}),
        ("nothing like this", set()),
    ],
)
def test_search(admin_client, corpus, term, expected):
    response = admin_client.get(URL, {"q": term})
    assert response.status_code == 200
    ids = {name for name, item in corpus.items() if name != "store" and item.pk in shown(response)}
    assert ids == expected


def test_search_by_id(admin_client, corpus):
    response = admin_client.get(URL, {"q": corpus["loop"].pk})
    assert shown(response) == [corpus["loop"].pk]


def test_default_order_puts_review_first(admin_client, workspace, make_memory):
    confident = make_memory("A confident fact.", confidence=0.9)
    shaky = make_memory("A shaky fact.", confidence=0.1)
    pending = make_memory("A pending fact.", confidence=0.99, lifecycle_status="pending")
    deprecated = make_memory("An old fact.", confidence=0.05, status="deprecated")
    response = admin_client.get(URL)
    assert shown(response) == [pending.pk, shaky.pk, confident.pk, deprecated.pk]


def test_review_filter(admin_client, workspace, review_workspace, make_memory):
    make_memory("Pending where nobody reviews.", lifecycle_status="pending")
    queued = make_memory("Pending under review.", ws=review_workspace, lifecycle_status="pending")
    response = admin_client.get(f"{URL}?review=pending")
    assert shown(response) == [queued.pk]


def _bulk(workspace, count: int) -> None:
    for i in range(count):
        memory_item_create(
            workspace=workspace,
            actor=Actor.system(),
            scope="chat" if i % 2 else "global",
            scope_id=f"chat-{i}" if i % 2 else "",
            type="fact",
            content=f"Memory number {i} " + "x" * 300,
            source_message_id=f"msg_{i}" if i % 3 == 0 else None,
        )


@pytest.mark.parametrize("query", ["", "?type__exact=fact&importance__gte=0.3", "?q=number"])
def test_query_count_does_not_grow(admin_client, workspace, django_assert_max_num_queries, query):
    _bulk(workspace, 20)
    admin_client.get(URL + query)  # warm caches (content types, session)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as small:
        assert admin_client.get(URL + query).status_code == 200
    _bulk(workspace, 180)
    assert MemoryItem.objects.count() == 200
    with django_assert_max_num_queries(len(small.captured_queries)):
        response = admin_client.get(URL + query)
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 50


def test_add_memory(admin_client, workspace):
    response = admin_client.post(
        reverse("admin:memories_memoryitem_add"),
        {
            "workspace": workspace.pk,
            "scope": "global",
            "scope_id": "",
            "type": "fact",
            "summary_tier": "",
            "content": "Created by an operator.",
            "fact_key": "Origin",
            "importance": "0.7",
            "confidence": "1",
        },
    )
    assert response.status_code == 302
    item = MemoryItem.objects.get(content="Created by an operator.")
    assert item.fact_key == "origin"  # normalized by the service
    version = item.pk and item.current_version_id
    from memories.models import MemoryVersion

    assert MemoryVersion.objects.get(pk=version).actor_type == "user"
