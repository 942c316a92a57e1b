"""Memory stores attached to a conversation (a session's `resources[]`, spec 004)."""
