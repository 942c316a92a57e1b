"""Export a workspace to JSON Lines and import it back, exactly.

Which tables belong to a workspace is worked out from the models themselves
(`workspace_models`): every model with a foreign key to `Workspace`, or to a
model that has one, and so on. A table added later is carried without anyone
remembering to list it.

The file: a header line, one line per row (`{"model", "pk", "fields"}`, fields
by column name, in an order where referenced tables come first), and a trailer
with the row count, so a truncated file is refused rather than half-imported.
API keys travel as their hash; a secret is never in a backup because it is
never stored.

Two ways to import:
- restore (default): every id as it was; refused when the workspace (id or
  slug) already exists on the target database.
- `into=<slug>`: a copy under a new workspace; every id is re-issued and every
  reference rewritten, so the copy can live beside its original. API keys are
  not copied: a key authenticates to exactly one workspace.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.apps import apps
from django.db import connection, models, transaction
from django.utils.dateparse import parse_duration
from django.utils.duration import duration_iso_string
from tqdm import tqdm

from accounts.models import ApiKey, Workspace
from memory_project.errors import ConflictError, NotFoundError, ValidationError
from memory_project.user_text import is_verbatim

FORMAT = "memory-service-workspace"
FORMAT_VERSION = 1
EXPORT_CHUNK_SIZE = 2000

# Tables that hold a workspace key but describe the installation rather than the
# workspace's data: an operator's membership names a staff user of this
# database, who need not exist where the backup is restored. The recall
# index's per-scope totals and term counts are kept by triggers on its
# entries, so restoring the entries rebuilds them (a copied row would count
# every entry twice).
NOT_EXPORTED = {"accounts.workspacemembership", "memories.recallscopestats", "memories.recalltermstats"}
# Tables that moved to another app (same table, new label): an export written
# before the move still imports.
MOVED_MODELS = {
    "conversations.conversationresource": "memories.conversationresource",
    **{f"conversations.{name}": f"framework_state.{name}"
       for name in ("agentsession", "sessionentry", "checkpoint", "checkpointwrite", "storedocumentttl")},
}

# A public id: a lowercase type prefix and a ULID (see memory_project.ids).
_ID_TOKEN = re.compile(r"\b[a-z]+_[0-9A-HJKMNP-TV-Z]{26}\b")


# --- Which tables ------------------------------------------------------------------


def workspace_models() -> list[tuple[type[models.Model], str]]:
    """(model, lookup from the model to its workspace), referenced tables first.

    Found by following foreign keys outward from `Workspace`, shortest path
    first, so a direct `workspace` column is preferred over a longer route.
    """
    paths: dict[type[models.Model], str] = {}
    frontier: list[type[models.Model]] = [Workspace]
    # Proxies share their concrete model's table; unmanaged models are not ours to copy.
    all_models = [
        m
        for m in apps.get_models(include_auto_created=True)
        if not m._meta.proxy and m._meta.managed and m._meta.label_lower not in NOT_EXPORTED
    ]
    while frontier:
        next_frontier = []
        for model in all_models:
            if model is Workspace or model in paths:
                continue
            for f in model._meta.concrete_fields:
                if not (f.many_to_one or f.one_to_one) or f.related_model not in frontier:
                    continue
                target = f.related_model
                paths[model] = "pk" if target is Workspace and f.primary_key else (
                    f.name if target is Workspace else f"{f.name}__{paths[target]}"
                )
                next_frontier.append(model)
                break
        frontier = next_frontier
    return [(model, paths[model]) for model in _dependency_order(list(paths))]


def _dependency_order(owned: list[type[models.Model]]) -> list[type[models.Model]]:
    """Owned models so that a model comes after every owned model it references
    (self references and cycles are broken by label order; within one transaction
    foreign keys are checked at commit, so only re-issued integer keys care)."""
    owned_set = set(owned)
    deps = {
        m: {
            f.related_model
            for f in m._meta.concrete_fields
            if f.is_relation and f.related_model in owned_set and f.related_model is not m
        }
        for m in owned
    }
    ordered: list[type[models.Model]] = []
    remaining = sorted(owned, key=lambda m: m._meta.label)
    while remaining:
        ready = [m for m in remaining if deps[m] <= set(ordered)]
        if not ready:
            ready = remaining[:1]
        for m in ready:
            ordered.append(m)
            remaining.remove(m)
    return ordered


def _label(model: type[models.Model]) -> str:
    return model._meta.label_lower


# --- Values --------------------------------------------------------------------------


def _encode(f: models.Field, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(f, models.BinaryField):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, datetime.timedelta):
        return duration_iso_string(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()  # full microseconds, offset kept
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    return value


def _decode(f: models.Field, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(f, models.BinaryField):
        return base64.b64decode(value)
    if isinstance(f, models.DurationField):
        return parse_duration(value)
    if isinstance(f, models.JSONField):
        return value
    return f.to_python(value)


def _row(obj: models.Model) -> dict[str, Any]:
    return {
        "model": _label(type(obj)),
        "pk": _encode(obj._meta.pk, obj.pk),
        "fields": {f.attname: _encode(f, getattr(obj, f.attname)) for f in obj._meta.concrete_fields},
    }


# --- Export --------------------------------------------------------------------------


def _find_workspace(ref: str) -> Workspace:
    workspace = Workspace.objects.filter(pk=ref).first() or Workspace.objects.filter(slug=ref).first()
    if workspace is None:
        raise NotFoundError(f"No workspace '{ref}'.")
    return workspace


def _owned_queryset(model: type[models.Model], lookup: str, workspace: Workspace) -> models.QuerySet:
    return model._base_manager.filter(**{lookup: workspace.pk}).order_by("pk")


def workspace_export(*, workspace_ref: str, out: IO[str], progress: bool = False) -> dict[str, int]:
    """Write the workspace to `out` as JSON Lines; returns rows per model.

    Reads in one transaction so the file is a consistent snapshot: on
    PostgreSQL a repeatable-read, read-only one (writers are not blocked);
    on SQLite the transaction holds the write lock, so writers wait.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        # Only the transaction's first statement may set its isolation; inside a
        # caller's transaction the caller's snapshot is what we get.
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        workspace = _find_workspace(workspace_ref)
        tables = workspace_models()
        counts = {_label(m): _owned_queryset(m, lookup, workspace).count() for m, lookup in tables}
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "workspace": _row(workspace),
            "models": list(counts),
            "counts": counts,
        }
        out.write(_dumps(header))
        written = 0
        with tqdm(total=sum(counts.values()), unit="row", desc="export", disable=not progress) as bar:
            for model, lookup in tables:
                for obj in _owned_queryset(model, lookup, workspace).iterator(chunk_size=EXPORT_CHUNK_SIZE):
                    out.write(_dumps(_row(obj)))
                    written += 1
                    bar.update(1)
        out.write(_dumps({"end": True, "rows": written}))
    return counts


