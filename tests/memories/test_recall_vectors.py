"""Recall at scale: the scopes' running totals, the in-process vectors held
once per scope and brought up to date (appended, never re-read whole), the
memory they may take, and a statement count that does not grow with the
scope. The nearest vectors are checked against an exact search.

These run on SQLite and PostgreSQL, and on a PostgreSQL with pgvector (see
test_pgvector.py), where the in-process path is asked for explicitly."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count, Q, Sum
from django.test.utils import CaptureQueriesContext

from accounts.actors import Actor
from conversations.services import message_append
from memories.models import Scope
from memories.recall import dense, embeddings, stats
from memories.recall.index import memory_scope_token
from memories.recall.models import RecallEntry, RecallKind, RecallScopeStats, RecallTermStats
from memories.services.items import memory_item_create, memory_item_delete

pytestmark = pytest.mark.django_db


@pytest.fixture
def offline(settings):
    settings.EMBEDDING_PROVIDER = "offline"
    settings.RECALL_VECTOR_INDEX = "process"
    dense.recall_vector_cache_clear()
    yield embeddings.get_embedding_provider()
    dense.recall_vector_cache_clear()


def _totals_match(workspace) -> None:
    """Every scope's running totals and every term's document count equal a
    count of its entries, and no term is left with a count of zero."""
    counted = {row["scope_token"]: (row["n"], row["total"] or 0, row["emb"]) for row in
               RecallEntry.objects.filter(workspace=workspace).values("scope_token").annotate(
                   n=Count("id"), total=Sum("length"), emb=Count("id", filter=~Q(embedding_model="")))}
    kept = {s.scope_token: (s.entries, s.total_length, s.embedded)
            for s in RecallScopeStats.objects.filter(workspace=workspace)}
    assert {t: v for t, v in kept.items() if v != (0, 0, 0)} == counted
    terms: Counter[tuple[str, str]] = Counter()
    for token, text in RecallEntry.objects.filter(workspace=workspace).values_list("scope_token", "terms"):
        terms.update((token, term) for term in set(text.split()) if len(term) <= stats.TERM_MAX_CHARS)
    kept_terms = {(token, term): n for token, term, n in
                  RecallTermStats.objects.filter(workspace=workspace).values_list("scope_token", "term", "entries")}
    assert kept_terms == dict(terms)


def _entries(workspace, token: str, vectors: np.ndarray, *, model: str) -> list[int]:
    """Index entries of one scope with these vectors (rows written as the
    index writes them: no memory behind them is needed to rank)."""
    rows = [RecallEntry(workspace=workspace, kind=RecallKind.MEMORY, scope_token=token, terms=f" w{i} ", length=1)
            for i in range(len(vectors))]
    created = RecallEntry.objects.bulk_create(rows)
    ids = [row.pk for row in created] if created[0].pk else list(
        RecallEntry.objects.filter(workspace=workspace, scope_token=token).order_by("-id")
        .values_list("id", flat=True)[:len(vectors)])[::-1]
    dense.recall_vectors_store(list(zip(ids, vectors, strict=True)), model=model)
    return ids


def _unit(rng, n: int, dims: int) -> np.ndarray:
    matrix = rng.standard_normal((n, dims)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _query_vector(provider, query: str) -> np.ndarray:
    """The query's vector at unit length, as dense ranking scores with it."""
    vector = provider.embed_query(query)
    return vector / np.linalg.norm(vector)


def _exact(workspace, tokens, model, query_vector) -> dict[int, float]:
    """The nearest entries by an exact search over every stored vector, with
    dense ranking's cut (top k, within the margin of the best and the spread
    of the script scales an English query sees, which ranking narrows once it
    reads the entries' scripts)."""
    pairs = list(RecallEntry.objects.filter(workspace=workspace, scope_token__in=tokens, embedding_model=model)
                 .values_list("id", "embedding"))
    ids = np.array([pk for pk, _ in pairs])
    matrix = embeddings.normalize_rows(embeddings.bytes_to_matrix([bytes(b) for _, b in pairs], 384))
    scores = matrix @ query_vector
    order = np.argsort(-scores)[:dense.DENSE_TOP_K]
    floor = scores[order[0]] - settings.RECALL_DENSE_MARGIN - dense.script_spread(0.0)
    return {int(ids[i]): float(scores[i]) for i in order if scores[i] > 0 and scores[i] >= floor}


