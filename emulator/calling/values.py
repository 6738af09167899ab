"""``quick_init``: a cheaper ``__init__`` for the frozen, slotted dataclasses the engine builds on
its hot path (events, outcomes, the machines' results).

A frozen dataclass's own ``__init__`` sets every field through ``object.__setattr__`` (the way
around its frozenness): about twice what setting the slot through its descriptor costs, four
times a plain assignment, and a 10-minute call builds some 1,500 of these values.
``quick_init`` writes an ``__init__`` with the same parameters (positional, keyword-only,
defaults and default factories) that sets each slot through its descriptor: the instances stay
frozen, equal and hashable as before. ``quick_init(thaw=True)`` (the call's events, the most
numerous) assigns the slots plainly and drops the class's ``__setattr__`` and ``__delattr__``
that refuse changes: the class stays frozen to the type checker (mypy rejects an assignment to
a field), equal and hashable, but is no longer guarded at run time.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable
from typing import TypeVar, overload

T = TypeVar("T", bound=type)

_FACTORY = object()
"""Marks a parameter with a default factory that was not given."""


@overload
def quick_init(cls: T, /) -> T: ...
@overload
def quick_init(*, thaw: bool) -> Callable[[T], T]: ...


def quick_init(cls: T | None = None, /, *, thaw: bool = False) -> T | Callable[[T], T]:
    """Give the frozen, slotted dataclass ``cls`` the descriptor-setting ``__init__``, or with
    ``thaw`` the assigning one (every frozen class it inherits from must be thawed too)."""
    if cls is None:
        return lambda klass: _quick_init(klass, thaw)
    return _quick_init(cls, thaw)


def _quick_init(cls: T, thaw: bool) -> T:
    params = dataclasses.fields(cls)
    assert dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__"), cls
    assert all(p.init for p in params), cls
    space: dict[str, object] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for f in params:
        slot = inspect.getattr_static(cls, f.name)
        assert isinstance(slot, types.MemberDescriptorType), (cls, f.name)
        if not thaw:
            space[f"_set_{f.name}"] = slot.__set__
        if f.default is not dataclasses.MISSING:
            space[f"_default_{f.name}"] = f.default
            param = f"{f.name}=_default_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            space[f"_factory_{f.name}"] = f.default_factory
            param = f"{f.name}=_FACTORY"
            body.append(f"    if {f.name} is _FACTORY:\n        {f.name} = _factory_{f.name}()\n")
        else:
            param = f.name
        (keywords if f.kw_only else positional).append(param)
        body.append(
            f"    self.{f.name} = {f.name}\n" if thaw else f"    _set_{f.name}(self, {f.name})\n"
        )
    signature = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = "".join([f"def __init__({signature}):\n", *(body or ["    pass\n"])])
    exec(source, space)
    init = space["__init__"]
    assert isinstance(init, types.FunctionType)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010
    if thaw:
        for name in ("__setattr__", "__delattr__"):
            if name in vars(cls):
                delattr(cls, name)
        assert cls.__setattr__ is object.__setattr__, f"{cls}: a base class is still frozen"
    return cls
