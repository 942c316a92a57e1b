"""Server support for the framework adapters of `memory_client`.

Each framework's session is a conversation (`Conversation.source` names the
framework): Claude Agent SDK transcripts, OpenAI Agents SDK session items and
LangGraph threads with their checkpoints. LangGraph store items are documents
of a memory store.
"""
