"""`MemoryClient` (sync) and `AsyncMemoryClient` (async) over httpx.

Both expose the same methods (every REST operation of the service, see
`memory_client._operations`), cursor iteration helpers and the framework
adapter factories. Nothing here imports Django.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

import memory_client._operations as ops
import memory_client.formats as formats
from memory_client._transport import Call, RetryPolicy, run_async, run_sync
from memory_client.types import Message

# The offset-paged lists (spec 003) and the parameters their factories take.
OFFSET_LISTS = {
    "iter_memories": ops.list_memories,
    "iter_memory_versions": ops.list_memory_versions,
    "iter_edges": ops.list_edges,
    "iter_jobs": ops.list_jobs,
    "iter_scopes": ops.list_scopes,
}

DEFAULT_TIMEOUT = 30.0
USER_AGENT = "memory-client/0.1"


class _NoCookies(httpx.Cookies):
    """The API authenticates every call by its key and sets no cookies: a
    cookie something on the way sets (a proxy's) is neither kept nor sent
    back with later calls."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:
        return None


_NO_COOKIES = _NoCookies()


class _WithoutCookies:
    """Mixin, before an httpx client class: `_NoCookies` for its cookies."""

    @property
    def cookies(self) -> httpx.Cookies:
        return _NO_COOKIES


class _ServiceClient(_WithoutCookies, httpx.Client):
    pass


class _AsyncServiceClient(_WithoutCookies, httpx.AsyncClient):
    pass


@functools.cache
def _ssl_context() -> Any:
    """One TLS context (httpx's default: certifi's certificates) for every
    client of the process. Building one loads the whole certificate bundle,
    tens of milliseconds that every new client paid before its first call;
    a context is safe to share between connections and threads."""
    return httpx.create_ssl_context()


@dataclass
class ClientConfig:
    """What it takes to open a connection: shared by a client and its adapters."""

    base_url: str
    # Kept out of reprs: configs end up in logs, tracebacks and debugger views.
    api_key: str = field(repr=False)
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = 2
    # Extra headers may carry credentials too.
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    # Test seams: an httpx transport for the sync / async client.
    transport: httpx.BaseTransport | None = None
    async_transport: httpx.AsyncBaseTransport | None = None

    def api_root(self) -> str:
        root = self.base_url.rstrip("/")
        return root if root.endswith("/v1") else root + "/v1"

    def _kwargs(self) -> dict[str, Any]:
        return {
            "verify": _ssl_context(),
            "base_url": self.api_root() + "/",
            "timeout": httpx.Timeout(self.timeout),
            "headers": {"Authorization": f"Bearer {self.api_key}", "User-Agent": USER_AGENT, **self.headers},
        }

    def sync_http(self) -> httpx.Client:
        return _ServiceClient(transport=self.transport, **self._kwargs())

    def async_http(self) -> httpx.AsyncClient:
        return _AsyncServiceClient(transport=self.async_transport, **self._kwargs())


def _config(base_url: str | None, api_key: str | None, **kwargs: Any) -> ClientConfig:
    base_url = base_url or os.environ.get("MEMORY_BASE_URL")
    api_key = api_key or os.environ.get("MEMORY_API_KEY")
    if not base_url or not api_key:
        raise ValueError("base_url and api_key are required (or set MEMORY_BASE_URL and MEMORY_API_KEY)")
    return ClientConfig(base_url=base_url, api_key=api_key, **kwargs)


def _as_method(method: Callable[..., Any], factory: Callable[..., Call]) -> Callable[..., Any]:
    """`method` under the factory's name, parameters and docstring, but
    answering what the call returns: `help(client.list_memories)` shows the
    parameters to pass, not the factory's `-> Call` (the request it builds)."""
    functools.update_wrapper(method, factory)
    del method.__wrapped__  # `inspect.signature` would follow it back to the factory
    signature = inspect.signature(factory)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[self_param, *signature.parameters.values()],
                                             return_annotation=Any)
    method.__annotations__ = {**{k: v for k, v in factory.__annotations__.items() if k != "return"}, "return": Any}
    return method


def _sync_method(factory: Callable[..., Call]) -> Callable[..., Any]:
    def method(self: MemoryClient, **kwargs: Any) -> Any:
        return self._run(factory(**kwargs))

    return _as_method(method, factory)


def _async_method(factory: Callable[..., Call]) -> Callable[..., Any]:
    async def method(self: AsyncMemoryClient, **kwargs: Any) -> Any:
        return await self._run(factory(**kwargs))

    return _as_method(method, factory)


