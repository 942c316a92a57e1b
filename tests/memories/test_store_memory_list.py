"""Listing a store's memories: path order, `path_prefix`, `depth` roll-ups,
paging (prefixes count toward `limit`), views."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memories.services.store_memories import store_memory_write

pytestmark = pytest.mark.django_db

PATHS = [
    "/a.md",
    "/notes/2026/05/daily.md",
    "/notes/2026/06/daily.md",
    "/notes/todo.md",
    "/notes-archive/old.md",
    "/notes.md",
    "/projects/foo/notes.md",
    "/projects/foo/spec/v1.md",
    "/projects/bar.md",
    "/z.md",
]


def _seed(workspace, sid, paths, content=None):
    actor = Actor.system()
    for path in paths:
        store_memory_write(workspace=workspace, store_id=sid, path=path, content=content or f"content of {path}", actor=actor)


@pytest.fixture
def sid(api, workspace):
    sid = api.post("/v1/memory_stores", {"name": "Tree"}, format="json").json()["id"]
    _seed(workspace, sid, PATHS)
    return sid


def _list(api, sid, **params):
    response = api.get(f"/v1/memory_stores/{sid}/memories", params)
    assert response.status_code == 200, response.content
    return response.json()


def _entries(page):
    return [(e["type"], e["path"]) for e in page["data"]]


def _all(api, sid, **params):
    out, page = [], _list(api, sid, **params)
    out += _entries(page)
    while page["next_page"]:
        page = _list(api, sid, page=page["next_page"], **params)
        out += _entries(page)
    return out


def test_lists_everything_in_path_order_without_content(api, sid):
    page = _list(api, sid, limit=100)
    assert [e["path"] for e in page["data"]] == sorted(PATHS)
    assert all(e["type"] == "memory" and e["content"] is None and e["content_sha256"] for e in page["data"])
    assert page["next_page"] is None


def test_view_full_includes_content(api, sid):
    page = _list(api, sid, view="full", limit=3)
    assert [e["content"] for e in page["data"]] == [f"content of {p}" for p in sorted(PATHS)[:3]]


def test_view_full_caps_page_at_20(api, workspace):
    sid = api.post("/v1/memory_stores", {"name": "Big"}, format="json").json()["id"]
    _seed(workspace, sid, [f"/f{i:02d}" for i in range(25)], "x")
    assert len(_list(api, sid, view="full", limit=100)["data"]) == 20
    assert len(_list(api, sid, view="basic", limit=100)["data"]) == 25


def test_path_prefix_matches_whole_segments(api, sid):
    assert [p for _, p in _all(api, sid, path_prefix="/notes/")] == [
        "/notes/2026/05/daily.md",
        "/notes/2026/06/daily.md",
        "/notes/todo.md",
    ]
    assert [p for _, p in _all(api, sid, path_prefix="notes/")] == [p for _, p in _all(api, sid, path_prefix="/notes/")]
    assert _all(api, sid, path_prefix="/nothing/") == []


def test_depth_one_rolls_up_directories(api, sid):
    assert _all(api, sid, depth=1, limit=100) == [
        ("memory", "/a.md"),
        ("memory_prefix", "/notes-archive/"),
        ("memory", "/notes.md"),
        ("memory_prefix", "/notes/"),
        ("memory_prefix", "/projects/"),
        ("memory", "/z.md"),
    ]
    assert _all(api, sid, depth=1, path_prefix="/notes/") == [("memory_prefix", "/notes/2026/"), ("memory", "/notes/todo.md")]
    assert _all(api, sid, depth=2, path_prefix="/notes/") == [
        ("memory_prefix", "/notes/2026/05/"),
        ("memory_prefix", "/notes/2026/06/"),
        ("memory", "/notes/todo.md"),
    ]
    assert _all(api, sid, depth=2, path_prefix="/projects/") == [
        ("memory", "/projects/bar.md"),
        ("memory", "/projects/foo/notes.md"),
        ("memory_prefix", "/projects/foo/spec/"),
    ]


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
def test_paging_with_prefixes_counting_toward_limit(api, sid, limit):
    everything = _all(api, sid, depth=1, limit=100)
    pages = []
    page = _list(api, sid, depth=1, limit=limit)
    pages.append(page["data"])
    while page["next_page"]:
        page = _list(api, sid, depth=1, limit=limit, page=page["next_page"])
        pages.append(page["data"])
    assert all(len(p) <= limit for p in pages)
    assert all(len(p) == limit for p in pages[:-1])
    assert [(e["type"], e["path"]) for p in pages for e in p] == everything


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_paging_without_depth(api, sid, limit):
    assert [p for _, p in _all(api, sid, limit=limit)] == sorted(PATHS)


def test_code_point_order_with_non_ascii(api):
    sid = api.post("/v1/memory_stores", {"name": "U"}, format="json").json()["id"]
    paths = ["/B.md", "/a.md", "/é.md", "/中/一.md", "/中.md", "/a-b/c", "/a/b", "/Z"]
    for path in paths:
        api.post(f"/v1/memory_stores/{sid}/memories", {"path": path, "content": "x"}, format="json")
    assert [p for _, p in _all(api, sid, limit=2)] == sorted(paths)
    assert _all(api, sid, depth=1, limit=2) == [
        ("memory", "/B.md"),
        ("memory", "/Z"),
        ("memory_prefix", "/a-b/"),
        ("memory", "/a.md"),
        ("memory_prefix", "/a/"),
        ("memory", "/é.md"),
        ("memory", "/中.md"),
        ("memory_prefix", "/中/"),
    ]


def test_large_rolled_up_directory_costs_few_queries(api, workspace, django_assert_max_num_queries):
    sid = api.post("/v1/memory_stores", {"name": "Dirs"}, format="json").json()["id"]
    _seed(workspace, sid, [f"/d{d}/f{i:02d}.md" for d in range(4) for i in range(30)] + ["/top.md"], "x")
    # Auth (1-2) + store lookup + a handful of scan queries, whatever the directory sizes.
    with django_assert_max_num_queries(9):
        page = _list(api, sid, depth=1, limit=100)
    assert _entries(page) == [("memory_prefix", f"/d{d}/") for d in range(4)] + [("memory", "/top.md")]


def test_list_query_count_is_constant(api, sid, django_assert_max_num_queries):
    with django_assert_max_num_queries(5):
        _list(api, sid, limit=100, view="full")
    with django_assert_max_num_queries(5):
        _list(api, sid, limit=100)


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 101},
        {"depth": -1},
        {"depth": "x"},
        {"path_prefix": "/notes"},
        {"path_prefix": "/a//"},
        {"view": "summary"},
        {"view": ""},
        {"depth": ""},
        {"path_prefix": ""},
        {"page": "garbage"},
    ],
)
def test_list_validation(api, sid, params):
    response = api.get(f"/v1/memory_stores/{sid}/memories", params)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_page_token_is_bound_to_its_listing(api, sid):
    page = _list(api, sid, limit=1)
    response = api.get(f"/v1/memory_stores/{sid}/memories", {"limit": 1, "depth": 1, "page": page["next_page"]})
    assert response.status_code == 400
    stores_page_token = api.get("/v1/memory_stores", {"limit": 1}).json()["next_page"]
    assert stores_page_token is None or api.get(
        f"/v1/memory_stores/{sid}/memories", {"page": stores_page_token}
    ).status_code == 400
