"""Recall vectors in PostgreSQL with pgvector: the column the migration adds,
the HNSW index for the provider's size, writes and clears, and the nearest
entries found in the database (filtered by workspace and scopes) against an
exact search. Skipped on a database without the extension; run against a
real pgvector server by test_pgvector_suite.py."""

from __future__ import annotations

import os

import numpy as np
import pytest
from django.db import connection, transaction

from accounts.actors import Actor
from conversations.services import message_append
from memories.models import Scope
from memories.recall import dense, embeddings, pgvector
from memories.recall.index import memory_scope_token
from memories.recall.models import RecallEntry
from memories.services.items import memory_item_create
from tests.factories import WorkspaceFactory
from tests.memories.test_recall_vectors import _entries, _exact, _query_vector, _unit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def vector_database(settings):
    if not pgvector.has_column():
        if os.environ.get("PGVECTOR_REQUIRED"):
            pytest.fail("the database was expected to have pgvector")
        pytest.skip("the database has no pgvector")
    settings.EMBEDDING_PROVIDER = "offline"
    settings.RECALL_VECTOR_INDEX = "database"
    dense.recall_vector_cache_clear()
    provider = embeddings.get_embedding_provider()
    pgvector.vector_index_ensure()
    return provider


def test_the_column_and_the_index_for_the_providers_size(vector_database):
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [pgvector.index_name(384)])
        [definition] = cursor.fetchone()
    assert "USING hnsw" in definition and "vector_cosine_ops" in definition
    assert pgvector.vector_index_ensure() is False  # there already