def test_scope_totals_follow_every_write(workspace, offline):
    actor = Actor.for_api_key("k")
    items = [memory_item_create(workspace=workspace, actor=actor, scope="global", type="fact",
                                content=f"The office in city number {i} opens at nine") for i in range(4)]
    items.append(memory_item_create(workspace=workspace, actor=actor, scope="chat", scope_id="c1", type="fact",
                                    content="The user likes green tea"))
    _totals_match(workspace)
    dense.recall_embed_pending(workspace_id=workspace.pk)
    _totals_match(workspace)
    token = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    before = stats.scope_states(workspace_id=workspace.pk, scope_tokens=[token])[token]
    assert (before.entries, before.embedded, before.removed) == (4, 4, 0)
    memory_item_delete(workspace=workspace, actor=actor, memory_id=items[0].pk)
    _totals_match(workspace)
    after = stats.scope_states(workspace_id=workspace.pk, scope_tokens=[token])[token]
    assert (after.entries, after.embedded, after.removed) == (3, 3, 1)
    dense.recall_embeddings_clear(entry_ids=list(RecallEntry.objects.filter(scope_token=token)
                                                 .values_list("id", flat=True)[:1]))
    _totals_match(workspace)
    assert stats.scope_states(workspace_id=workspace.pk, scope_tokens=[token])[token].removed == 2
    # A conversation's passages, and their cascade when it is deleted.
    from conversations.models import Conversation
    from memories.recall.index import passage_entries_rebuild

    message = message_append(workspace=workspace, external_id="c1", role="user",
                             content="I moved to Lisbon last spring.").message
    passage_entries_rebuild(workspace_id=workspace.pk, messages=[message])
    _totals_match(workspace)
    Conversation.objects.filter(pk=message.conversation_id).delete()
    _totals_match(workspace)
    if connection.vendor == "sqlite":
        # A table rebuild drops the triggers: they come back, the totals recounted.
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER recall_stats_ai")
            cursor.execute("DROP TRIGGER recall_terms_ad")
        assert stats.stats_ensure(connection) is True
        assert stats.stats_ensure(connection) is False
        _totals_match(workspace)


def test_global_vectors_are_held_once_for_every_conversation(api, workspace, offline):
    rng = np.random.default_rng(1)
    token = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    _entries(workspace, token, _unit(rng, 300, offline.dims), model=offline.name)
    for cid in ("a", "b", "c"):
        message_append(workspace=workspace, external_id=cid, role="user", content=f"hello from {cid}")
        response = api.post(f"/v1/conversations/{cid}/context", {"query": "where is the office"}, format="json")
        assert response.status_code == 200
    held = [key for key in dense._cache if key[0] == workspace.pk]
    assert [key[1] for key in held] == [token]
    report = dense.recall_vector_cache_report()
    assert report["vectors"] == 300
    assert 300 * offline.dims * 4 <= report["bytes"] <= report["limit_bytes"]
    assert api.get("/healthz").json()["recall_vectors"]["vectors"] == 300


def test_new_vectors_are_appended_and_removed_ones_dropped(workspace, offline):
    rng = np.random.default_rng(2)
    token = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    ids = _entries(workspace, token, _unit(rng, 50, offline.dims), model=offline.name)
    similar = dense.dense_similarities(workspace_id=workspace.pk)
    query = "opening hours of the office"
    query_vector = _query_vector(offline, query)
    assert similar([token], query) == pytest.approx(_exact(workspace, [token], offline.name, query_vector), abs=1e-3)

    # A new entry whose vector is the query's own: it is read alone (by id
    # past the newest held) and ranks first.
    [new] = _entries(workspace, token, query_vector[None, :], model=offline.name)
    with CaptureQueriesContext(connection) as queries:
        found = similar([token], query)
    reads = [q["sql"] for q in queries.captured_queries if '"embedding"' in q["sql"]]
    assert len(reads) == 1 and '"id" >' in reads[0]
    assert max(found, key=found.get) == new
    assert dense._cache[(workspace.pk, token, offline.name)].size == 51

    # Removed entries leave the cache; only ids are read, no vector.
    RecallEntry.objects.filter(pk__in=[new, ids[0]]).delete()
    with CaptureQueriesContext(connection) as queries:
        found = similar([token], query)
    assert not [q for q in queries.captured_queries if '"embedding"' in q["sql"].split("FROM")[0]]
    held = dense._cache[(workspace.pk, token, offline.name)]
    assert held.size == 49 and new not in held.ids[:held.size] and ids[0] not in held.ids[:held.size]
    assert new not in found
    # Nothing changed: no statement at all for the vectors.
    states = stats.scope_states(workspace_id=workspace.pk, scope_tokens=[token])
    with CaptureQueriesContext(connection) as queries:
        similar([token], query, states)
    assert len(queries.captured_queries) == 0


