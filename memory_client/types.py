"""Typed results of the conversation API (spec 000's shapes, snake_case).

Times are epoch milliseconds, as the service sends them. Other resources
(memory items, stores, versions, jobs ...) come back as plain dicts in the
service's own wire shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Message:
    message_id: str
    role: str
    content: Any
    created_at: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    updated_at: int | None = None
    conversation_id: str | None = None
    branch: str | None = None
    floor_no: int | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Message:
        return cls(
            message_id=data.get("message_id") or data.get("id"),
            role=data["role"],
            content=data.get("content"),
            created_at=data.get("created_at"),
            metadata=data.get("metadata") or {},
            updated_at=data.get("updated_at"),
            conversation_id=data.get("conversation_id"),
            branch=data.get("branch"),
            floor_no=data.get("floor_no"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content, "metadata": self.metadata}


@dataclass
class ConversationMeta:
    conversation_id: str
    created_at: int | None = None
    last_message_at: int | None = None
    message_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    user_id: str | None = None
    source: str | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ConversationMeta:
        return cls(
            conversation_id=data["conversation_id"],
            created_at=data.get("created_at"),
            last_message_at=data.get("last_message_at"),
            message_count=data.get("message_count") or 0,
            metadata=data.get("metadata") or {},
            user_id=data.get("user_id"),
            source=data.get("source"),
        )


@dataclass
class ListConversationsResult:
    items: list[ConversationMeta]
    next_cursor: str | None = None
    previous_cursor: str | None = None


@dataclass
class Page:
    """One page of a list endpoint: the items and how to get the next page."""

    data: list[Any]
    next_cursor: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int | None:
        """Offset pages (`meta.total/limit/offset`): how many match in all (a
        lower bound when `meta.total_exact` is false)."""
        return self.meta.get("total")

    @property
    def next_offset(self) -> int | None:
        """The `offset` of the next offset page, or None after the last one."""
        if "total" not in self.meta or not self.data:
            return None
        following = int(self.meta.get("offset") or 0) + len(self.data)
        if "has_more" in self.meta:  # exact even where `total` is a bound (lists filtered by `q`)
            return following if self.meta["has_more"] else None
        return following if following < int(self.meta["total"]) else None
