from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from memory_project.db import analyze_after_migrate

        # Once per migrate (sent for this app after every migration ran): new
        # indexes get their statistics on SQLite.
        post_migrate.connect(analyze_after_migrate, sender=self, dispatch_uid="analyze_after_migrate")

        from conversations import hooks
        from conversations.framework.services.claude import session_entries_note_message_edited

        def session_entries_edited(sender, event, **kwargs) -> None:
            session_entries_note_message_edited(event=event)

        hooks.message_edited.connect(session_entries_edited, weak=False, dispatch_uid="session_entries_edited")
