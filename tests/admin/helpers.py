"""Small helpers for driving the admin through `admin_client`."""

from __future__ import annotations

from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.messages import get_messages


def run_action(client, url: str, action: str, ids, *, confirm: bool = False, **extra):
    data = {"action": action, ACTION_CHECKBOX_NAME: [str(i) for i in ids], "index": 0, **extra}
    if confirm:
        data["post"] = "yes"
    return client.post(url, data, follow=True)


def messages_of(response) -> list[tuple[str, str]]:
    return [(message.tags, str(message)) for message in get_messages(response.wsgi_request)]


def only_message(response) -> tuple[str, str]:
    found = messages_of(response)
    assert len(found) == 1, found
    return found[0]
