"""Typed records read once from a JSON object (:class:`JsonRecord`): a dataclass's fields from the object's keys."""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any


def read_as(fn, key: str | None = None, factory=None):
    """A field read through ``fn`` (None where absent), from JSON key ``key`` (default: its name); ``factory`` makes
    its default (else None)."""
    meta = {"read": fn, "key": key}
    return field(default=None, metadata=meta) if factory is None else field(default_factory=factory, metadata=meta)


def keyed(key: str, default: Any = None):
    """A field read from JSON key ``key`` (not a Python name: ``class``, ``hug-oracle``)."""
    return field(default=default, metadata={"key": key})


class JsonRecord:
    """A dataclass read from a JSON object, each field from its key (absent: its default, else None); undeclared keys
    left out."""

    @classmethod
    def from_dict(cls, d):
        d = d if isinstance(d, dict) else {}
        kw = {}
        for f in dataclasses.fields(cls):
            key, fn = f.metadata.get("key") or f.name, f.metadata.get("read")
            if fn is not None:
                kw[f.name] = fn(d.get(key))
            elif key in d:
                kw[f.name] = d[key]
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                kw[f.name] = None
        return cls(**kw)

    @classmethod
    def many(cls, items) -> list:
        """The records of a JSON list's objects ([] for None)."""
        return [cls.from_dict(x) for x in items or [] if isinstance(x, dict)]

    @classmethod
    def by_key(cls, d) -> dict:
        """``{key: record}`` of a JSON object of objects ({} for None)."""
        return {k: cls.from_dict(v) for k, v in (d or {}).items()} if isinstance(d, dict) else {}
