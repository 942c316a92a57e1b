"""django-filter sets for conversation lists."""

from __future__ import annotations

import django_filters

from conversations.models import Conversation


class ConversationFilterSet(django_filters.FilterSet):
    # Served by the (workspace, user_id, last_message_at, id) index.
    user_id = django_filters.CharFilter(field_name="user_id")
    source = django_filters.CharFilter(field_name="source")

    class Meta:
        model = Conversation
        fields = ["user_id", "source"]