def _dumps(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


# --- Import --------------------------------------------------------------------------


@dataclass
class ImportResult:
    workspace: Workspace
    counts: dict[str, int]
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass
class _Remap:
    """Old id -> new id for a copy; empty (identity) for a restore."""

    active: bool
    source_workspace_id: str = ""
    ids: dict[str, Any] = field(default_factory=dict)
    int_pks: dict[str, dict[Any, Any]] = field(default_factory=lambda: defaultdict(dict))

    def token(self, text: str) -> str:
        return _ID_TOKEN.sub(lambda m: self.ids.get(m.group(0), m.group(0)), text)

    def deep(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.token(value)
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        if isinstance(value, dict):
            return {self.token(k): self.deep(v) for k, v in value.items()}
        return value


def _read_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ValidationError(f"line {number}: not JSON ({exc}).")
        if isinstance(row, dict):
            if row.get("model") in MOVED_MODELS:
                row["model"] = MOVED_MODELS[row["model"]]
            if isinstance(row.get("counts"), dict):
                row["counts"] = {MOVED_MODELS.get(label, label): n for label, n in row["counts"].items()}
        yield row


def _header(first: dict[str, Any] | None) -> dict[str, Any]:
    if not first or first.get("format") != FORMAT:
        raise ValidationError("Not a workspace export (missing header).")
    if first.get("version") != FORMAT_VERSION:
        raise ValidationError(f"Unsupported export version {first.get('version')!r}.")
    return first


def workspace_import(
    *, lines: Iterable[str], into: str | None = None, name: str | None = None, progress: bool = False
) -> ImportResult:
    """Load an export (any iterable of its lines, read twice when copying) in
    one transaction: all of it, or nothing."""
    lines = list(lines) if into else lines
    owned = {_label(m): m for m, _ in workspace_models()}
    rows = _read_lines(lines)
    header = _header(next(rows, None))
    unknown = set(header["counts"]) - set(owned)
    if unknown:
        raise ValidationError(f"The export holds tables this service does not have: {sorted(unknown)}.")
    source_ws = header["workspace"]
    remap = _Remap(active=into is not None, source_workspace_id=source_ws["pk"])
    if remap.active:
        _plan_new_ids(remap, _read_lines(lines), owned, source_ws)

    counts: dict[str, int] = defaultdict(int)
    skipped: dict[str, int] = defaultdict(int)
    seen: dict[str, set[Any]] = defaultdict(set)
    references: set[tuple[str, Any]] = set()
    total = sum(header["counts"].values())
    with transaction.atomic(), tqdm(total=total, unit="row", desc="import", disable=not progress) as bar:
        workspace = _create_workspace(source_ws, into=into, name=name, remap=remap)
        seen[_label(Workspace)].add(workspace.pk)
        ended = None
        for row in rows:
            if row.get("end"):
                ended = row
                break
            label = row.get("model")
            model = owned.get(label)
            if model is None:
                raise ValidationError(f"Row of unknown table {label!r}.")
            bar.update(1)
            if remap.active and model is ApiKey:
                skipped[label] += 1
                continue
            obj = _build(model, row, remap, workspace, owned, references)
            obj.save_base(raw=True, force_insert=True)
            if isinstance(model._meta.pk, models.AutoField):
                remap.int_pks[label][row["pk"]] = obj.pk
            seen[label].add(obj.pk)
            counts[label] += 1
        if ended is None or ended.get("rows") != sum(counts.values()) + sum(skipped.values()):
            raise ValidationError("The export is truncated (no trailer, or its row count does not match).")
        for label, expected in header["counts"].items():
            if counts.get(label, 0) + skipped.get(label, 0) != expected:
                raise ValidationError(f"{label}: the header announces {expected} rows, the file holds {counts.get(label, 0)}.")
        dangling = [(label, pk) for label, pk in references if pk not in seen[label]]
        if dangling:
            raise ValidationError(f"Rows reference objects outside the export, e.g. {dangling[0][0]} {dangling[0][1]!r}.")
    return ImportResult(workspace=workspace, counts=dict(counts), skipped=dict(skipped))


def _plan_new_ids(remap: _Remap, rows: Iterator[dict[str, Any]], owned: dict[str, type[models.Model]], ws: dict) -> None:
    """First pass of a copy: a fresh id for every row whose key the service
    generates (the `ws_...`, `mem_...` kind), so references can be rewritten
    whichever order they come in."""
    next(rows, None)
    remap.ids[ws["pk"]] = Workspace._meta.pk.default()
    for row in rows:
        model = owned.get(row.get("model"))
        if model is None or model is ApiKey:
            continue
        pk_field = model._meta.pk
        if not pk_field.is_relation and callable(pk_field.default) and isinstance(row.get("pk"), str):
            remap.ids[row["pk"]] = pk_field.default()


def _create_workspace(source: dict[str, Any], *, into: str | None, name: str | None, remap: _Remap) -> Workspace:
    fields = {f.attname: _decode(f, source["fields"].get(f.attname)) for f in Workspace._meta.concrete_fields}
    if into is None:
        if Workspace.objects.filter(pk=fields["id"]).exists() or Workspace.objects.filter(slug=fields["slug"]).exists():
            raise ConflictError(
                f"Workspace '{fields['slug']}' already exists here; import it with --into <new-slug> to make a copy."
            )
    else:
        if Workspace.objects.filter(slug=into).exists():
            raise ConflictError(f"A workspace with slug '{into}' already exists.")
        fields.update(id=remap.ids[source["pk"]], slug=into, name=name or fields["name"])
    workspace = Workspace(**fields)
    workspace.save_base(raw=True, force_insert=True)
    return workspace


def _build(
    model: type[models.Model],
    row: dict[str, Any],
    remap: _Remap,
    workspace: Workspace,
    owned: dict[str, type[models.Model]],
    references: set,
) -> models.Model:
    values: dict[str, Any] = {}
    data = row.get("fields") or {}
    for f in model._meta.concrete_fields:
        raw = data.get(f.attname)
        if f.primary_key and isinstance(f, models.AutoField) and remap.active:
            continue  # the database issues a new one
        if raw is not None and f.is_relation:
            target = f.related_model
            target_label = _label(target)
            if target is Workspace:
                if raw != remap.source_workspace_id:
                    raise ValidationError(f"{row['model']} {row.get('pk')!r} belongs to another workspace.")
                raw = workspace.pk
            elif target_label not in owned:
                pass  # e.g. a staff user: kept as is; the database checks it exists
            elif remap.active and isinstance(target._meta.pk, models.AutoField):
                if raw not in remap.int_pks[target_label]:
                    raise ValidationError(f"{row['model']} {row.get('pk')!r} refers to {target_label} {raw!r} before it.")
                raw = remap.int_pks[target_label][raw]
                references.add((target_label, raw))
            else:
                raw = remap.ids.get(raw, raw) if remap.active else raw
                references.add((target_label, _decode(target._meta.pk, raw) if not target._meta.pk.is_relation else raw))
        elif raw is not None and remap.active and not is_verbatim(model._meta.label, f.name):
            # A copy re-issues ids, but never rewrites what a caller wrote
            # verbatim (the registry says which): its hash and meaning stay.
            if f.primary_key:
                raw = remap.ids.get(raw, raw)
            elif isinstance(f, models.JSONField):
                raw = remap.deep(raw)
            elif isinstance(raw, str) and isinstance(f, (models.CharField, models.TextField)):
                raw = remap.token(raw)
        values[f.attname] = _decode(f, raw)
    return model(**values)

