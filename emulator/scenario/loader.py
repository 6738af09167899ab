"""Scenario files: YAML text to typed ``model.Scenario`` values, with ``file:line:col`` errors.

The format is the JSON Schema in ``schema.json`` (draft-07), shipped in the package so that editors
can autocomplete a file that starts with ``# yaml-language-server: $schema=...``. Reading goes in
stages, each stopping at its errors:

1. bytes to text: UTF-8 (a BOM is allowed), at most ``MAX_BYTES`` (``yamldoc.read_file``);
2. text to a node tree, and the tree to JSON-shaped data that remembers where each key and value
   is (``yamldoc``);
3. the file as written against the schema (``explain``: the best error per location, in words a
   scenario author understands), and every ``${name}`` against the variables;
4. for each matrix entry (or once): variables substituted (``variables``), the result checked
   against the schema again where a variable was used, then turned into model values
   (``build``), splicing included files, each read through the same stages.

Errors (under ``emulator.errors.BotemuError``)::

    ScenarioError              a scenario is not valid: file, line, column, message; .errors has all
    └── ScenarioFileError      the file could not be read at all (missing, not UTF-8, too large)
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn, cast

from jsonschema import Draft7Validator, validators  # type: ignore[import-untyped]

from emulator.errors import BotemuError
from emulator.jsonutil import JSON
from emulator.scenario import build
from emulator.scenario.explain import Explainer, Schema, closest, name, unique_items
from emulator.scenario.model import Scenario
from emulator.scenario.variables import Budget, Reference, TooLarge, references, substitute
from emulator.scenario.yamldoc import (
    MAX_BYTES,
    DataPath,
    Problem,
    Reader,
    YamlError,
    compose,
    printable,
    read_file,
)

__all__ = [
    "MAX_BYTES",
    "SCHEMA_PATH",
    "SUFFIXES",
    "Scenario",
    "ScenarioError",
    "ScenarioFileError",
    "discover",
    "load_scenario",
    "load_scenario_text",
    "load_scenarios",
    "load_scenarios_text",
    "schema",
]

_SCHEMA_RESOURCE = resources.files("emulator.scenario").joinpath("schema.json")
SCHEMA_PATH = Path(str(_SCHEMA_RESOURCE))
"""The scenario JSON Schema inside the installed package."""

SUFFIXES = (".yaml", ".yml")
MAX_MESSAGE = 1000
"""The longest message of an error, in characters: a message quotes values short, and this
cuts whatever does not."""
MAX_INCLUDE_DEPTH = 16
MAX_STEPS = build.MAX_STEPS
"""Steps (or turns) per scenario once includes are spliced, each include counted as one."""
MAX_EXPANDED_VALUES = 1_000_000
MAX_EXPANDED_TEXT = 16 * 1024 * 1024
"""What substituting variables may make across one file (every matrix entry and include):
values copied, and text (UTF-8 bytes) of the strings a ``${name}`` changed."""
_NOT_SUBSTITUTED = (("variables",), ("matrix",))
"""Variable definitions are taken as written."""


class ScenarioError(BotemuError):
    """A scenario is not valid. ``str(e)`` is ``file:line:col: message``; ``errors`` lists every
    problem found (this one first), in file order."""

    def __init__(
        self,
        file: str,
        line: int | None,
        column: int | None,
        message: str,
        *,
        more: Sequence[ScenarioError] = (),
    ) -> None:
        at = file if line is None else f"{file}:{line}" + ("" if column is None else f":{column}")
        message = printable(message)  # one line, whatever the file held
        if len(message) > MAX_MESSAGE:  # whatever a message quotes of the file
            message = message[: MAX_MESSAGE - 3] + "..."
        super().__init__(f"{at}: {message}")
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.more = tuple(more)

    @property
    def errors(self) -> tuple[ScenarioError, ...]:
        return (self, *self.more)


class ScenarioFileError(ScenarioError):
    """The file could not be read at all: missing, a directory, unreadable, not UTF-8, too large."""


def schema() -> dict[str, JSON]:
    """The scenario JSON Schema (a fresh copy)."""
    return copy.deepcopy(_schema())


@functools.cache
def _schema() -> dict[str, JSON]:
    return cast(dict[str, JSON], json.loads(_SCHEMA_RESOURCE.read_text(encoding="utf-8")))


_Validator = validators.extend(Draft7Validator, {"uniqueItems": unique_items})
"""Draft-07, but ``uniqueItems`` in linear time (jsonschema compares every pair of mappings)."""


@functools.cache
def _validator(definition: str | None = None) -> Any:
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


# --- API ---------------------------------------------------------------------------------------


def load_scenarios(path: Path | str) -> list[Scenario]:
    """Read and check a scenario file: one ``Scenario`` per matrix entry (one when there is no
    matrix). Raises ``ScenarioError`` (``ScenarioFileError`` when the file cannot be read)."""
    path = Path(path)
    label = str(path)
    try:
        text = read_file(path)
    except YamlError as e:
        raise ScenarioFileError(label, e.line, e.column, e.message) from e
    return _Load(text, label, path, path.parent).scenarios()


def load_scenarios_text(
    text: str, name: str = "<string>", base: Path | None = None
) -> list[Scenario]:
    """Read and check scenario text; ``name`` labels the errors, ``base`` is the directory
    included files are relative to (without it, a scenario cannot include files)."""
    return _Load(text, name, None, base).scenarios()


def load_scenario(path: Path | str) -> Scenario:
    """Read and check a file that makes one scenario (no matrix, or a matrix of one entry)."""
    return _single(load_scenarios(path), str(path))


def load_scenario_text(text: str, name: str = "<string>", base: Path | None = None) -> Scenario:
    """``load_scenarios_text`` for text that makes one scenario."""
    return _single(load_scenarios_text(text, name, base), name)


def discover(paths: Sequence[Path]) -> list[Path]:
    """The scenario files at ``paths``, in order: a file as given; a directory as every
    ``*.yaml`` and ``*.yml`` under it, sorted, except files whose name starts with ``_`` (files
    that scenarios include). Each file once."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.suffix in SUFFIXES and not file.name.startswith("_") and file.is_file():
                    found.setdefault(file)
        else:
            found.setdefault(path)
    return list(found)


