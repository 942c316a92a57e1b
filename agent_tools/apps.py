from django.apps import AppConfig


class AgentToolsConfig(AppConfig):
    name = "agent_tools"
    verbose_name = "Agent tools"
