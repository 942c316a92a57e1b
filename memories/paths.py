"""Memory-store paths: validation, the canonical form, prefixes and depth roll-ups.

The canonical form starts with `/` (the memory-store API); a relative path such
as `notes/a.md` (spec 001) is accepted and names the same memory as
`/notes/a.md`. Paths are case-sensitive and compared as code points, which is
also UTF-8 byte order, so every path below a prefix sorts contiguously.
"""

from __future__ import annotations

import re
import unicodedata

from memories.models import MAX_PATH_BYTES, MAX_PATH_SEGMENTS
from memory_project.errors import ValidationError

# Unicode categories refused anywhere in a path: control (Cc), format (Cf),
# surrogates (Cs), and the line / paragraph separators U+2028 / U+2029.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SLUG_RUN = re.compile(r"[^a-z0-9]+")


def _check_characters(value: str, *, what: str) -> None:
    for char in value:
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise ValidationError(
                f"{what} contains a forbidden character U+{ord(char):04X} (control, format or line/paragraph separator)."
            )
    if not unicodedata.is_normalized("NFC", value):
        raise ValidationError(f"{what} must be in Unicode Normalization Form C.")


def _check_segments(segments: list[str], *, what: str) -> None:
    for segment in segments:
        if segment == "":
            raise ValidationError(f"{what} has an empty segment ('//' or a trailing '/').")
        if segment in (".", ".."):
            raise ValidationError(f"{what} must not contain '.' or '..' segments.")


def normalize_path(raw: object, *, field: str = "path") -> str:
    """The canonical `/`-prefixed path, or ValidationError."""
    if not isinstance(raw, str):
        raise ValidationError(f"{field} must be a string.")
    if raw == "" or raw == "/":
        raise ValidationError(f"{field} must name a memory (at least one segment).")
    path = raw if raw.startswith("/") else "/" + raw
    _check_characters(path, what=field)
    segments = path[1:].split("/")
    _check_segments(segments, what=field)
    if len(segments) > MAX_PATH_SEGMENTS:
        raise ValidationError(f"{field} has more than {MAX_PATH_SEGMENTS} segments.")
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise ValidationError(f"{field} is longer than {MAX_PATH_BYTES} bytes.")
    return path


def normalize_prefix(raw: object, *, field: str = "path_prefix") -> str:
    """A canonical directory prefix: starts and ends with `/`; `/` is the whole store."""
    if not isinstance(raw, str) or raw == "":
        raise ValidationError(f"{field} must be a non-empty string ending with '/'.")
    if not raw.endswith("/"):
        raise ValidationError(f"{field} must end with '/' (it matches whole path segments).")
    prefix = raw if raw.startswith("/") else "/" + raw
    if prefix == "/":
        return prefix
    _check_characters(prefix, what=field)
    segments = prefix[1:-1].split("/")
    _check_segments(segments, what=field)
    if len(segments) >= MAX_PATH_SEGMENTS:
        raise ValidationError(f"{field} has too many segments for any memory to lie below it.")
    if len(prefix.encode("utf-8")) >= MAX_PATH_BYTES:
        raise ValidationError(f"{field} is too long for any memory to lie below it.")
    return prefix


def prefix_upper_bound(prefix: str) -> str:
    """The smallest string greater than every string that starts with `prefix`
    (which ends with `/`): the prefix with its final `/` replaced by `0`, the next
    code point. Lets a keyset scan jump over a whole directory."""
    return prefix[:-1] + chr(ord("/") + 1)


def rollup(path: str, *, prefix: str, depth: int) -> str | None:
    """The `memory_prefix` that stands for `path` when listing `prefix` to `depth`
    levels, or None when the memory itself is listed (depth 0 = everything)."""
    if depth <= 0:
        return None
    rest = path[len(prefix) :].split("/")
    if len(rest) <= depth:
        return None
    return prefix + "/".join(rest[:depth]) + "/"


def mount_slug(name: str) -> str:
    """The store's directory name under `/mnt/memory/`: lowercased, every run of
    characters other than ASCII letters and digits turned into one hyphen."""
    return _SLUG_RUN.sub("-", name.lower())
