"""Dataclass <-> JSON without dict soup: `to_dict` and `from_dict` driven by type hints.

Traces and results are nested dataclasses. `from_dict(Cls, to_dict(obj)) == obj` holds for every
type used in them: dataclasses, lists, tuples (fixed and variadic), dicts with str keys, Optional,
unions of simple types, and `Any` (left as parsed JSON).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def to_dict(obj: Any) -> Any:
    if obj is None or type(obj) in _PLAIN:  # most of a trace: strings and numbers, returned as they are
        return obj
    names = _field_names(type(obj))  # type: ignore[arg-type]  # a type is hashable
    if names is not None:
        return {name: to_dict(getattr(obj, name)) for name in names}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # JSON has no NaN/inf; a trace stays valid JSON
    return obj


_PLAIN = frozenset({str, int, bool})


@cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type (None for any other type), looked up once per type."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_dict(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if tp is Any or tp is object:
        return data
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        for a in args:
            if dataclasses.is_dataclass(a) and isinstance(data, dict):
                return from_dict(a, data)
        for a in args:
            base = typing.get_origin(a) or a
            if isinstance(base, type) and isinstance(data, base):
                return from_dict(a, data)
        return from_dict(args[0], data) if args else data
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data and f.init:
                kwargs[f.name] = from_dict(hints[f.name], data[f.name])
        return tp(**kwargs)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return [from_dict(arg, v) for v in data]
    if origin is tuple:
        targs = typing.get_args(tp)
        if len(targs) == 2 and targs[1] is Ellipsis:
            return tuple(from_dict(targs[0], v) for v in data)
        if targs:
            return tuple(from_dict(a, v) for a, v in zip(targs, data))
        return tuple(data)
    if origin is dict:
        kt, vt = typing.get_args(tp) or (str, Any)
        return {from_dict(kt, k) if kt is not str else k: from_dict(vt, v) for k, v in data.items()}
    if tp is float and isinstance(data, int):
        return float(data)
    if tp is int and isinstance(data, str) and data.lstrip("-").isdigit():
        return int(data)
    return data


def dumps(obj: Any, indent: int | None = None) -> str:
    return json.dumps(to_dict(obj), ensure_ascii=False, indent=indent, allow_nan=False)


def loads(tp: type[T], text: str) -> T:
    return from_dict(tp, json.loads(text))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder, fsync, then rename over the target: a crash
    at any point leaves either the old file or the new one, never half of one."""
    import os
    import tempfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # the writer's pid in the name: a sweep can tell what a killed writer left (engine/integrity/interrupted.py)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
