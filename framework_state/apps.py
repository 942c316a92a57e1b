from django.apps import AppConfig


class FrameworkStateConfig(AppConfig):
    name = "framework_state"
    verbose_name = "Framework state"

    def ready(self) -> None:
        # Receivers are connected once the apps are loaded.
        import conversations.hooks as hooks
        import framework_state.services.claude as claude

        def session_entries_edited(sender, event, **kwargs) -> None:
            claude.session_entries_note_message_edited(event=event)

        hooks.message_edited.connect(session_entries_edited, weak=False, dispatch_uid="session_entries_edited")
