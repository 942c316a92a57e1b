"""Retrieval and context assembly: indexing, ranking, assembly."""
