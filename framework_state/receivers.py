"""What framework state learns from conversations. Connected by
`FrameworkStateConfig.ready()`."""

from __future__ import annotations

import conversations.hooks as hooks
from framework_state.services.claude import session_entries_note_message_edited


def _session_entries_edited(sender, event, **kwargs) -> None:
    session_entries_note_message_edited(event=event)


def connect() -> None:
    hooks.message_edited.connect(_session_entries_edited, weak=False, dispatch_uid="session_entries_edited")
