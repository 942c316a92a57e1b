from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Imported once the apps are loaded (Django app loading): the
        # receivers need the models, the checks register on import.
        import accounts.receivers as receivers
        import memory_project.checks  # noqa: F401

        receivers.connect()