def _adapter(module: str, name: str, *, extra: str) -> Any:
    """`memory_client.adapters.<module>.<name>`, or an ImportError that says
    which extra installs the framework it needs (the adapters import their
    framework's own package; the client alone needs none of them)."""
    try:
        return getattr(importlib.import_module(f"memory_client.adapters.{module}"), name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("memory_client"):
            raise
        raise ImportError(
            f"{name} needs the '{extra}' extra: pip install \"memory-client[{extra}]\" "
            f"(or pip install \"./memory_client[{extra}]\" from a checkout); missing module: {exc.name}"
        ) from exc


class _Shared:
    config: ClientConfig

    # Pure conversions (spec 000): no request is made.
    to_anthropic_messages = staticmethod(formats.to_anthropic_messages)
    to_openai_input = staticmethod(formats.to_openai_input)
    to_anthropic = staticmethod(formats.to_anthropic)

    # --- Framework adapters ------------------------------------------------------

    def claude_session_store(self):
        """A `claude_agent_sdk` `SessionStore` (all optional methods included)."""
        MemorySessionStore = _adapter("claude", "MemorySessionStore", extra="claude")

        return MemorySessionStore(self.config)

    def openai_session(self, session_id: str, max_items: int | None = None, *, session_settings: Any = None):
        """An `agents` `Session`; `max_items` is the default `get_items` limit."""
        MemoryOpenAISession = _adapter("openai_agents", "MemoryOpenAISession", extra="openai")

        return MemoryOpenAISession(self.config, session_id, max_items=max_items, session_settings=session_settings)

    def langgraph_checkpointer_for(self, *, serde: Any = None):
        MemoryCheckpointSaver = _adapter("langgraph_checkpoint", "MemoryCheckpointSaver", extra="langgraph")

        return MemoryCheckpointSaver(self.config, serde=serde)

    @functools.cached_property
    def langgraph_checkpointer(self):
        """A LangGraph `BaseCheckpointSaver` (sync and async)."""
        return self.langgraph_checkpointer_for()

    def langgraph_store_for(self, store_id: str | None = None, *, ttl: dict[str, Any] | None = None):
        """A LangGraph `BaseStore` over the documents of a memory store (by default
        the workspace's `langgraph` store)."""
        MemoryLangGraphStore = _adapter("langgraph_store", "MemoryLangGraphStore", extra="langgraph")

        return MemoryLangGraphStore(self.config, store_id=store_id, ttl=ttl)

    @functools.cached_property
    def langgraph_store(self):
        return self.langgraph_store_for()

    def crewai_memory(self, crew: str = "crew", *, user_id: str | None = None, **memory_fields: Any):
        """A crewai `Memory` kept by the service (`Crew(memory=...)`): the crew's
        memories are facts of the `user` scope `user_id` (`crew:<crew>` unless
        named), searched by meaning. `memory_fields` are `Memory`'s (`llm` ...)."""
        crewai_memory = _adapter("crewai_memory", "crewai_memory", extra="crewai")

        return crewai_memory(self.config, crew=crew, user_id=user_id, **memory_fields)

    def crewai_storage(self, user_id: str):
        """crewai's `StorageBackend` over the `user` scope `user_id`; pair it with
        its embedder: `Memory(storage=s, embedder=s.embedder)`."""
        MemoryCrewAIStorage = _adapter("crewai_memory", "MemoryCrewAIStorage", extra="crewai")

        return MemoryCrewAIStorage(self.config, user_id=user_id)


class MemoryClient(_Shared):
    """Synchronous client. `MemoryClient(base_url, api_key)`, or the
    `MEMORY_BASE_URL` / `MEMORY_API_KEY` environment variables."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, **kwargs: Any):
        self.config = _config(base_url, api_key, **kwargs)
        self._policy = RetryPolicy(max_retries=self.config.max_retries)
        self._http = self.config.sync_http()

    def _run(self, call: Call) -> Any:
        return run_sync(self._http, call, self._policy)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def iter_messages(self, *, conversation_id: str, page_size: int = 100, **params: Any) -> Iterator[Message]:
        """Every message of a conversation, following the cursor."""
        after = params.pop("after", None)
        while True:
            page = self._run(ops.get_messages_page(conversation_id=conversation_id, limit=page_size, after=after, **params))
            yield from page.data
            if not page.next_cursor or not page.data:
                return
            after = page.next_cursor

    def iter_conversations(self, *, page_size: int = 100, **params: Any) -> Iterator[Any]:
        after = params.pop("after", None)
        while True:
            result = self._run(ops.list_conversations(limit=page_size, after=after, **params))
            yield from result.items
            if not result.next_cursor or not result.items:
                return
            after = result.next_cursor

    def iter_store_memories(self, *, store_id: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every memory (and prefix roll-up) of a store, following `next_page`."""
        page_token = params.pop("page", None)
        while True:
            page = self._run(ops.list_store_memories(store_id=store_id, page=page_token, **params))
            yield from page.data
            if not page.next_cursor:
                return
            page_token = page.next_cursor

    def _iter_offset(self, factory: Callable[..., Call], page_size: int, **params: Any) -> Iterator[dict[str, Any]]:
        offset = params.pop("offset", None)
        while True:
            page = self._run(factory(limit=page_size, offset=offset, **params))
            yield from page.data
            if page.next_offset is None:
                return
            offset = page.next_offset

    def anthropic_memory_tool(self, store_id: str, **kwargs: Any):
        """An `anthropic` `BetaAbstractMemoryTool` (`memory_20250818`) backed by a memory store."""
        MemoryStoreMemoryTool = _adapter("anthropic_memory", "MemoryStoreMemoryTool", extra="anthropic")

        return MemoryStoreMemoryTool(self, store_id, **kwargs)


class AsyncMemoryClient(_Shared):
    """Asynchronous twin of `MemoryClient`: the same methods, awaited."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, **kwargs: Any):
        self.config = _config(base_url, api_key, **kwargs)
        self._policy = RetryPolicy(max_retries=self.config.max_retries)
        self._http = self.config.async_http()

    async def _run(self, call: Call) -> Any:
        return await run_async(self._http, call, self._policy)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def iter_messages(self, *, conversation_id: str, page_size: int = 100, **params: Any) -> AsyncIterator[Message]:
        after = params.pop("after", None)
        while True:
            page = await self._run(
                ops.get_messages_page(conversation_id=conversation_id, limit=page_size, after=after, **params)
            )
            for message in page.data:
                yield message
            if not page.next_cursor or not page.data:
                return
            after = page.next_cursor

    async def iter_conversations(self, *, page_size: int = 100, **params: Any) -> AsyncIterator[Any]:
        after = params.pop("after", None)
        while True:
            result = await self._run(ops.list_conversations(limit=page_size, after=after, **params))
            for item in result.items:
                yield item
            if not result.next_cursor or not result.items:
                return
            after = result.next_cursor

    async def iter_store_memories(self, *, store_id: str, **params: Any) -> AsyncIterator[dict[str, Any]]:
        page_token = params.pop("page", None)
        while True:
            page = await self._run(ops.list_store_memories(store_id=store_id, page=page_token, **params))
            for item in page.data:
                yield item
            if not page.next_cursor:
                return
            page_token = page.next_cursor

    async def _iter_offset(
        self, factory: Callable[..., Call], page_size: int, **params: Any
    ) -> AsyncIterator[dict[str, Any]]:
        offset = params.pop("offset", None)
        while True:
            page = await self._run(factory(limit=page_size, offset=offset, **params))
            for item in page.data:
                yield item
            if page.next_offset is None:
                return
            offset = page.next_offset

    def anthropic_memory_tool(self, store_id: str, **kwargs: Any):
        """An `anthropic` `BetaAsyncAbstractMemoryTool` backed by a memory store."""
        AsyncMemoryStoreMemoryTool = _adapter("anthropic_memory", "AsyncMemoryStoreMemoryTool", extra="anthropic")

        return AsyncMemoryStoreMemoryTool(self, store_id, **kwargs)


def _offset_iterator(name: str, factory: Callable[..., Call]) -> Callable[..., Any]:
    """`iter_<list>(page_size=100, **filters)`: every row of an offset-paged list,
    following `meta.total/limit/offset`."""

    def method(self, *, page_size: int = 100, **params: Any):
        return self._iter_offset(factory, page_size, **params)

    method.__name__ = name
    method.__doc__ = f"Every row of `{factory.__name__}`, page by page (offset pagination)."
    return method


for _name, _factory in OFFSET_LISTS.items():
    setattr(MemoryClient, _name, _offset_iterator(_name, _factory))
    setattr(AsyncMemoryClient, _name, _offset_iterator(_name, _factory))

for _name in ops.PUBLIC:
    _factory = getattr(ops, _name)
    setattr(MemoryClient, _name, _sync_method(_factory))
    setattr(AsyncMemoryClient, _name, _async_method(_factory))

