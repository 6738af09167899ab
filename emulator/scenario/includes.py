"""Included files: the ``Site`` a scenario instance is built from (``build.Site``), and the
``FileSet`` that reads, checks and splices the files a scenario includes.

An included file is read once per kind (``steps`` or ``turns``) and checked as written; then, in
each scenario instance, its variables are substituted and what a variable changed is checked
again. Includes may nest ``MAX_INCLUDE_DEPTH`` deep, never in a cycle; every include counts as
one step towards ``MAX_STEPS``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

from emulator.scenario.build import MAX_STEPS, Data
from emulator.scenario.build import Site as BuildSite
from emulator.scenario.explain import closest, name
from emulator.scenario.sources import (
    Issue,
    Source,
    parse,
    reference_issues,
    unset_issues,
    validate,
    validator,
)
from emulator.scenario.variables import Budget, TooLarge, references, substitute
from emulator.scenario.yamldoc import DataPath, Problem, YamlError, read_file

MAX_INCLUDE_DEPTH = 16
MAX_EXPANDED_VALUES = 1_000_000
MAX_EXPANDED_TEXT = 16 * 1024 * 1024
"""What substituting variables may make across one file (every matrix entry and include):
values copied, and text (UTF-8 bytes) of the strings a ``${name}`` changed."""


class Abort(Exception):
    """Ends the building of one scenario instance: ``issue`` says why (``message`` replaces
    its message)."""

    def __init__(self, issue: Issue, message: str) -> None:
        super().__init__(message)
        self.issue = replace(issue, message=message)


@dataclass(slots=True)
class Site:
    """Data of one source, in one scenario instance (``build.Site``)."""

    load: FileSet
    source: Source
    values: dict[str, str]
    issues: list[Issue]
    chain: tuple[tuple[Path, str], ...] = ()
    via: str = ""
    at_line: int | None = None
    """The line of the include in the scenario file, for what an included file holds."""
    declared: Collection[str] | None = None
    """The files the scenario lists under include (for the scenario file itself)."""
    counted: list[int] = field(default_factory=lambda: [0])
    """Steps, turns and includes of the scenario so far (shared by the sites of a scenario)."""
    top: Issue | None = None
    """Where the scenario file includes what this site holds, said as an issue."""

    def count(self, path: DataPath) -> None:
        self.counted[0] += 1
        if self.counted[0] > MAX_STEPS:
            message = f"more than {MAX_STEPS:,} steps (or turns) once includes are spliced; each include counts as one"
            raise Abort(self.top or self.source.issue(Problem(path, message)), message)

    def problem(self, path: DataPath, message: str, *, at_key: bool = False) -> None:
        self.issues.append(self.source.issue(Problem(path, message, at_key), self.via))

    def line(self, path: DataPath) -> int:
        if self.at_line is not None:
            return self.at_line
        return self.source.reader.position(path, at_key=True)[0]

    def include(self, path: DataPath, file: str) -> tuple[BuildSite, Data] | None:
        return self.load.include(self, path, file)


@dataclass(slots=True)
class FileSet:
    """The files one scenario file reads (itself, then what it includes), and what they share:
    the problems of the files as written, the variable names, the budget of substitution."""

    issues: list[Issue] = field(default_factory=list)
    """Problems of the files as written (the same for every matrix entry)."""
    known: set[str] = field(default_factory=set)
    fragments: dict[tuple[Path, str], Source | None] = field(default_factory=dict)
    budget: Budget = field(default_factory=lambda: Budget(MAX_EXPANDED_VALUES, MAX_EXPANDED_TEXT))

    def include(self, site: Site, path: DataPath, file: str) -> tuple[BuildSite, Data] | None:
        """The site and substituted data of the file an include at ``path`` of ``site`` names;
        None when it cannot be included (the problems are reported)."""
        fragment = self._includable(site, path, file)
        if fragment is None or fragment.resolved is None:
            return None
        line, column = site.source.reader.position((*path, "include"), at_key=False)
        via = f" (included from {site.source.label}:{line}:{column})"
        try:
            data = substitute(fragment.data, site.values, (), (), self.budget)
        except TooLarge as e:
            where = (*path, "include")
            raise Abort(
                site.top or site.source.issue(Problem(where, ""), site.via), str(e)
            ) from None
        used = list(references(fragment.data))
        index = len(site.issues)
        site.issues += unset_issues(fragment, used, site.values, via)
        if data != fragment.data:
            site.issues += validate(fragment, data, validator(fragment.include_kind), via)
        if len(site.issues) > index:
            return None
        at_line = site.at_line if site.at_line is not None else line
        chain = (*site.chain, (fragment.resolved, fragment.label))
        sub = Site(self, fragment, site.values, site.issues, chain, via, at_line)
        sub.counted = site.counted
        sub.top = site.top or site.source.issue(Problem((*path, "include"), ""), site.via)
        return sub, data

    def _includable(self, site: Site, path: DataPath, file: str) -> Source | None:
        """The included file, when the scenario lists it, it can be read and it is not
        included in a cycle or too deep; else None (the problem is reported)."""
        if site.declared is not None and file not in site.declared:
            close = closest(file, site.declared)
            hint = f" (did you mean '{close}'?)" if close else ": add it there"
            site.problem((*path, "include"), f"'{name(file)}' is not listed under include{hint}")
            return None
        fragment = self.fragment(site, (*path, "include"), file)
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
        return fragment

    def fragment(self, site: Site, path: DataPath, file: str) -> Source | None:
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
        line, column = source.reader.position(path, at_key=False)
        via = f" (included from {source.label}:{line}:{column})"
        fragment = self._read(site, path, file, resolved, via)
        if fragment is None:
            return None
        before = len(self.issues)
        self.issues += validate(fragment, fragment.data, validator(kind), via)
        self.issues += reference_issues(fragment, self.known, (), via)
        if len(self.issues) > before:
            return None
        self.fragments[(resolved, kind)] = fragment
        return fragment

    def _read(
        self, site: Site, path: DataPath, file: str, resolved: Path, via: str
    ) -> Source | None:
        """The file an include names, read and parsed; None when it cannot be (reported)."""
        source = site.source
        kind = source.include_kind
        label = source.include_label(file)
        order = len(self.fragments)
        try:
            reader, data = parse(read_file(resolved), f"empty file: expected a list of {kind}")
        except YamlError as e:
            if e.line is None:
                site.problem(path, f"cannot include '{name(file)}': {e.message}")
            else:
                self.issues.append(Issue(order, e.line, e.column or 1, label, e.message + via))
            return None
        return Source(label, resolved.parent, reader, data, order, resolved, kind)
