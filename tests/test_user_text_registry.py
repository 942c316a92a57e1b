"""Every text, JSON or binary column of every concrete model is either in the
user-text registry with how it is erased, or marked as holding no user text:
a table added later cannot escape erasure unnoticed."""

from __future__ import annotations

from django.apps import apps

from memory_project.user_text import Erase, text_columns, undeclared_columns, user_text_tables


def test_every_text_json_and_binary_column_is_declared():
    assert list(undeclared_columns()) == []


def test_declared_columns_exist():
    for column in text_columns():
        model = apps.get_model(column.model)
        assert model._meta.get_field(column.field).concrete, column


def test_the_columns_the_issue_named_are_declared_with_their_erasure():
    declared = {(c.model, c.field): c.erase for c in text_columns()}
    assert declared[("conversations.Message", "metadata")] == Erase.SCRUB
    assert declared[("conversations.Conversation", "metadata")] == Erase.SCRUB
    assert declared[("memories.MemoryItem", "fact_key")] == Erase.SCRUB
    assert declared[("memories.MemoryItem", "path")] == Erase.SCRUB
    assert declared[("memories.MemoryVersion", "attributes")] == Erase.SCRUB
    assert declared[("framework_state.SessionEntry", "entry")] == Erase.SCRUB
    assert declared[("framework_state.Checkpoint", "checkpoint")] == Erase.DELETE_ROW
    assert "memories_recallentry_fts" in user_text_tables()


def test_a_new_model_with_an_undeclared_text_column_is_caught():
    from django.db import models

    class Scratch(models.Model):  # noqa: DJ008
        note = models.TextField()

        class Meta:
            app_label = "memories"

    try:
        assert "memories.Scratch.note" in set(undeclared_columns())
    finally:
        del apps.all_models["memories"]["scratch"]
        apps.clear_cache()
