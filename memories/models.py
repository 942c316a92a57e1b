"""One memory model for both spec 003's items and the stores' path-addressed
documents, one immutable version history, one edge table, jobs and scope state."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from accounts.models import Workspace
from conversations.selectors.branches import branch_pending_annotations
from memory_project.ids import (
    new_edge_id,
    new_job_id,
    new_memory_id,
    new_memory_store_id,
    new_memory_version_id,
)

MAX_CONTENT_BYTES = 102_400
MAX_PATH_BYTES = 1024
MAX_PATH_SEGMENTS = 20
# A branch scope id is JSON.stringify([conversation_id, branch]): a 256-byte
# conversation id and a 128-character branch name, every `"` or `\` of them
# escaped, take up to 775 characters (1,031 bytes), so 600 was too few.
MAX_SCOPE_ID_CHARS = 1024


class Scope(models.TextChoices):
    GLOBAL = "global"
    # Keyed by a conversation's `user_id`: visible in all of that user's
    # conversations and in no other user's.
    USER = "user"
    CHAT = "chat"
    BRANCH = "branch"
    FLOOR = "floor"
    STORE = "store"


class MemoryType(models.TextChoices):
    FACT = "fact"
    SUMMARY = "summary"
    OPEN_LOOP = "open_loop"
    DOCUMENT = "document"


class SummaryTier(models.TextChoices):
    MICRO = "micro"
    MACRO = "macro"


class Status(models.TextChoices):
    ACTIVE = "active"
    DEPRECATED = "deprecated"


class LifecycleStatus(models.TextChoices):
    PENDING = "pending"  # awaiting review (extension of spec 003)
    ACTIVE = "active"
    COMPACTED = "compacted"
    DEPRECATED = "deprecated"


class ActorFields(models.Model):
    """Who made a change: an API key, a staff user, a session or a job."""

    actor_type = models.CharField(max_length=16, default="system")
    actor_api_key_id = models.CharField(max_length=40, null=True, blank=True)
    actor_user_id = models.IntegerField(null=True, blank=True)
    actor_session_id = models.CharField(max_length=256, null=True, blank=True)
    actor_job_id = models.CharField(max_length=40, null=True, blank=True)

    class Meta:
        abstract = True


class MemoryStore(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_memory_store_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memory_stores")
    name = models.CharField(max_length=255)
    description = models.CharField(max_length=1024, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    archived_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "created_at", "id"], name="store_ws_created")]

    def __str__(self) -> str:
        return self.name


class MemoryItem(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_memory_id, editable=False)
    # Foreign keys without an index of their own where a composite index
    # (or the unique constraint) already leads with the column: every index is
    # paid again on each of the pipeline's inserts.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memory_items", db_index=False)
    scope = models.CharField(max_length=16, choices=Scope.choices)
    # For branch scope: JSON.stringify([conversation_id, branch_name]); for store
    # scope: the store id; for chat: the conversation id; for floor: a message id.
    scope_id = models.CharField(max_length=MAX_SCOPE_ID_CHARS, blank=True, default="")
    type = models.CharField(max_length=16, choices=MemoryType.choices)
    summary_tier = models.CharField(max_length=8, choices=SummaryTier.choices, null=True, blank=True)
    content = models.TextField(blank=True, default="")
    content_sha256 = models.CharField(max_length=64)
    content_size_bytes = models.PositiveIntegerField(default=0)
    fact_key = models.CharField(max_length=255, null=True, blank=True)
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=1.0)
    source_floor_id = models.CharField(max_length=64, null=True, blank=True)
    # The day an open loop is due, when its task names one ("by Friday").
    due_date = models.DateField(null=True, blank=True)
    # The caller's own labels (a source system, categories, a ticket id): a
    # JSON object the service keeps, returns and filters on, never reads.
    metadata = models.JSONField(default=dict, blank=True)
    source_message_id = models.CharField(max_length=64, null=True, blank=True)
    source_job = models.ForeignKey("MemoryJob", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                                   db_index=False)
    # Exact provenance of a derived memory: every message id it was made from
    # (and, for a macro summary, the memory ids it compacts). Lineage erasure
    # follows these, so nothing is credited to "the last message of a batch".
    sources = models.JSONField(default=list, blank=True)
    source_memory_ids = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    lifecycle_status = models.CharField(max_length=16, choices=LifecycleStatus.choices, default=LifecycleStatus.ACTIVE)
    token_count_estimate = models.PositiveIntegerField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    coverage_start_floor_no = models.PositiveIntegerField(null=True, blank=True)
    coverage_end_floor_no = models.PositiveIntegerField(null=True, blank=True)
    derived_from_count = models.PositiveIntegerField(null=True, blank=True)
    # Store documents (scope "store", type "document").
    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, null=True, blank=True, related_name="memories",
                              db_index=False)
    path = models.CharField(max_length=1024, null=True, blank=True)
    # Optimistic concurrency: bumped on every modification.
    version = models.PositiveIntegerField(default=1)
    current_version_id = models.CharField(max_length=40, null=True, blank=True)
    # LangGraph store items: expiry for TTL sweeps.
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["store", "path"], condition=Q(store__isnull=False), name="uniq_memory_store_path"
            ),
            models.CheckConstraint(condition=Q(importance__gte=0) & Q(importance__lte=1), name="memory_importance_0_1"),
            models.CheckConstraint(condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="memory_confidence_0_1"),
        ]
        indexes = [
            # Importance, then creation: context assembly reads a scope's most
            # important memories, newest first among equals (pinned ones: a
            # range of importance), straight off the index, however many the
            # scope holds.
            models.Index(fields=["workspace", "scope", "scope_id", "lifecycle_status", "importance", "created_at"],
                         name="mem_ws_scope_importance"),
            # Global memories are read whatever their scope id (pinned, no
            # query): most important first straight off this range.
            models.Index(fields=["workspace", "scope", "lifecycle_status", "importance", "created_at"],
                         name="mem_ws_scope_any_importance"),
            models.Index(fields=["workspace", "type", "status"], name="mem_ws_type_status"),
            # Lists sort by (created_at, id), newest first by default, with a
            # scope's memories the most common filter: both orders are read
            # straight off an index, a page at a time.
            models.Index(fields=["workspace", "created_at", "id"], name="mem_ws_created_id"),
            models.Index(fields=["workspace", "scope", "scope_id", "created_at", "id"], name="mem_ws_scope_created"),
            models.Index(fields=["workspace", "updated_at"], name="mem_ws_updated"),
            models.Index(fields=["workspace", "importance"], name="mem_ws_importance"),
            models.Index(fields=["workspace", "fact_key"], name="mem_ws_fact_key"),
            models.Index(fields=["workspace", "lifecycle_status", "created_at"], name="mem_ws_lifecycle"),
            # Only the memories that expire (most never do): the expiry sweep's range.
            models.Index(fields=["expires_at"], name="mem_expires_at", condition=Q(expires_at__isnull=False)),
            # A job's deletion clears its items' source_job (and PostgreSQL's
            # LIKE twin of a foreign-key index is never used here).
            models.Index(fields=["source_job"], name="mem_source_job"),
        ]

    def __str__(self) -> str:
        return self.path or self.id


class VersionOperation(models.TextChoices):
    CREATED = "created"
    MODIFIED = "modified"
    DELETED = "deleted"


class MemoryVersion(ActorFields):
    """An immutable snapshot, one per create / modify / delete.

    `memory_id` is a plain column, not a foreign key: versions outlive the memory
    they describe (until redacted or past retention). Content and path live only
    in their own columns, never inside `attributes`, so redaction can clear them
    for good.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_memory_version_id, editable=False)
    # Indexed by the composite indexes of Meta (see MemoryItem).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    memory_id = models.CharField(max_length=40)
    store = models.ForeignKey(MemoryStore, on_delete=models.CASCADE, null=True, blank=True, related_name="versions",
                              db_index=False)
    operation = models.CharField(max_length=16, choices=VersionOperation.choices)
    version = models.PositiveIntegerField()
    content = models.TextField(null=True, blank=True)
    content_sha256 = models.CharField(max_length=64, null=True, blank=True)
    content_size_bytes = models.PositiveIntegerField(null=True, blank=True)
    path = models.CharField(max_length=1024, null=True, blank=True)
    # The item's other fields at that moment (scope, type, fact_key, importance,
    # status ...): never content or path.
    attributes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    redacted_at = models.DateTimeField(null=True, blank=True)
    redacted_by_type = models.CharField(max_length=16, null=True, blank=True)
    redacted_by_api_key_id = models.CharField(max_length=40, null=True, blank=True)
    redacted_by_user_id = models.IntegerField(null=True, blank=True)
    redacted_by_session_id = models.CharField(max_length=256, null=True, blank=True)
    redacted_by_job_id = models.CharField(max_length=40, null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        # Redaction destroys content for good, so it is granted apart from the
        # ordinary change permission: a reviewer may deprecate but not redact.
        permissions = [("redact_memoryversion", "Can redact memory versions")]
        indexes = [
            models.Index(fields=["workspace", "memory_id", "created_at"], name="memver_ws_memory"),
            models.Index(fields=["store", "created_at", "id"], name="memver_store_created"),
            models.Index(fields=["operation", "created_at"], name="memver_op_created"),
            models.Index(fields=["memory_id"], name="memver_memory"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.operation} v{self.version} of {self.memory_id})"


class Relation(models.TextChoices):
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    UPDATES = "updates"
    DERIVED_FROM = "derived_from"
    COMPACTS = "compacts"
    RESOLVES = "resolves"


class MemoryEdge(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_edge_id, editable=False)
    # Indexed by edge_ws_created, uniq_memory_edge and edge_to_item (see MemoryItem).
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    from_item = models.ForeignKey(MemoryItem, on_delete=models.CASCADE, related_name="outgoing_edges", db_index=False)
    to_item = models.ForeignKey(MemoryItem, on_delete=models.CASCADE, related_name="incoming_edges", db_index=False)
    relation = models.CharField(max_length=16, choices=Relation.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["from_item", "to_item", "relation"], name="uniq_memory_edge"),
        ]
        indexes = [
            models.Index(fields=["workspace", "created_at"], name="edge_ws_created"),
            models.Index(fields=["to_item"], name="edge_to_item"),
        ]

    def __str__(self) -> str:
        return f"{self.from_item_id} {self.relation} {self.to_item_id}"


