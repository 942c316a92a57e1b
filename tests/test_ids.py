"""Public ids: a prefix and a ULID (48-bit millisecond time, 80 random bits,
26 Crockford base32 digits, most significant first)."""

from __future__ import annotations

import random
import time

from memory_project.ids import new_memory_id, ulid, ulid_text

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _digits(value: int) -> str:
    """The ULID of `value` written out digit by digit, five bits at a time."""
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def test_a_ulid_is_its_value_in_crockford_base32():
    rng = random.Random(12)
    values = [0, 1, 31, 32, 2**80 - 1, 2**80, 2**128 - 1,
              *(rng.getrandbits(128) for _ in range(2000)), *(rng.getrandbits(48) << 80 for _ in range(50))]
    for value in values:
        assert ulid_text(value) == _digits(value)


def test_ids_sort_by_time_and_carry_it():
    first = ulid()
    time.sleep(0.002)
    later = new_memory_id()
    assert later.startswith("mem_") and len(later) == 4 + 26 and set(later[4:]) <= set(CROCKFORD)
    assert first < later[4:]
    millis = int(later[4:14].translate(str.maketrans(CROCKFORD, "0123456789abcdefghijklmnopqrstuv")), 32)
    assert abs(millis - time.time() * 1000) < 60_000
