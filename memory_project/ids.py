"""Public identifiers: a type prefix plus a time-ordered random part.

The random part is a ULID (48-bit millisecond time + 80 random bits, Crockford
base32), so ids sort by creation time, which keeps B-tree inserts local and
makes id order a usable tie-breaker.
"""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Every pair of digits, by the 10 bits it writes: a ULID is 13 look-ups.
_DIGIT_PAIRS = [high + low for high in _ALPHABET for low in _ALPHABET]
_PAIR_SHIFTS = tuple(range(120, -1, -10))


def ulid() -> str:
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    return ulid_text(value)


def ulid_text(value: int) -> str:
    """The 26 Crockford base32 digits of a 128-bit value, most significant first."""
    return "".join([_DIGIT_PAIRS[(value >> shift) & 1023] for shift in _PAIR_SHIFTS])


def new_id(prefix: str) -> str:
    return f"{prefix}_{ulid()}"


# Named module-level defaults: migrations can only reference importable callables.
def new_workspace_id() -> str:
    return new_id("ws")


def new_api_key_id() -> str:
    return new_id("apikey")


def new_message_id() -> str:
    return new_id("msg")


def new_branch_id() -> str:
    return new_id("br")


def new_memory_id() -> str:
    return new_id("mem")


def new_memory_version_id() -> str:
    return new_id("memver")


def new_memory_store_id() -> str:
    return new_id("memstore")


def new_edge_id() -> str:
    return new_id("edge")


def new_job_id() -> str:
    return new_id("job")