def test_vectors_are_written_to_the_column_and_cleared(workspace, vector_database):
    item = memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="global", type="fact",
                              content="The office opens at nine")
    assert dense.recall_embed_pending(workspace_id=workspace.pk) == 1
    entry = RecallEntry.objects.get(memory_id=item.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT vector_dims(embedding_vector) FROM memories_recallentry WHERE id = %s", [entry.pk])
        assert cursor.fetchone()[0] == 384
        dense.recall_embeddings_clear(entry_ids=[entry.pk])
        cursor.execute("SELECT embedding_vector IS NULL, embedding IS NULL FROM memories_recallentry WHERE id = %s",
                       [entry.pk])
        assert cursor.fetchone() == (True, True)


def test_nearest_entries_come_from_the_database_filtered_by_workspace_and_scopes(workspace, vector_database):
    provider = vector_database
    rng = np.random.default_rng(7)
    query = "when does the office open"
    query_vector = _query_vector(provider, query)
    glob = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    user = memory_scope_token(workspace.pk, Scope.USER, "u1")
    other_user = memory_scope_token(workspace.pk, Scope.USER, "u2")
    _entries(workspace, glob, _unit(rng, 300, 384), model=provider.name)
    _entries(workspace, user, _unit(rng, 40, 384), model=provider.name)
    # The query's own vector, where this search must not look.
    _entries(workspace, other_user, query_vector[None, :], model=provider.name)
    stranger = WorkspaceFactory(name="Stranger", slug="stranger")
    _entries(stranger, memory_scope_token(stranger.pk, Scope.GLOBAL, ""), query_vector[None, :],
             model=provider.name)
    found = dense.dense_similarities(workspace_id=workspace.pk)([glob, user], query)
    assert found == pytest.approx(_exact(workspace, [glob, user], provider.name, query_vector), abs=2e-3)
    assert dense.recall_vector_cache_report()["vectors"] == 0  # nothing held in process


def test_auto_holds_a_scope_that_fits_and_searches_a_larger_one_in_the_database(
        workspace, vector_database, settings, monkeypatch):
    """`auto`: each scope where it is served best. One that fits the process's
    budget is held and scored in process (exact); one larger than the budget
    alone is left to pgvector; their neighbours are merged on one scale."""
    provider = vector_database
    settings.RECALL_VECTOR_INDEX = "auto"
    rng = np.random.default_rng(9)
    query = "when does the office open"
    query_vector = _query_vector(provider, query)
    small = memory_scope_token(workspace.pk, Scope.USER, "u1")
    large = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    _entries(workspace, small, _unit(rng, 20, 384), model=provider.name)
    _entries(workspace, large, _unit(rng, 120, 384), model=provider.name)
    # A budget that holds 20 vectors of 384 floats and not 120.
    monkeypatch.setattr(dense, "_limit_bytes", lambda: 50 * (384 * 4 + 8))
    searched = []
    nearest = pgvector.nearest
    monkeypatch.setattr(pgvector, "nearest", lambda **kw: searched.append(kw["scope_tokens"]) or nearest(**kw))
    found = dense.dense_similarities(workspace_id=workspace.pk)([small, large], query)
    assert searched == [[large]]
    assert dense.recall_vector_cache_report()["vectors"] == 20
    assert found == pytest.approx(_exact(workspace, [small, large], provider.name, query_vector), abs=2e-3)


def test_hnsw_finds_the_exact_top_200(workspace, vector_database):
    """Past a few thousand entries the planner takes the HNSW index; its top
    200 keeps at least 95% of the exact top 200 (vectors near a few real
    texts, as a scope's are)."""
    provider = vector_database
    rng = np.random.default_rng(8)
    texts = ["office hours", "the user's daughter plays piano", "allergic to peanuts", "flight to Lisbon",
             "quarterly report deadline", "the cat is called Snow", "prefers aisle seats", "learning Portuguese"]
    pool = np.asarray(provider.embed_documents(texts), dtype=np.float32)
    base = pool[rng.integers(0, len(pool), 6000)] + 0.05 * rng.standard_normal((6000, 384)).astype(np.float32)
    glob = memory_scope_token(workspace.pk, Scope.GLOBAL, "")
    _entries(workspace, glob, base / np.linalg.norm(base, axis=1, keepdims=True), model=provider.name)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_recallentry")
    hits = []
    for query in ("when is the office open", "what instrument does her child play"):
        vector = _query_vector(provider, query)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute("EXPLAIN SELECT id FROM memories_recallentry WHERE workspace_id = %s "
                           "AND scope_token = ANY(%s) AND embedding_model = %s AND vector_dims(embedding_vector) "
                           "= 384 ORDER BY embedding_vector::vector(384) <=> %s::vector(384) LIMIT 200",
                           [workspace.pk, [glob], provider.name, pgvector.vector_literal(vector)])
            plan = "\n".join(row[0] for row in cursor.fetchall())
            assert pgvector.index_name(384) in plan, plan
            ids, _ = pgvector.nearest(workspace_id=workspace.pk, scope_tokens=[glob], model=provider.name,
                                      query=vector, limit=200)
        pairs = list(RecallEntry.objects.filter(scope_token=glob).values_list("id", "embedding"))
        matrix = embeddings.normalize_rows(embeddings.bytes_to_matrix([bytes(b) for _, b in pairs], 384))
        exact = {pairs[i][0] for i in np.argsort(-(matrix @ vector))[:200]}
        hits.append(len(exact & set(ids.tolist())) / 200)
    assert min(hits) >= 0.95, hits


def test_context_ranks_by_the_database_search(api, workspace, vector_database):
    message_append(workspace=workspace, external_id="c", role="user", content="hello")
    memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="global", type="fact",
                       content="我女儿下个月要去杭州参加钢琴比赛。")
    memory_item_create(workspace=workspace, actor=Actor.for_api_key("k"), scope="global", type="fact",
                       content="The user prefers aisle seats")
    dense.recall_embed_pending(workspace_id=workspace.pk)
    data = api.post("/v1/conversations/c/context", {"query": "Where is my daughter's piano contest?",
                                                     "max_messages": 0}, format="json").json()["data"]
    [hit] = [e for e in data["memory"]["injected"] if "钢琴" in e["content"]]
    assert hit["score"]["dense"] > 0
    assert dense.recall_vector_cache_report()["vectors"] == 0
