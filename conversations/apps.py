from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from memory_project.db import prefer_generic_plans

        # The conversations' hot reads and writes run prepared (memory_project.db).
        connection_created.connect(prefer_generic_plans, dispatch_uid="prefer_generic_plans")
