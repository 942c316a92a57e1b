"""Framework adapters. Each module imports its framework's package, an optional
extra of `memory_client` (`pip install ./memory_client[langgraph]` ...)."""
