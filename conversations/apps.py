from django.apps import AppConfig
from django.db.models.signals import post_migrate

from memory_project.db import analyze_after_migrate


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations"

    def ready(self) -> None:
        # Once per migrate (sent for this app after every migration ran): new
        # indexes get their statistics on SQLite.
        post_migrate.connect(analyze_after_migrate, sender=self, dispatch_uid="analyze_after_migrate")