class JobKind(models.TextChoices):
    EXTRACT = "extract"
    COMPACT = "compact"
    REBUILD = "rebuild"
    MAINTENANCE = "maintenance"


class JobStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class MemoryJob(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=new_job_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memory_jobs", null=True, blank=True)
    kind = models.CharField(max_length=16, choices=JobKind.choices)
    scope = models.CharField(max_length=16, choices=Scope.choices, null=True, blank=True)
    scope_id = models.CharField(max_length=MAX_SCOPE_ID_CHARS, blank=True, default="")
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    cancel_requested = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=5)
    # Ids and floor numbers only: a job's payload never carries memory content,
    # so redaction has nothing to chase here.
    payload = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    provider = models.CharField(max_length=64, blank=True, default="")
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Never two queued extractions for one scope: appends coalesce into one.
            models.UniqueConstraint(
                fields=["workspace", "kind", "scope", "scope_id"],
                condition=Q(status="pending"),
                name="uniq_pending_job_per_scope",
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "status", "created_at"], name="job_ws_status"),
            models.Index(fields=["workspace", "scope", "scope_id"], name="job_ws_scope"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} job {self.id} ({self.status})"


class ScopeStateQuerySet(models.QuerySet):
    def with_pending(self) -> ScopeStateQuerySet:
        """Annotate `pending_floors`, `pending_tokens` and `dirty` (0 / False
        for scopes that are not a branch's)."""

        pending = branch_pending_annotations("branch__")
        return self.annotate(**pending).annotate(
            dirty=models.ExpressionWrapper(models.Q(pending_floors__gt=0), output_field=models.BooleanField())
        )


