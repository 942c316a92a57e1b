"""HTTP plumbing shared by the sync and async clients: one description of a
call (`Call`), one retry policy, one error mapping."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from memory_client.errors import MemoryConnectionError, MemoryServiceError, error_for
from memory_client.types import Page

# Methods a retry cannot turn into a second effect.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_BACKOFF_SECONDS = 8.0


def seg(value: str) -> str:
    """One URL path segment: everything percent-encoded, `/` included."""
    if not isinstance(value, str) or not value:
        raise TypeError("path identifiers must be non-empty strings")
    return quote(value, safe="")


def data_of(response: httpx.Response) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    body = response.json()
    return body.get("data") if isinstance(body, dict) and "data" in body else body


def body_of(response: httpx.Response) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    return response.json()


def nothing(response: httpx.Response) -> None:
    return None


UNSET: Any = object()


def strip_unset(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if value is not UNSET}


def page_of(response: httpx.Response) -> Page:
    """`{"data": [...], "meta": {...}}` (conversations, items) or `{"data", "next_page"}` (stores)."""
    body = body_of(response) or {}
    meta = body.get("meta") or {}
    cursor = meta.get("next_cursor") if "next_page" not in body else body.get("next_page")
    return Page(data=list(body.get("data") or []), next_cursor=cursor, meta=meta)


@dataclass
class Call:
    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    parse: Callable[[httpx.Response], Any] = data_of
    # None: decided by the method (and an Idempotency-Key header).
    retry: bool | None = None
    # Statuses that are an answer, not an error (e.g. 404 for "absent").
    accept: frozenset[int] = frozenset()

    def retryable(self) -> bool:
        if self.retry is not None:
            return self.retry
        return self.method in IDEMPOTENT_METHODS or "Idempotency-Key" in self.headers

    def query(self) -> dict[str, Any] | None:
        if not self.params:
            return None
        out: dict[str, Any] = {}
        for key, value in self.params.items():
            if value is None:
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, dict):  # an object filter (`metadata`) travels as JSON
                value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            out[key] = value
        return out


def with_idempotency_key(call: Call, key: str | None = None) -> Call:
    call.headers.setdefault("Idempotency-Key", key or f"mc-{uuid.uuid4().hex}")
    return call


@dataclass
class RetryPolicy:
    max_retries: int = 2
    backoff: float = 0.25

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            retry_after = response.headers.get("Retry-After")
            if retry_after:
                try:
                    return min(float(retry_after), MAX_BACKOFF_SECONDS)
                except ValueError:
                    pass
        return min(self.backoff * (2**attempt), MAX_BACKOFF_SECONDS) * (0.5 + random.random() / 2)


def _is_quota_error(response: httpx.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("type") == "quota_exceeded_error"


def _should_retry(call: Call, attempt: int, policy: RetryPolicy, response: httpx.Response | None) -> bool:
    if attempt >= policy.max_retries:
        return False
    if response is not None and response.headers.get("x-should-retry") == "false":
        return False
    if response is not None and response.status_code == 429:
        # A rate limit refuses before any work is done, so any call may wait and
        # try again; a quota stays exceeded however long one waits.
        return not _is_quota_error(response)
    return call.retryable()


def _finish(call: Call, response: httpx.Response) -> Any:
    if response.status_code >= 400 and response.status_code not in call.accept:
        try:
            body = response.json()
        except ValueError:
            body = response.text
        raise error_for(response.status_code, body)
    return call.parse(response)


def run_sync(client: httpx.Client, call: Call, policy: RetryPolicy) -> Any:
    attempt = 0
    while True:
        try:
            response = client.request(call.method, call.path, params=call.query(), json=call.json, headers=call.headers)
        except httpx.TransportError as exc:
            if not _should_retry(call, attempt, policy, None):
                raise MemoryConnectionError(f"{call.method} {call.path}: {exc.__class__.__name__}: {exc}") from exc
            time.sleep(policy.delay(attempt, None))
            attempt += 1
            continue
        if response.status_code in RETRY_STATUSES and _should_retry(call, attempt, policy, response):
            time.sleep(policy.delay(attempt, response))
            attempt += 1
            continue
        return _finish(call, response)


async def run_async(client: httpx.AsyncClient, call: Call, policy: RetryPolicy) -> Any:
    attempt = 0
    while True:
        try:
            response = await client.request(call.method, call.path, params=call.query(), json=call.json,
                                            headers=call.headers)
        except httpx.TransportError as exc:
            if not _should_retry(call, attempt, policy, None):
                raise MemoryConnectionError(f"{call.method} {call.path}: {exc.__class__.__name__}: {exc}") from exc
            await asyncio.sleep(policy.delay(attempt, None))
            attempt += 1
            continue
        if response.status_code in RETRY_STATUSES and _should_retry(call, attempt, policy, response):
            await asyncio.sleep(policy.delay(attempt, response))
            attempt += 1
            continue
        return _finish(call, response)


__all__ = ["Call", "MemoryServiceError", "RetryPolicy", "body_of", "data_of", "nothing", "run_async",
           "run_sync", "seg"]
