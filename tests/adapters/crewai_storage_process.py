"""crewai's `StorageBackend` contract on the service's storage, method by
method, in crewai's environment (`.venv-crewai`):

    python -m tests.adapters.crewai_storage_process --base-url URL --api-key KEY

Prints one JSON line of what each call returned; the test checks it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai.memory.storage.backend import StorageBackend  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402

from memory_client import MemoryClient  # noqa: E402

TEA = "Ana drinks green tea every morning"
OFFICE = "The office closes at six on Fridays"
TRIP = "Ben flies to Porto in May"


def _ids(found: list[tuple[MemoryRecord, float]]) -> list[str]:
    return [record.id for record, _ in found]


def run(client: MemoryClient) -> dict[str, Any]:
    storage = client.crewai_storage("crew:contract")
    other = client.crewai_storage("crew:other")
    embed = storage.embedder
    out: dict[str, Any] = {"is_backend": isinstance(storage, StorageBackend)}

    tea = MemoryRecord(content=TEA, scope="/crew/c/agent/x", importance=0.9, categories=["drinks", "habits"],
                       metadata={"person": "Ana", "confirmed": True}, source="interview")
    office = MemoryRecord(content=OFFICE, scope="crew/c/agent/y/", importance=0.4, categories=["work"])
    trip = MemoryRecord(content=TRIP, scope="/crew/c", importance=0.5)
    storage.save([tea, office, trip])
    other.save([MemoryRecord(content="Ana drinks coffee", scope="/crew/o")])
    out["ids"] = [tea.id, office.id, trip.id]
    out["scopes"] = [tea.scope, office.scope, trip.scope]

    [beverage, closing] = embed(["what beverage does she like", "when does the workplace shut its doors"])
    out["search"] = _ids(storage.search(beverage, limit=3))
    out["search_scores"] = [score for _, score in storage.search(beverage, limit=3)]
    out["search_other_crew"] = [r.content for r, _ in other.search(other.embedder(["what beverage"])[0])]
    out["search_prefix"] = _ids(storage.search(closing, scope_prefix="/crew/c/agent/y"))
    out["search_prefix_elsewhere"] = _ids(storage.search(beverage, scope_prefix="/crew/c/agent/y"))
    out["search_categories"] = _ids(storage.search(beverage, categories=["drinks"]))
    out["search_categories_other"] = _ids(storage.search(beverage, categories=["travel"]))
    out["search_metadata"] = _ids(storage.search(beverage, metadata_filter={"person": "Ana", "confirmed": True}))
    out["search_metadata_other"] = _ids(storage.search(beverage, metadata_filter={"person": "Ben"}))
    out["search_min_score"] = _ids(storage.search(beverage, min_score=1.01))
    out["asearch"] = _ids(asyncio.run(storage.asearch(beverage, limit=1)))
    long_text = "what beverage does she like? " + "Which drink does she reach for first thing every day? " * 60
    out["search_long_text"] = _ids(storage.search(embed([long_text])[0], limit=1))
    try:
        storage.search([0.5] * 8)
    except ValueError as exc:
        out["foreign_vector"] = str(exc)

    got = storage.get_record(tea.id)
    out["get"] = [got.content, got.scope, got.importance, got.categories, got.metadata, got.source] if got else None
    out["get_unknown"] = storage.get_record("mem_unknown")
    out["get_other_crew"] = other.get_record(tea.id)
    got.content = "Ana drinks jasmine tea every morning"
    storage.update(got)
    out["updated"] = storage.get_record(tea.id).content

    out["list"] = [r.id for r in storage.list_records()]
    out["list_page"] = [r.id for r in storage.list_records(limit=1, offset=1)]
    out["list_prefix"] = [r.id for r in storage.list_records(scope_prefix="/crew/c/agent")]
    out["list_scopes"] = {p: storage.list_scopes(p) for p in ("/", "/crew/c", "/crew/c/agent", "/crew/c/agent/x")}
    info = storage.get_scope_info("/crew/c/agent")
    out["scope_info"] = [info.path, info.record_count, info.child_scopes, info.oldest_record is not None]
    out["count"] = [storage.count(), storage.count("/crew/c/agent"), storage.count("/nowhere")]
    out["list_categories"] = storage.list_categories()
    out["scope_categories"] = storage.get_scope_info("/").categories

    try:
        storage.save([MemoryRecord(content="a secret", private=True)])
    except ValueError as exc:
        out["private"] = str(exc)

    out["delete_category_none"] = storage.delete(categories=["nothing-here"])
    out["delete_ids"] = storage.delete(record_ids=[office.id, "mem_unknown"])
    out["delete_prefix"] = storage.delete(scope_prefix="/crew/c/agent")
    out["after_delete"] = [r.content for r in storage.list_records()]
    storage.reset()
    out["after_reset"] = [storage.count(), other.count()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--api-key", required=True)
    args = parser.parse_args()
    with MemoryClient(args.base_url, args.api_key) as client:
        print(json.dumps(run(client), default=str))


if __name__ == "__main__":
    main()
