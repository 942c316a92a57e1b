"""Prompt assembly for a conversation: history (spec 002) plus memory (spec 003)."""
