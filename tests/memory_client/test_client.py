"""The client against the live server: spec 000's methods, errors, retries,
cursor iteration, and the pure format conversions agreeing with the server's."""

from __future__ import annotations

import httpx
import pytest

from memory_client import (
    AsyncMemoryClient,
    MemoryAuthenticationError,
    MemoryClient,
    MemoryConflictError,
    MemoryNotFoundError,
    MemoryValidationError,
)
from memory_client._transport import Call, RetryPolicy, run_sync


def test_conversation_lifecycle(client):
    message_id = client.append_message(conversation_id="c1", role="user", content="hi", user_id="u1", metadata={"s": 1})
    assert message_id.startswith("msg_")
    client.append_message(conversation_id="c1", role="assistant", content=[{"type": "text", "text": "hello"}])
    messages = client.get_messages(conversation_id="c1")
    assert [(m.role, m.content) for m in messages] == [("user", "hi"), ("assistant", [{"type": "text", "text": "hello"}])]
    assert messages[0].metadata == {"s": 1} and messages[0].created_at > 1e12
    updated = client.update_message(conversation_id="c1", message_id=message_id, content="hi!")
    assert updated.content == "hi!" and updated.updated_at is not None
    meta = client.update_conversation(conversation_id="c1", metadata={"title": "T", "tag": None})
    assert meta.metadata == {"title": "T"} and meta.message_count == 2
    assert [c.conversation_id for c in client.list_conversations(user_id="u1").items] == ["c1"]
    client.delete_message(conversation_id="c1", message_id=message_id)
    assert client.get_conversation(conversation_id="c1").message_count == 1
    client.clear_messages(conversation_id="c1")
    assert client.get_messages(conversation_id="c1") == []
    client.delete_conversation(conversation_id="c1")
    with pytest.raises(MemoryNotFoundError):
        client.get_conversation(conversation_id="c1")
    assert client.get_messages(conversation_id="never") == []


def test_errors_are_typed(client, live_server):
    with pytest.raises(MemoryValidationError):
        client.append_message(conversation_id="c", role="robot", content="x")
    with pytest.raises(MemoryValidationError):
        client.get_messages(conversation_id="c", limit=101)
    with pytest.raises(MemoryConflictError):
        client.append_message(conversation_id="c", role="user", content="a", idempotency_key="k1")
        client.append_message(conversation_id="c", role="user", content="b", idempotency_key="k1")
    with pytest.raises(MemoryAuthenticationError):
        MemoryClient(live_server.url, "wrong-key").list_conversations()


def test_idempotent_append_retry_writes_once(client):
    first = client.append_message(conversation_id="c-idem", role="user", content="once", idempotency_key="same")
    again = client.append_message(conversation_id="c-idem", role="user", content="once", idempotency_key="same")
    assert first == again
    assert client.get_conversation(conversation_id="c-idem").message_count == 1


def test_batch_append_is_one_request_all_or_none(client):
    ids = client.append_messages(
        conversation_id="c-batch",
        messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "metadata": {"k": 1}}],
        user_id="u-batch",
    )
    assert len(ids) == 2 and all(i.startswith("msg_") for i in ids)
    assert [(m.message_id, m.content) for m in client.get_messages(conversation_id="c-batch")] == list(zip(ids, ["a", "b"]))
    with pytest.raises(MemoryValidationError):
        client.append_messages(conversation_id="c-batch", messages=[{"role": "user", "content": "c"}, {"role": "x"}])
    assert client.get_conversation(conversation_id="c-batch").message_count == 2
    # A retry with the same key is a replay.
    again = client.append_messages(conversation_id="c-batch", messages=[{"role": "user", "content": "d"}],
                                   idempotency_key="batch-1")
    assert client.append_messages(conversation_id="c-batch", messages=[{"role": "user", "content": "d"}],
                                  idempotency_key="batch-1") == again
    assert client.get_conversation(conversation_id="c-batch").message_count == 3


async def test_async_batch_append(aclient):
    ids = await aclient.append_messages(conversation_id="ac-batch", messages=[{"role": "user", "content": f"m{i}"} for i in range(100)])
    assert len(ids) == 100
    assert (await aclient.get_conversation(conversation_id="ac-batch")).message_count == 100


def test_cursor_iteration(client):
    for i in range(7):
        client.append_message(conversation_id="c-iter", role="user", content=f"m{i}")
    assert [m.content for m in client.iter_messages(conversation_id="c-iter", page_size=3)] == [f"m{i}" for i in range(7)]
    for i in range(3):
        client.append_message(conversation_id=f"c-list-{i}", role="user", content="x")
    assert len(list(client.iter_conversations(page_size=2))) == 4


async def test_async_client(aclient):
    await aclient.append_message(conversation_id="ac", role="user", content="hey")
    assert [m.content for m in await aclient.get_messages(conversation_id="ac")] == ["hey"]
    assert [m.content async for m in aclient.iter_messages(conversation_id="ac")] == ["hey"]
    store = await aclient.create_store(name="s")
    written = await aclient.write_store_memory(store_id=store["id"], path="/a.md", content="A")
    assert written["path"] == "/a.md"


