from django.apps import AppConfig


class FrameworkStateConfig(AppConfig):
    name = "framework_state"
    verbose_name = "Framework state"