class ScopeState(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="scope_states")
    scope = models.CharField(max_length=16, choices=Scope.choices)
    scope_id = models.CharField(max_length=MAX_SCOPE_ID_CHARS)
    conversation = models.ForeignKey(
        "conversations.Conversation", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # A branch scope's branch. Its pending work (`pending_floors`,
    # `pending_tokens`, `dirty`) is derived from the branch's counters, which
    # appends move in their own transaction: `ScopeState.objects.with_pending()`.
    branch = models.ForeignKey(
        "conversations.Branch", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # The extraction checkpoint: moves only in the transaction that writes the
    # memories read from these floors.
    last_processed_floor_no = models.PositiveIntegerField(default=0)
    item_count = models.PositiveIntegerField(default=0)
    token_total = models.PositiveIntegerField(default=0)
    micro_count = models.PositiveIntegerField(default=0)
    last_extracted_at = models.DateTimeField(null=True, blank=True)
    last_compacted_at = models.DateTimeField(null=True, blank=True)
    # The branch's rolling summary and the last message it covers. The main
    # branch also writes them to the conversation's metadata (`summary`,
    # `summarized_until`); a fork keeps its own here.
    rolling_summary = models.TextField(blank=True, default="")
    summarized_until = models.CharField(max_length=40, blank=True, default="")
    # The message ids the rolling summary draws on (see MemoryItem.sources).
    rolling_sources = models.JSONField(default=list, blank=True)
    # Moved by every erasure that reaches the scope, in the erasure's
    # transaction: an extraction that read floors (and the rolling summary)
    # under an earlier value drops what it made of them instead of writing it
    # (`memories.services.scopes.scope_states_mark_erased`).
    erasure_generation = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ScopeStateQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "scope", "scope_id"], name="uniq_scope_state"),
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.scope_id}"


class ReviewItem(MemoryItem):
    """The review queue: pending memories of workspaces that require review.

    A proxy, so the queue has its own admin page and its own permissions
    (a reviewer can be given the queue without the whole memory table)."""

    class Meta:
        proxy = True
        verbose_name = "review queue item"
        verbose_name_plural = "review queue"


# Django registers an app's models from its `models` module: the recall index
# and the attachments of memory stores to conversations live with their features.
from memories.recall.models import RecallEntry, RecallKind, RecallScopeStats, RecallTermStats  # noqa: E402, F401
from memories.resources.models import AccessMode, ConversationResource  # noqa: E402, F401