def _single(scenarios: list[Scenario], label: str) -> Scenario:
    if len(scenarios) == 1:
        return scenarios[0]
    first = scenarios[0]
    message = f"the matrix makes {len(scenarios)} scenarios where one is expected (botemu test runs them all)"
    raise ScenarioError(label, first.line, None, message)


# --- Loading one file --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class _Issue:
    order: int
    line: int
    column: int
    label: str
    message: str
    location: tuple[object, ...] = field(default=(), compare=False)
    """What the problem is about (a path in the data): one problem per location is kept."""


@dataclass(slots=True)
class _Entry:
    """The problems of one matrix entry: ``early`` with its variables substituted, ``late``
    while building its scenario (which happens only when there are no early ones)."""

    early: list[_Issue] = field(default_factory=list)
    late: list[_Issue] = field(default_factory=list)
    built: bool = False


@dataclass(slots=True)
class _Source:
    """One file (or text) read: its label, where its includes are relative to, its data."""

    label: str
    directory: Path | None
    reader: Reader
    data: object
    order: int
    resolved: Path | None = None
    include_kind: str = "steps"

    def issue(self, problem: Problem, suffix: str = "") -> _Issue:
        line, column = problem.position or self.reader.position(problem.path, problem.at_key)
        location = (self.order, problem.path, problem.at_key)
        return _Issue(self.order, line, column, self.label, problem.message + suffix, location)

    def include_label(self, file: str) -> str:
        if self.resolved is not None:
            return os.path.normpath(os.path.join(os.path.dirname(self.label), file))
        return os.path.normpath(str((self.directory or Path()) / file))


