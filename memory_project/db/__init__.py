"""SQL the ORM does not write for the hot paths, by concern: names and
fragments (`sql`), rows as one JSON parameter (`records`), multi-row INSERTs
(`inserts`), reads answered as the ORM answers them (`reads`), PostgreSQL's
pipeline mode (`pipeline`), upkeep after a migrate (`maintenance`).

SQL here is built from model metadata (table and column names, quoted by
the backend); every value is a bound parameter.
"""

from memory_project.db.inserts import SQLITE_MAX_PARAMS, insert_objects, insert_rows, new_object
from memory_project.db.maintenance import analyze_after_migrate
from memory_project.db.pipeline import statement_pipeline
from memory_project.db.reads import StoredJson, fetch_one, json_column, json_text, model_objects, model_rows
from memory_project.db.records import json_records, json_recordset, record_names
from memory_project.db.sql import cast_type, column, on_conflict_sql, placeholders, select_list, table

__all__ = [
    "SQLITE_MAX_PARAMS",
    "StoredJson",
    "analyze_after_migrate",
    "cast_type",
    "column",
    "fetch_one",
    "insert_objects",
    "insert_rows",
    "json_column",
    "json_records",
    "json_recordset",
    "json_text",
    "model_objects",
    "model_rows",
    "new_object",
    "on_conflict_sql",
    "placeholders",
    "record_names",
    "select_list",
    "statement_pipeline",
    "table",
]
