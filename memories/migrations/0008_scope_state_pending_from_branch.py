# Pending work of a branch scope is derived from its branch's counters (which
# appends move in their own transaction) instead of being counted here.

import json

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Sum


def link_branches(apps, schema_editor):
    """Link each branch scope state to its branch and carry what the pipeline
    had read over to the branch's processed counters."""
    ScopeState = apps.get_model("memories", "ScopeState")
    Branch = apps.get_model("conversations", "Branch")
    Message = apps.get_model("conversations", "Message")
    states = ScopeState.objects.filter(scope="branch", conversation__isnull=False).iterator()
    for state in states:
        try:
            _, name = json.loads(state.scope_id)
        except (TypeError, ValueError):
            continue
        branch = Branch.objects.filter(conversation_id=state.conversation_id, name=name).first()
        if branch is None:
            continue
        state.branch = branch
        state.save(update_fields=["branch"])
        # Nothing waiting (a clear, or floors deleted unread): caught up through the last floor.
        through = branch.next_floor_no - 1 if state.pending_floors == 0 else state.last_processed_floor_no
        through = max(through, branch.processed_floor_no)
        tokens = Message.objects.filter(branch=branch, floor_no__lte=through).aggregate(t=Sum("token_estimate"))["t"]
        Branch.objects.filter(pk=branch.pk).update(
            processed_floor_no=through,
            processed_tokens=branch.appended_tokens if state.pending_floors == 0 else (tokens or 0),
        )


class Migration(migrations.Migration):

    dependencies = [
        ("conversations", "0006_branch_pipeline_counters"),
        ("memories", "0007_recall_fulltext_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="scopestate",
            name="branch",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="conversations.branch",
            ),
        ),
        migrations.RunPython(link_branches, migrations.RunPython.noop),
        migrations.RemoveIndex(
            model_name="scopestate",
            name="scope_ws_dirty",
        ),
        migrations.RemoveField(
            model_name="scopestate",
            name="dirty",
        ),
        migrations.RemoveField(
            model_name="scopestate",
            name="pending_floors",
        ),
        migrations.RemoveField(
            model_name="scopestate",
            name="pending_tokens",
        ),
    ]