@dataclass(slots=True)
class _Site:
    """Data of one source, in one scenario instance (``build.Site``)."""

    load: _Load
    source: _Source
    values: dict[str, str]
    issues: list[_Issue]
    chain: tuple[tuple[Path, str], ...] = ()
    via: str = ""
    at_line: int | None = None
    """The line of the include in the scenario file, for what an included file holds."""
    declared: Collection[str] | None = None
    """The files the scenario lists under include (for the scenario file itself)."""
    counted: list[int] = field(default_factory=lambda: [0])
    """Steps, turns and includes of the scenario so far (shared by the sites of a scenario)."""
    top: _Issue | None = None
    """Where the scenario file includes what this site holds, said as an issue."""

    def count(self, path: DataPath) -> None:
        self.counted[0] += 1
        if self.counted[0] > MAX_STEPS:
            message = f"more than {MAX_STEPS:,} steps (or turns) once includes are spliced; each include counts as one"
            raise _Abort(self.top or self.source.issue(Problem(path, message)), message)

    def problem(self, path: DataPath, message: str, *, at_key: bool = False) -> None:
        self.issues.append(self.source.issue(Problem(path, message, at_key), self.via))

    def line(self, path: DataPath) -> int:
        if self.at_line is not None:
            return self.at_line
        return self.source.reader.position(path, at_key=True)[0]

    def include(self, path: DataPath, file: str) -> tuple[build.Site, build.Data] | None:
        return self.load.include(self, path, file)


class _Abort(Exception):
    """Ends the building of one scenario instance: ``issue`` says why (``message`` replaces
    its message)."""

    def __init__(self, issue: _Issue, message: str) -> None:
        super().__init__(message)
        self.issue = replace(issue, message=message)


