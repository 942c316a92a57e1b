"""Relevance on an absolute scale: a memory is `relevant` to a query only at
`RECALL_MIN_RELEVANCE` or above (term evidence or the offline model's cosine,
never rescaled to the best of the pool); an off-topic question gets nothing
but the pinned memories, whatever room the budget leaves."""

from __future__ import annotations

import pytest
from django.conf import settings

from accounts.actors import Actor
from conversations.services import message_append
from memories.recall.dense import recall_embed_pending
from memories.recall.ranking import meaning_evidence
from memories.services.items import memory_item_create

pytestmark = pytest.mark.django_db

ACTOR = Actor.for_api_key("k")


def _context(api, cid, **body):
    response = api.post(f"/v1/conversations/{cid}/context", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def _fact(workspace, content, *, scope="user", scope_id="u-ana", **fields):
    return memory_item_create(workspace=workspace, actor=ACTOR, scope=scope, scope_id=scope_id, type="fact",
                              content=content, **fields)


@pytest.fixture
def offline_model(settings):
    settings.EMBEDDING_PROVIDER = "offline"


@pytest.fixture
def tour(workspace, offline_model):
    """The README tour's memories: a global preference, the user's travel
    facts (one pinned: an allergy), and some chatter, all with vectors."""
    message_append(workspace=workspace, external_id="trip", role="user", content="Hi there", user_id="u-ana")
    facts = {
        "tea": _fact(workspace, "用户喜欢喝绿茶", scope="global", scope_id=""),
        "aisle": _fact(workspace, "User prefers aisle seats on flights"),
        "dumplings": _fact(workspace, "User prefers 饺子 for dinner"),
        "hotel": _fact(workspace, "User prefers boutique hotels near the old town"),
        "lisbon": _fact(workspace, "User is travelling to Lisbon from 12 to 19 May"),
        "tom": _fact(workspace, "User's partner Tom is allergic to peanuts", importance=0.95,
                     fact_key="person.tom.allergy.peanuts"),
        **{f"chatter{i}": _fact(workspace, text) for i, text in enumerate([
            "User enjoyed the jazz concert last weekend", "User's sister lives in Porto",
            "User is learning to bake sourdough bread", "User runs five kilometres on Sundays",
            "User's laptop is a ten-year-old ThinkPad", "User likes crime novels set in Scandinavia"])},
    }
    recall_embed_pending(workspace_id=workspace.pk)
    return facts


def test_an_off_topic_question_gets_only_the_pinned_memories(api, tour):
    data = _context(api, "trip", query="how do I reset my password?", max_messages=0, memory_token_budget=300)
    injected = data["memory"]["injected"]
    assert [(e["id"], e["reason"]) for e in injected] == [(tour["tom"].pk, "pinned")]
    assert "绿茶" not in data["system"] and "aisle" not in data["system"]
    # Tom's fact is kept with the user's memories, and labelled as about someone else.
    assert "- [fact, about someone this user knows] User's partner Tom is allergic to peanuts" in data["system"]


def test_an_off_topic_question_in_chinese_gets_only_the_pinned_memories(api, tour):
    """The model sets any two Chinese texts nearer each other than two
    English ones: on the English scale, "how do I reset my password?" asked in
    Chinese found the green-tea preference relevant."""
    data = _context(api, "trip", query="怎么重置密码？", max_messages=0, memory_token_budget=300)
    assert [(e["id"], e["reason"]) for e in data["memory"]["injected"]] == [(tour["tom"].pk, "pinned")]
    assert "绿茶" not in data["system"]


def test_a_question_in_chinese_finds_the_chinese_memory_about_it(api, tour):
    data = _context(api, "trip", query="用户喜欢喝什么饮料？", max_messages=0)
    entry = next(e for e in data["memory"]["injected"] if e["id"] == tour["tea"].pk)
    assert entry["reason"] == "relevant"


def test_a_question_in_chinese_finds_the_english_memory_beside_chinese_ones(api, workspace, offline_model):
    """Two Chinese texts sit nearer each other than a Chinese question and the
    English memory that answers it: on one raw scale the margin below the
    best match kept an unrelated Chinese memory and cut the English one."""
    message_append(workspace=workspace, external_id="trip", role="user", content="Hi there", user_id="u-ana")
    green = _fact(workspace, "用户喜欢喝绿茶")
    oolong = _fact(workspace, "User drinks oolong tea every morning")
    _fact(workspace, "用户每天早上跑步")
    recall_embed_pending(workspace_id=workspace.pk)
    data = _context(api, "trip", query="用户早上喝什么茶？", max_messages=0)
    relevant = {e["id"] for e in data["memory"]["injected"] if e["reason"] == "relevant"}
    assert {green.pk, oolong.pk} <= relevant


def test_a_question_gets_what_is_about_it_and_the_budget_is_not_filled(api, tour):
    data = _context(api, "trip", query="which seat should I book for the user?", max_messages=0,
                    memory_token_budget=300)
    relevant = {e["id"] for e in data["memory"]["injected"] if e["reason"] == "relevant"}
    assert tour["aisle"].pk in relevant
    assert not relevant & {tour[k].pk for k in tour if k.startswith("chatter") or k in ("tea", "hotel")}
    assert data["memory"]["tokens_used"] < 150  # far under the 300 offered: nothing rides in to fill it


def test_meaning_alone_counts_across_languages(api, tour):
    data = _context(api, "trip", query="What does the user like to drink?", max_messages=0)
    entry = next(e for e in data["memory"]["injected"] if e["id"] == tour["tea"].pk)
    assert entry["reason"] == "relevant" and entry["score"]["terms"] == 0
    # An English question, a Chinese memory: the cosine is read on that script pair's scale.
    shift = settings.RECALL_COSINE_SCRIPT_SHIFT["latin>cjk"]
    assert entry["score"]["relevance"] == pytest.approx(meaning_evidence(entry["score"]["dense"], shift), abs=1e-3)


def test_relevance_does_not_depend_on_the_rest_of_the_pool(api, workspace, offline_model):
    message_append(workspace=workspace, external_id="trip", role="user", content="Hi there", user_id="u-ana")
    lone = _fact(workspace, "User's passport expires in March")
    recall_embed_pending(workspace_id=workspace.pk)
    query = "when does the user's passport expire for travel abroad?"
    alone = next(e for e in _context(api, "trip", query=query, max_messages=0)["memory"]["injected"]
                 if e["id"] == lone.pk)
    for text in ("User's passport number ends in 42", "User renewed the passport in Lisbon",
                 "User expires the coupons every March"):
        _fact(workspace, text)
    recall_embed_pending(workspace_id=workspace.pk)
    crowded = next(e for e in _context(api, "trip", query=query, max_messages=0)["memory"]["injected"]
                   if e["id"] == lone.pk)
    # Alone in its pool it is not "1.0, the best there is": its evidence is
    # what it holds of the query, and stays about that among others.
    assert alone["score"]["relevance"] < 1.0
    assert crowded["score"]["relevance"] == pytest.approx(alone["score"]["relevance"], abs=0.2)


def test_a_lone_weak_match_is_not_relevant(api, workspace):
    """BM25 alone (no vectors): a memory sharing only a common word with the
    query was the best of a pool of one, and so 'relevant at 1.0'."""
    message_append(workspace=workspace, external_id="c", role="user", content="hello", user_id="u-ana")
    for i in range(8):
        _fact(workspace, f"User note number {i} about the garden")
    weak = _fact(workspace, "User prefers 饺子")
    data = _context(api, "c", query="what seat does the user want tonight on the train?", max_messages=0)
    assert weak.pk not in {e["id"] for e in data["memory"]["injected"]}
    strong = _fact(workspace, "User wants a window seat on the train")
    data = _context(api, "c", query="what seat does the user want tonight on the train?", max_messages=0)
    entry = next(e for e in data["memory"]["injected"] if e["id"] == strong.pk)
    assert entry["score"]["terms"] >= 0.2 and weak.pk not in {e["id"] for e in data["memory"]["injected"]}


def test_the_threshold_is_a_setting(api, tour, settings):
    settings.RECALL_MIN_RELEVANCE = 1.01
    data = _context(api, "trip", query="which seat should I book for the user?", max_messages=0)
    assert [e["reason"] for e in data["memory"]["injected"]] == ["pinned"]


def test_search_by_meaning_leaves_out_what_is_not_about_the_query(api, tour):
    response = api.get("/v1/memories", {"user_id": "u-ana", "query": "how do I reset my password?"})
    assert response.status_code == 200, response.content
    assert response.json()["data"] == []
    response = api.get("/v1/memories", {"user_id": "u-ana", "query": "aisle or window seat?"})
    assert tour["aisle"].pk in [m["id"] for m in response.json()["data"]]
