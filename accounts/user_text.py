"""Columns of accounts and of Django's own apps, for the user-text registry
(`memory_project.user_text`)."""

from memory_project.user_text import Erase, declare

# Names given by operators, hashes and ids: never an agent's text.
declare("accounts.Workspace", no_user_text=["id", "name", "slug"])
declare("accounts.ApiKey", no_user_text=["id", "name", "prefix", "key_hash"])

# The admin's log names the object it changed (`object_repr`: a memory's
# first words) and what changed: redaction scrubs both.
declare("admin.LogEntry", erase={"object_repr": Erase.SCRUB, "change_message": Erase.SCRUB},
        no_user_text=["object_id"])
declare("auth.Permission", no_user_text=["name", "codename"])
declare("auth.Group", no_user_text=["name"])
declare("auth.User", no_user_text=["password", "username", "first_name", "last_name", "email"])
declare("contenttypes.ContentType", no_user_text=["app_label", "model"])
# An operator's signed session (user id, auth hash, flash messages).
declare("sessions.Session", no_user_text=["session_key", "session_data"])
