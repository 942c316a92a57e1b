from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"

    def ready(self) -> None:
        # Imported once the apps are loaded (Django app loading): the
        # receivers need the models of this app and of conversations.
        import memories.receivers as receivers

        receivers.connect(self)
