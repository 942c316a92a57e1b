"""Typed reads of environment variables, for the settings: an unset or
empty variable takes the default."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


def env_float_map(name: str, default: dict[str, float], *, keys: set[str]) -> dict[str, float]:
    """`key:number` pairs, comma-separated ("cjk>cjk:0.05,latin>cjk:-0.02"),
    each key one of `keys`; a malformed value stops the start."""
    value = os.environ.get(name)
    if value is None:
        return dict(default)
    pairs = {}
    for part in (p.strip() for p in value.split(",") if p.strip()):
        key, _, number = part.rpartition(":")
        try:
            if key not in keys:
                raise ValueError(key)
            pairs[key] = float(number)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name} takes comma-separated key:number pairs, each key one of "
                                       f"{', '.join(sorted(keys))}; got {part!r}.") from exc
    return pairs
