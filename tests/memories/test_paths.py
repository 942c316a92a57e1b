"""Store path rules: canonical form, refusals, prefixes, roll-ups, mount slugs."""

from __future__ import annotations

import pytest

from memories.paths import mount_slug, normalize_path, normalize_prefix, prefix_upper_bound, rollup
from memory_project.errors import ValidationError


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("/notes/a.md", "/notes/a.md"),
        ("notes/a.md", "/notes/a.md"),  # spec 001's relative form names the same memory
        ("config.yaml", "/config.yaml"),
        ("/Notes/A.md", "/Notes/A.md"),  # case-sensitive, kept as sent
        ("/中文/笔记.md", "/中文/笔记.md"),
        ("/a b/c-d_e.f", "/a b/c-d_e.f"),
        ("/" + "/".join(["s"] * 20), "/" + "/".join(["s"] * 20)),
    ],
)
def test_valid_paths_are_canonical(raw, canonical):
    assert normalize_path(raw) == canonical


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "/",
        "//a",
        "/a//b",
        "/a/",
        "a/",
        "/a/./b",
        "/a/../b",
        "/..",
        ".",
        "/a\x00b",
        "/a\nb",
        "/a\tb",
        "/a\u200bb",  # zero-width space: a format character
        "/a\u2028b",
        "/a\u2029b",
        "/e\u0301.md",  # not NFC (decomposed é)
        "/" + "/".join(["s"] * 21),
        "/" + "x" * 1024,
        None,
        42,
        ["/a"],
    ],
)
def test_invalid_paths_are_refused(raw):
    with pytest.raises(ValidationError):
        normalize_path(raw)


def test_path_limit_counts_utf8_bytes():
    # 341 three-byte characters + "/" = 1024 bytes: allowed; one more is not.
    assert normalize_path("/" + "中" * 341)
    with pytest.raises(ValidationError):
        normalize_path("/" + "中" * 342)


@pytest.mark.parametrize(("raw", "prefix"), [("/", "/"), ("/notes/", "/notes/"), ("notes/", "/notes/"), ("/a/b/", "/a/b/")])
def test_prefixes(raw, prefix):
    assert normalize_prefix(raw) == prefix


@pytest.mark.parametrize("raw", ["", "/notes", "notes", "//", "/a//", "/./", "/a/../", "/a\x01/"])
def test_invalid_prefixes(raw):
    with pytest.raises(ValidationError):
        normalize_prefix(raw)


def test_prefix_upper_bound_brackets_exactly_the_directory():
    bound = prefix_upper_bound("/notes/")
    inside = ["/notes/a", "/notes/zzz", "/notes/\U0010ffff", "/notes/中"]
    outside = ["/notes-archive/x", "/notes.md", "/notes0", "/notet", "/notes"]
    assert all("/notes/" <= p < bound for p in inside)
    assert not any("/notes/" <= p < bound for p in outside)


def test_rollup():
    assert rollup("/a/b/c.md", prefix="/", depth=0) is None
    assert rollup("/a.md", prefix="/", depth=1) is None
    assert rollup("/a/b/c.md", prefix="/", depth=1) == "/a/"
    assert rollup("/a/b/c.md", prefix="/", depth=2) == "/a/b/"
    assert rollup("/a/b/c.md", prefix="/", depth=3) is None
    assert rollup("/a/b/c.md", prefix="/a/", depth=1) == "/a/b/"
    assert rollup("/a/b.md", prefix="/a/", depth=1) is None


def test_mount_slug():
    assert mount_slug("User Preferences") == "user-preferences"
    assert mount_slug("Team  --  Notes 2026!") == "team-notes-2026-"
    assert mount_slug("Café Über") == "caf-ber"
