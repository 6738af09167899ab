"""The files a scenario is read from, checked as written: the schema (``schema.json``) and its
validators, a ``Source`` (one file or text, parsed into data that remembers positions), and the
problems found in it as ``Issue`` values, ordered by file and position.

``loader.py`` turns the issues of a file into ``ScenarioError``; ``includes.py`` reads the files
a scenario includes through the same steps.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, cast

from jsonschema import Draft7Validator, validators  # type: ignore[import-untyped]

from emulator.jsonutil import JSON
from emulator.scenario.explain import Explainer, Schema, closest, name, unique_items
from emulator.scenario.variables import Reference, references
from emulator.scenario.yamldoc import DataPath, Problem, Reader, YamlError, compose

_SCHEMA_RESOURCE = resources.files("emulator.scenario").joinpath("schema.json")
SCHEMA_PATH = Path(str(_SCHEMA_RESOURCE))
"""The scenario JSON Schema inside the installed package."""


def schema() -> dict[str, JSON]:
    """The scenario JSON Schema (a fresh copy)."""
    return copy.deepcopy(_schema())


@functools.cache
def _schema() -> dict[str, JSON]:
    return cast(dict[str, JSON], json.loads(_SCHEMA_RESOURCE.read_text(encoding="utf-8")))


_Validator = validators.extend(Draft7Validator, {"uniqueItems": unique_items})
"""Draft-07, but ``uniqueItems`` in linear time (jsonschema compares every pair of mappings)."""


@functools.cache
def validator(definition: str | None = None) -> Any:
    """The validator of a scenario, or of one definition (``steps``, ``turns``)."""
    if definition is None:
        return _Validator(_schema())
    return _Validator(
        {"$ref": f"#/definitions/{definition}", "definitions": _schema()["definitions"]}
    )


def _resolve(node: Schema) -> Schema:
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = _schema()
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


def parse(text: str, empty: str) -> tuple[Reader, object]:
    """The text (a BOM is dropped) as a reader and its data; ``YamlError`` when it is not YAML,
    or holds nothing (``empty`` says what it should hold)."""
    root = compose(text.removeprefix("\ufeff"))
    if root is None:
        raise YamlError(1, 1, empty)
    reader = Reader(text.removeprefix("\ufeff"))
    return reader, reader.data(root)


@dataclass(frozen=True, slots=True, order=True)
class Issue:
    """A problem of a scenario file, in the order problems are reported (file, line, column)."""

    order: int
    line: int
    column: int
    label: str
    message: str
    location: tuple[object, ...] = field(default=(), compare=False)
    """What the problem is about (a path in the data): one problem per location is kept."""


@dataclass(slots=True)
class Source:
    """One file (or text) read: its label, where its includes are relative to, its data."""

    label: str
    directory: Path | None
    reader: Reader
    data: object
    order: int
    resolved: Path | None = None
    include_kind: str = "steps"

    def issue(self, problem: Problem, suffix: str = "") -> Issue:
        line, column = problem.position or self.reader.position(problem.path, problem.at_key)
        location = (self.order, problem.path, problem.at_key)
        return Issue(self.order, line, column, self.label, problem.message + suffix, location)

    def include_label(self, file: str) -> str:
        if self.resolved is not None:
            return os.path.normpath(os.path.join(os.path.dirname(self.label), file))
        return os.path.normpath(str((self.directory or Path()) / file))


def validate(source: Source, data: object, checker: Any, suffix: str = "") -> list[Issue]:
    """Problems of ``data`` (read from ``source``) against ``checker`` (a validator), one per
    location."""
    reader = source.reader
    problems = list(reader.problems) if data is source.data else []
    taken = {p.location for p in problems}
    explainer = Explainer(checker, reader, _resolve)
    for problem in explainer.problems(checker.iter_errors(data)):
        if problem.location not in taken:
            taken.add(problem.location)
            problems.append(problem)
    return [source.issue(p, suffix) for p in problems]


def reference_issues(
    source: Source, known: Collection[str], skip: Collection[DataPath], suffix: str = ""
) -> list[Issue]:
    """Every ``${name}`` of the source (outside ``skip``) that is not a variable name, or names
    no variable in ``known``."""
    out: list[Issue] = []
    for ref in references(source.data, skip):
        if not ref.valid:
            message = f"'{name(ref.token)}' is not a variable: a name is letters, digits and _, not starting with a digit"
        elif ref.name not in known:
            close = closest(ref.name, known)
            hint = f" (did you mean '{close}'?)" if close else ": define it under variables"
            message = f"unknown variable '{ref.name}'{hint}"
        else:
            continue
        out.append(at_reference(source, ref, message + suffix))
    return out


def unset_issues(
    source: Source, used: Iterable[Reference], values: dict[str, str], suffix: str = ""
) -> list[Issue]:
    """Every reference of ``used`` whose variable has no value in this matrix entry."""
    out: list[Issue] = []
    for ref in used:
        if ref.valid and ref.name not in values:
            message = f"variable '{ref.name}' is not set in this matrix entry, nor under variables"
            out.append(at_reference(source, ref, message + suffix))
    return out


def at_reference(source: Source, ref: Reference, message: str) -> Issue:
    """``message`` at the reference ``ref`` of ``source``."""
    line, column = source.reader.find(ref.path, ref.token, ref.nth)
    location = (source.order, ref.path, ref.token, ref.nth)
    return Issue(source.order, line, column, source.label, message, location)
