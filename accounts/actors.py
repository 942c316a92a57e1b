"""Who did something: recorded on every memory version.

An actor is one of an API key, a staff user, a conversation/session (an agent's
tool call made on behalf of a conversation) or a background job. The wire shapes
follow the memory-store API: `api_actor`, `user_actor`, `session_actor`, plus
`job_actor` for the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Session ids hold 256 characters; "mcp:" takes four.
MAX_CLIENT_NAME_CHARS = 200


@dataclass(frozen=True)
class Actor:
    kind: str  # "api_key" | "user" | "session" | "job" | "system"
    api_key_id: str | None = None
    user_id: int | None = None
    session_id: str | None = None
    job_id: str | None = None

    @classmethod
    def for_api_key(cls, api_key_id: str, *, session_id: str | None = None) -> Actor:
        if session_id:
            return cls(kind="session", api_key_id=api_key_id, session_id=session_id)
        return cls(kind="api_key", api_key_id=api_key_id)

    @classmethod
    def for_mcp_client(cls, api_key_id: str, client_name: str | None) -> Actor:
        """An agent's call through MCP: the key, and the client it declared
        (`clientInfo.name`), as the session `mcp:<client>` (`mcp` when the
        client gave no name). Versions can then be listed per client."""
        name = " ".join((client_name or "").split())[:MAX_CLIENT_NAME_CHARS]
        return cls(kind="session", api_key_id=api_key_id, session_id=f"mcp:{name}" if name else "mcp")

    @classmethod
    def for_user(cls, user_id: int) -> Actor:
        return cls(kind="user", user_id=user_id)

    @classmethod
    def for_job(cls, job_id: str) -> Actor:
        return cls(kind="job", job_id=job_id)

    @classmethod
    def system(cls) -> Actor:
        return cls(kind="system")

    def as_fields(self, prefix: str = "actor") -> dict[str, Any]:
        """Column values for a model that stores an actor under `prefix`."""
        return {
            f"{prefix}_type": self.kind,
            f"{prefix}_api_key_id": self.api_key_id,
            f"{prefix}_user_id": self.user_id,
            f"{prefix}_session_id": self.session_id,
            f"{prefix}_job_id": self.job_id,
        }

    @classmethod
    def from_fields(cls, obj: Any, prefix: str = "actor") -> Actor | None:
        kind = getattr(obj, f"{prefix}_type", None)
        if not kind:
            return None
        return cls(
            kind=kind,
            api_key_id=getattr(obj, f"{prefix}_api_key_id", None),
            user_id=getattr(obj, f"{prefix}_user_id", None),
            session_id=getattr(obj, f"{prefix}_session_id", None),
            job_id=getattr(obj, f"{prefix}_job_id", None),
        )

    def to_wire(self) -> dict[str, Any]:
        """The memory-store API's discriminated actor object."""
        if self.kind == "session":
            return {"type": "session_actor", "session_id": self.session_id}
        if self.kind == "api_key":
            return {"type": "api_actor", "api_key_id": self.api_key_id}
        if self.kind == "user":
            return {"type": "user_actor", "user_id": f"user_{self.user_id}"}
        if self.kind == "job":
            return {"type": "job_actor", "job_id": self.job_id}
        return {"type": "system_actor"}