def test_retries_only_safe_calls():
    attempts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request.method)
        return httpx.Response(503, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})

    http = httpx.Client(transport=httpx.MockTransport(handler), base_url="http://t/v1/")
    policy = RetryPolicy(max_retries=2, backoff=0)
    with pytest.raises(Exception):
        run_sync(http, Call("GET", "x"), policy)
    assert attempts == ["GET"] * 3
    attempts.clear()
    with pytest.raises(Exception):
        run_sync(http, Call("POST", "x"), policy)
    assert attempts == ["POST"]
    attempts.clear()
    with pytest.raises(Exception):
        run_sync(http, Call("POST", "x", headers={"Idempotency-Key": "k"}), policy)
    assert attempts == ["POST"] * 3


SAMPLES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hi"},
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}, "caption"]},
    {"role": "assistant", "content": "", "metadata": {"tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}},
    {"role": "tool", "content": "42", "metadata": {"tool_call_id": "call_1"}},
    {"role": "tool", "content": {"x": 1}, "metadata": {"tool_use_id": "call_2", "is_error": True}},
    {"role": "assistant", "content": [{"type": "output_text", "text": "ok"}, {"type": "thinking", "thinking": "t"}],
     "metadata": {"name": "bot"}},
    {"role": "user", "content": {"type": "text", "text": "obj"}},
]


def test_formats_agree_with_the_servers_format_parameter(client):
    for message in SAMPLES:
        client.append_message(conversation_id="fmt", role=message["role"], content=message["content"] or " ",
                              metadata=message.get("metadata"))
    stored = client.get_messages(conversation_id="fmt")
    assert client.to_anthropic(stored) == client.get_formatted_messages(conversation_id="fmt", format="anthropic")
    assert client.to_openai_input(stored) == client.get_formatted_messages(conversation_id="fmt", format="openai")


@pytest.mark.slow
def test_client_needs_no_django():
    import subprocess
    import sys

    code = "import sys, memory_client; memory_client.MemoryClient('http://x', 'k'); assert 'django' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_async_client_is_constructible_from_env(monkeypatch):
    monkeypatch.setenv("MEMORY_BASE_URL", "http://x")
    monkeypatch.setenv("MEMORY_API_KEY", "k")
    assert AsyncMemoryClient().config.api_root() == "http://x/v1"


def test_reprs_never_show_the_api_key():
    secret = "mk_0123456789ab_very-secret-part"
    client = MemoryClient(base_url="http://memory.test", api_key=secret, headers={"X-Extra": "token-xyz"})
    for shown in (repr(client.config), str(client.config), repr(client)):
        assert secret not in shown and "very-secret" not in shown and "token-xyz" not in shown
    assert "http://memory.test" in repr(client.config)
    assert client.config.api_key == secret


def test_a_calls_url_keeps_its_path_and_query():
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"data": {}})

    http = httpx.Client(base_url="http://svc.test/v1/", transport=httpx.MockTransport(handler))
    params = {"ids": ["a b", "c/d"], "flag": True, "limit": 5, "skip": None}
    for call in (Call("GET", "memories", params=params), Call("GET", "/memories/m%2F1"),
                 Call("GET", "memories", params={"x": [True, 1]})):
        run_sync(http, call, RetryPolicy(max_retries=0))
    assert seen == ["http://svc.test/v1/memories?ids=a+b&ids=c%2Fd&flag=true&limit=5",
                    "http://svc.test/v1/memories/m%2F1", "http://svc.test/v1/memories?x=true&x=1"]
    http.close()


def test_cookies_a_server_sets_are_neither_kept_nor_sent():
    """The API authenticates by key: a Set-Cookie (a proxy's, say) is not
    stored and never goes back, on the sync and the async client."""
    from memory_client.client import ClientConfig

    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("cookie"))
        return httpx.Response(200, json={"data": {}}, headers={"Set-Cookie": "session=abc; Path=/"})

    config = ClientConfig(base_url="http://t", api_key="mk_x", transport=httpx.MockTransport(handler),
                          async_transport=httpx.MockTransport(handler))
    with config.sync_http() as http:
        http.get("a")
        http.get("b")
        assert not http.cookies
    import asyncio

    async def go() -> None:
        async with config.async_http() as http:
            await http.get("a")
            await http.get("b")

    asyncio.run(go())
    assert seen == [None, None, None, None]


def test_the_crewai_factories_name_the_extra_where_crewai_is_missing():
    """crewai lives in an environment of its own (it pins openai, pydantic and
    mcp older than the service's): here, without it, the factories say what to
    install instead of failing on an import deep inside."""
    import importlib.util

    if importlib.util.find_spec("crewai") is not None:
        pytest.skip("crewai is installed here")
    with MemoryClient("http://127.0.0.1:9", "unused") as memory:
        with pytest.raises(ImportError, match=r"memory-client\[crewai\].*crewai"):
            memory.crewai_memory("Billing crew")
        with pytest.raises(ImportError, match=r"memory-client\[crewai\]"):
            memory.crewai_storage("crew:billing-crew")
