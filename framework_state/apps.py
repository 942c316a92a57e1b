from django.apps import AppConfig


class FrameworkStateConfig(AppConfig):
    name = "framework_state"
    verbose_name = "Framework state"

    def ready(self) -> None:
        # Imported once the apps are loaded (Django app loading): the
        # receivers need the models of this app and of conversations.
        import framework_state.receivers as receivers

        receivers.connect()
