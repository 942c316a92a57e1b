"""Instants that come from clients, made safe for both databases.

An aware datetime can name a moment a `datetime` cannot hold in UTC:
`0001-01-01T00:00:00+14:00` is in year 0, `9999-12-31T23:59:59-14:00` in year
10000. PostgreSQL stores the offset and compares; SQLite's adapter converts to
UTC first and raises OverflowError (a 500). Bounds are clamped to what UTC
holds (nothing exists outside it, so "after year 0" means "everything");
cursors, which only ever hold instants the service wrote, are refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

EARLIEST = datetime.min.replace(tzinfo=UTC)
LATEST = datetime.max.replace(tzinfo=UTC)


def in_utc(moment: datetime) -> datetime | None:
    """The aware `moment` in UTC, or None when UTC cannot hold it."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return None


def clamped_utc(moment: datetime) -> datetime:
    """The aware `moment` in UTC, clamped to the range a datetime holds."""
    converted = in_utc(moment)
    if converted is not None:
        return converted
    return EARLIEST if moment.year == datetime.min.year else LATEST
