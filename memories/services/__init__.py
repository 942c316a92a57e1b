"""Writes of the memories app, one module per area (items, stores, versioning,
jobs, ...). Import from the module, e.g. `from memories.services.versioning import version_record`."""
