from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from memory_project.db import prefer_generic_plans

        # Every app's prepared statements (memory_project.db.prepared_cursor) are
        # planned generically; the receiver lives here, where the hot ones are.
        connection_created.connect(prefer_generic_plans, dispatch_uid="prefer_generic_plans")