@dataclass(slots=True)
class _Load:
    text: str
    label: str
    path: Path | None
    base: Path | None
    issues: list[_Issue] = field(default_factory=list)
    """Problems of the files as written (the same for every matrix entry)."""
    known: set[str] = field(default_factory=set)
    fragments: dict[tuple[Path, str], _Source | None] = field(default_factory=dict)
    budget: Budget = field(default_factory=lambda: Budget(MAX_EXPANDED_VALUES, MAX_EXPANDED_TEXT))

    def scenarios(self) -> list[Scenario]:
        main = self._main()
        doc = cast(dict[str, Any], main.data if isinstance(main.data, dict) else {})
        variables = _strings(doc.get("variables"))
        matrix = doc.get("matrix")
        entries = [_strings(e) for e in matrix] if isinstance(matrix, list) else []
        self.known = {*variables, *(k for e in entries for k in e)}
        self._check_references(main, _NOT_SUBSTITUTED)
        if self.issues:
            self._raise([])
        main.include_kind = "steps" if "caller" in doc else "turns"
        results: list[Scenario] = []
        checked: list[_Entry] = []
        for index, entry in enumerate(entries or [None]):
            checked.append(_Entry())
            scenario = self._instance(main, doc, variables, entry, index, checked[-1])
            if scenario is not None:
                results.append(scenario)
        if len(results) == len(checked):
            self._check_ids(main, results)
        if self.issues or any(e.early or e.late for e in checked):
            self._raise(checked)
        return results

    def _main(self) -> _Source:
        try:
            root = compose(self.text.removeprefix("\ufeff"))
            if root is None:
                message = "empty file: expected a scenario with the keys name and caller (or messaging, or probe)"
                raise YamlError(1, 1, message)
            reader = Reader(self.text.removeprefix("\ufeff"))
            data = reader.data(root)
        except YamlError as e:
            raise ScenarioError(self.label, e.line, e.column, e.message) from None
        resolved = self.path.resolve() if self.path is not None else None
        main = _Source(self.label, self.base, reader, data, 0, resolved)
        self.issues += self._validate(main, data, _validator())
        return main

    def _validate(
        self, source: _Source, data: object, validator: Any, suffix: str = ""
    ) -> list[_Issue]:
        """Problems of ``data`` (read from ``source``) against ``validator``, one per location."""
        reader = source.reader
        problems = list(reader.problems) if data is source.data else []
        taken = {p.location for p in problems}
        explainer = Explainer(validator, reader, _resolve)
        for problem in explainer.problems(validator.iter_errors(data)):
            if problem.location not in taken:
                taken.add(problem.location)
                problems.append(problem)
        return [source.issue(p, suffix) for p in problems]

    def _check_references(
        self, source: _Source, skip: Collection[DataPath], suffix: str = ""
    ) -> None:
        for ref in references(source.data, skip):
            if not ref.valid:
                message = f"'{name(ref.token)}' is not a variable: a name is letters, digits and _, not starting with a digit"
            elif ref.name not in self.known:
                close = closest(ref.name, self.known)
                hint = f" (did you mean '{close}'?)" if close else ": define it under variables"
                message = f"unknown variable '{ref.name}'{hint}"
            else:
                continue
            self.issues.append(self._at_reference(source, ref, message + suffix))

    def _at_reference(self, source: _Source, ref: Reference, message: str) -> _Issue:
        line, column = source.reader.find(ref.path, ref.token, ref.nth)
        location = (source.order, ref.path, ref.token, ref.nth)
        return _Issue(source.order, line, column, source.label, message, location)

    def _instance(
        self,
        main: _Source,
        doc: dict[str, Any],
        variables: dict[str, str],
        entry: dict[str, str] | None,
        index: int,
        checked: _Entry,
    ) -> Scenario | None:
        values = {**variables, **(entry or {})}
        try:  # first: what it may make is bounded, and checking a matrix entry costs as much
            data = cast(dict[str, Any], substitute(doc, values, _NOT_SUBSTITUTED, (), self.budget))
        except TooLarge as e:
            at: DataPath = ("matrix", index) if entry is not None else ("variables",)
            checked.early.append(main.issue(Problem(at, str(e), at_key=entry is None)))
            return None
        used = list(references(doc, _NOT_SUBSTITUTED))
        self._check_unset(main, used, values, checked.early)
        if data != doc:  # the matrix is checked as written, once: each entry checks one of it
            shown = {**data, "matrix": data["matrix"][:1]} if entry is not None else data
            checked.early += self._validate(main, shown, _validator())
        if checked.early:
            return None
        checked.built = True
        declared = list(data.get("include", ()))
        site = _Site(self, main, values, checked.late, declared=declared)
        if main.resolved is not None:
            site.chain = ((main.resolved, main.label),)
        for number, file in enumerate(declared):
            self._fragment(site, ("include", number), file)
        try:
            parts = build.parts(data, site)
        except _Abort as e:  # too many steps, or includes that substitute too much
            checked.late.append(e.issue)
            return None
        if entry is None:
            line = main.reader.position(("name",), at_key=True)[0]
        else:
            line = main.reader.position(("matrix", index), at_key=False)[0]
        return Scenario(
            name=data["name"],
            description=data.get("description"),
            tags=tuple(data.get("tags", ())),
            caller=parts.caller,
            messaging=parts.messaging,
            probe=parts.probe,
            expect=parts.expect,
            faults=parts.faults,
            platform=parts.platform,
            variables=tuple(entry.items()) if entry is not None else (),
            spec=data.get("spec"),
            path=self.path,
            line=line,
        )

    def _check_unset(
        self,
        source: _Source,
        used: Iterable[Reference],
        values: dict[str, str],
        issues: list[_Issue],
        suffix: str = "",
    ) -> None:
        for ref in used:
            if ref.valid and ref.name not in values:
                message = (
                    f"variable '{ref.name}' is not set in this matrix entry, nor under variables"
                )
                issues.append(self._at_reference(source, ref, message + suffix))

    def _check_ids(self, main: _Source, scenarios: list[Scenario]) -> None:
        first: dict[str, int] = {}
        for index, scenario in enumerate(scenarios):
            if scenario.id in first:
                message = f"this entry gives the same test id as entry {first[scenario.id] + 1}: {scenario.id}"
                self.issues.append(main.issue(Problem(("matrix", index), message)))
            first.setdefault(scenario.id, index)

    # --- includes ---

    def include(
        self, site: _Site, path: DataPath, file: str
    ) -> tuple[build.Site, build.Data] | None:
        if site.declared is not None and file not in site.declared:
            close = closest(file, site.declared)
            hint = f" (did you mean '{close}'?)" if close else ": add it there"
            site.problem((*path, "include"), f"'{name(file)}' is not listed under include{hint}")
            return None
        fragment = self._fragment(site, (*path, "include"), file)
        if fragment is None or fragment.resolved is None:
            return None
        opened = [resolved for resolved, _ in site.chain]
        if fragment.resolved in opened:
            loop = [label for _, label in site.chain[opened.index(fragment.resolved) :]]
            site.problem(
                (*path, "include"), f"include cycle: {' -> '.join([*loop, fragment.label])}"
            )
            return None
        if len(site.chain) >= MAX_INCLUDE_DEPTH:
            site.problem((*path, "include"), f"includes nested more than {MAX_INCLUDE_DEPTH} deep")
            return None
        line, column = site.source.reader.position((*path, "include"), at_key=False)
        via = f" (included from {site.source.label}:{line}:{column})"
        try:
            data = substitute(fragment.data, site.values, (), (), self.budget)
        except TooLarge as e:
            where = (*path, "include")
            raise _Abort(
                site.top or site.source.issue(Problem(where, ""), site.via), str(e)
            ) from None
        used = list(references(fragment.data))
        index = len(site.issues)
        self._check_unset(fragment, used, site.values, site.issues, via)
        if data != fragment.data:
            validator = _validator(fragment.include_kind)
            site.issues += self._validate(fragment, data, validator, via)
        if len(site.issues) > index:
            return None
        at_line = site.at_line if site.at_line is not None else line
        chain = (*site.chain, (fragment.resolved, fragment.label))
        sub = _Site(self, fragment, site.values, site.issues, chain, via, at_line)
        sub.counted = site.counted
        sub.top = site.top or site.source.issue(Problem((*path, "include"), ""), site.via)
        return sub, data

    def _fragment(self, site: _Site, path: DataPath, file: str) -> _Source | None:
        """The included file ``file``, read and checked as written; None when it cannot be
        (the problems are reported)."""
        source = site.source
        if Path(file).is_absolute():
            site.problem(
                path, f"'{name(file)}' is an absolute path: include a path relative to this file"
            )
            return None
        if source.directory is None:
            site.problem(
                path,
                f"cannot include '{name(file)}': the scenario has no directory (read it from a file, or pass base)",
            )
            return None
        resolved = (source.directory / file).resolve()
        kind = source.include_kind
        if (resolved, kind) in self.fragments:
            return self.fragments[(resolved, kind)]
        self.fragments[(resolved, kind)] = None
        label = source.include_label(file)
        line, column = source.reader.position(path, at_key=False)
        via = f" (included from {source.label}:{line}:{column})"
        order = len(self.fragments)
        try:
            text = read_file(resolved)
            root = compose(text.removeprefix("\ufeff"))
            if root is None:
                raise YamlError(1, 1, f"empty file: expected a list of {kind}")
            reader = Reader(text.removeprefix("\ufeff"))
            data = reader.data(root)
        except YamlError as e:
            if e.line is None:
                site.problem(path, f"cannot include '{name(file)}': {e.message}")
            else:
                self.issues.append(_Issue(order, e.line, e.column or 1, label, e.message + via))
            return None
        fragment = _Source(label, resolved.parent, reader, data, order, resolved, kind)
        before = len(self.issues)
        self.issues += self._validate(fragment, data, _validator(kind), via)
        self._check_references(fragment, (), via)
        if len(self.issues) > before:
            return None
        self.fragments[(resolved, kind)] = fragment
        return fragment

    # --- errors ---

    def _raise(self, checked: list[_Entry]) -> NoReturn:
        """Raise every problem in file order, one per location: those of the files as written,
        then those of matrix entries. A problem that not every entry checked as far has names
        its entry."""
        ordered = list(self.issues)
        many = len(checked) > 1
        early = Counter(issue for entry in checked for issue in set(entry.early))
        late = Counter(issue for entry in checked for issue in set(entry.late))
        built = sum(entry.built for entry in checked)
        for number, entry in enumerate(checked):
            for issue in entry.early + entry.late:
                common = early[issue] == len(checked) or late[issue] == built
                if many and not common:
                    issue = replace(issue, message=f"{issue.message} (matrix entry {number + 1})")
                ordered.append(issue)
        kept: dict[tuple[object, ...], _Issue] = {}
        for issue in ordered:
            where = issue.location or (issue.order, issue.line, issue.column)
            kept.setdefault((*where, issue.message) if many else where, issue)
        errors = [
            ScenarioError(i.label, i.line, i.column, i.message) for i in sorted(kept.values())
        ]
        first = errors[0]
        raise ScenarioError(first.file, first.line, first.column, first.message, more=errors[1:])


def _strings(value: object) -> dict[str, str]:
    """The string values of a mapping of variables (the schema reports any others)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, str)}
