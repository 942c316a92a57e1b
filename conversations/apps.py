from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created
        from django.db.models.signals import post_migrate

        from memory_project.db import analyze_after_migrate, prefer_generic_plans

        # Every app's prepared statements (memory_project.db.prepared_cursor) are
        # planned generically; the receiver lives here, where the hot ones are.
        connection_created.connect(prefer_generic_plans, dispatch_uid="prefer_generic_plans")
        # Once per migrate (sent for this app after every migration ran): new
        # indexes get their statistics on SQLite.
        post_migrate.connect(analyze_after_migrate, sender=self, dispatch_uid="analyze_after_migrate")
