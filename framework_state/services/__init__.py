"""Writes for the framework adapters, one module per framework."""