def test_a_vector_written_out_of_order_is_found(workspace, offline):
    rng = np.random.default_rng(3)
    token = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    ids = _entries(workspace, token, _unit(rng, 20, offline.dims), model=offline.name)
    dense.recall_embeddings_clear(entry_ids=[ids[3]])
    similar = dense.dense_similarities(workspace_id=workspace.pk)
    similar([token], "anything")
    assert dense._cache[(workspace.pk, token, offline.name)].size == 19
    # The oldest entry embedded again after newer ones: its id is below the
    # newest held, and the totals show one more than the append found.
    dense.recall_vectors_store([(ids[3], _unit(rng, 1, offline.dims)[0])], model=offline.name)
    _entries(workspace, token, _unit(rng, 1, offline.dims), model=offline.name)
    similar([token], "anything")
    held = dense._cache[(workspace.pk, token, offline.name)]
    assert held.size == 21 and ids[3] in held.ids[:held.size]


def test_vectors_held_stay_under_the_setting(workspace, offline, settings, caplog):
    rng = np.random.default_rng(4)
    row = offline.dims * 4 + 8
    settings.RECALL_VECTOR_CACHE_MIB = 1
    tokens = [memory_scope_token(workspace.pk, Scope.USER, f"u{i}") for i in range(3)]
    for token in tokens:
        _entries(workspace, token, _unit(rng, 250, offline.dims), model=offline.name)
    similar = dense.dense_similarities(workspace_id=workspace.pk)
    for token in tokens:
        assert similar([token], "a question")
    report = dense.recall_vector_cache_report()
    assert report["bytes"] <= 1024 * 1024 and report["scopes"] == 2
    assert [key[1] for key in dense._cache] == tokens[1:]  # the least recently used left
    big = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    _entries(workspace, big, _unit(rng, 1024 * 1024 // row + 1, offline.dims), model=offline.name)
    assert similar([big], "a question") == {}
    assert dense.recall_vector_cache_report()["scopes_too_large"] == 1
    assert "exceed RECALL_VECTOR_CACHE_MIB" in caplog.text


def test_top_k_by_partial_selection_is_the_sorted_top_k():
    rng = np.random.default_rng(5)
    scores = rng.standard_normal(10_000).astype(np.float32)
    ids = np.arange(10_000)
    top_ids, top_scores = dense._top(ids, scores, 200)
    expected = np.argsort(-scores)[:200]
    assert list(top_ids) == list(ids[expected])
    assert list(top_scores) == list(scores[expected])


def test_ranking_reads_a_fixed_number_of_statements_whatever_the_scope(api, workspace, offline):
    """Shortlist, totals, document counts (once the shortlist is cut),
    pinned rows and vectors: the same statements at 20 entries and at more
    than the shortlist takes."""
    from memories.recall import ranking

    rng = np.random.default_rng(6)
    token = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    message_append(workspace=workspace, external_id="s", role="user", content="hello")
    body = {"query": "harbour lantern", "max_messages": 2}

    def statements() -> int:
        api.post("/v1/conversations/s/context", body, format="json")  # vectors brought up to date
        with CaptureQueriesContext(connection) as queries:
            assert api.post("/v1/conversations/s/context", body, format="json").status_code == 200
        return len(queries.captured_queries)

    _lanterns(workspace, token, 20, rng, offline)
    small = statements()
    _lanterns(workspace, token, ranking.SHORTLIST_LIMIT + 50, rng, offline)
    # Once the shortlist is cut: the rows of the neighbours by meaning it
    # left out (one); the terms' document counts are read either way.
    assert statements() == small + 1


def _lanterns(workspace, token, n, rng, offline) -> None:
    rows = [RecallEntry(workspace=workspace, kind=RecallKind.MEMORY, scope_token=token,
                        terms=" harbour lantern ", length=2) for _ in range(n)]
    RecallEntry.objects.bulk_create(rows)
    missing = list(RecallEntry.objects.filter(workspace=workspace, embedding_model="").values_list("id", flat=True))
    dense.recall_vectors_store(list(zip(missing, _unit(rng, len(missing), offline.dims), strict=True)),
                               model=offline.name)
