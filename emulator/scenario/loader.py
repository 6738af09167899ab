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
   (``build``), splicing included files, each read through the same stages (``includes``).

The schema and the checking of a file as written are ``sources.py``.

Errors (under ``emulator.errors.BotemuError``)::

    ScenarioError              a scenario is not valid: file, line, column, message; .errors has all
    └── ScenarioFileError      the file could not be read at all (missing, not UTF-8, too large)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, cast

from emulator.errors import BotemuError
from emulator.scenario.build import MAX_STEPS, Parts
from emulator.scenario.build import parts as build_parts
from emulator.scenario.chatdown import parse_chat
from emulator.scenario.includes import (
    MAX_EXPANDED_TEXT,
    MAX_EXPANDED_VALUES,
    MAX_INCLUDE_DEPTH,
    Abort,
    FileSet,
    Site,
)
from emulator.scenario.model import Scenario
from emulator.scenario.replay_files import (
    REPLAY_SUFFIXES,
    ReplayError,
    read_recording,
    recording_scenario,
)
from emulator.scenario.sources import (
    SCHEMA_PATH,
    Issue,
    Source,
    parse,
    reference_issues,
    schema,
    unset_issues,
    validate,
    validator,
)
from emulator.scenario.transcript_file import parse_transcript
from emulator.scenario.variables import TooLarge, references, substitute
from emulator.scenario.yamldoc import MAX_BYTES, DataPath, Problem, YamlError, printable, read_file

__all__ = [
    "MAX_BYTES",
    "MAX_EXPANDED_TEXT",
    "MAX_EXPANDED_VALUES",
    "MAX_INCLUDE_DEPTH",
    "MAX_MESSAGE",
    "MAX_STEPS",
    "REPLAY_SUFFIXES",
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

SUFFIXES = (".yaml", ".yml")
MAX_MESSAGE = 1000
"""The longest message of an error, in characters: a message quotes values short, and this
cuts whatever does not."""
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


# --- API ---------------------------------------------------------------------------------------


def load_scenarios(path: Path | str) -> list[Scenario]:
    """Read and check a scenario file: one ``Scenario`` per matrix entry (one when there is no
    matrix). Raises ``ScenarioError`` (``ScenarioFileError`` when the file cannot be read)."""
    path = Path(path)
    label = str(path)
    if path.suffix in REPLAY_SUFFIXES:
        return [_recording(path, label)]
    try:
        text = read_file(path)
    except YamlError as e:
        raise ScenarioFileError(label, e.line, e.column, e.message) from e
    return _Load(text=text, label=label, path=path, base=path.parent).scenarios()


def load_scenarios_text(
    text: str, name: str = "<string>", base: Path | None = None
) -> list[Scenario]:
    """Read and check scenario text; ``name`` labels the errors, ``base`` is the directory
    included files are relative to (without it, a scenario cannot include files)."""
    return _Load(text=text, label=name, path=None, base=base).scenarios()


def load_scenario(path: Path | str) -> Scenario:
    """Read and check a file that makes one scenario (no matrix, or a matrix of one entry)."""
    return _single(load_scenarios(path), str(path))


def load_scenario_text(text: str, name: str = "<string>", base: Path | None = None) -> Scenario:
    """``load_scenarios_text`` for text that makes one scenario."""
    return _single(load_scenarios_text(text, name, base), name)


def discover(paths: Sequence[Path]) -> list[Path]:
    """The scenario files at ``paths``, in order: a file as given; a directory as every
    ``*.yaml``, ``*.yml``, ``*.transcript`` and ``*.chat`` under it, sorted, except files whose
    name starts with ``_`` (files that scenarios include). Each file once."""
    found: dict[Path, None] = {}
    kinds = (*SUFFIXES, *REPLAY_SUFFIXES)
    for path in paths:
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                if file.suffix in kinds and not file.name.startswith("_") and file.is_file():
                    found.setdefault(file)
        else:
            found.setdefault(path)
    return list(found)


def _recording(path: Path, label: str) -> Scenario:
    """The conversation scenario of a ``.transcript`` or ``.chat`` file (``replay_files.py``)."""
    try:
        text = read_recording(path)
        if path.suffix == ".chat":
            activities, channel = parse_chat(text)
        else:
            activities, channel = parse_transcript(text)
        return recording_scenario(path, activities, channel, path.suffix.lstrip("."))
    except ReplayError as e:
        error = ScenarioFileError if e.unreadable else ScenarioError
        raise error(label, e.line, e.column, e.message) from None


def _single(scenarios: list[Scenario], label: str) -> Scenario:
    if len(scenarios) == 1:
        return scenarios[0]
    first = scenarios[0]
    message = f"the matrix makes {len(scenarios)} scenarios where one is expected (botemu test runs them all)"
    raise ScenarioError(label, first.line, None, message)


# --- Loading one file --------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """The problems of one matrix entry: ``early`` with its variables substituted, ``late``
    while building its scenario (which happens only when there are no early ones)."""

    early: list[Issue] = field(default_factory=list)
    late: list[Issue] = field(default_factory=list)
    built: bool = False


@dataclass(slots=True, kw_only=True)
class _Load(FileSet):
    """The loading of one scenario file (or text): one scenario per matrix entry."""

    text: str
    label: str
    path: Path | None
    base: Path | None

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

    def _main(self) -> Source:
        try:
            empty = "empty file: expected a scenario with the keys name and caller (or messaging, or probe)"
            reader, data = parse(self.text, empty)
        except YamlError as e:
            raise ScenarioError(self.label, e.line, e.column, e.message) from None
        resolved = self.path.resolve() if self.path is not None else None
        main = Source(self.label, self.base, reader, data, 0, resolved)
        self.issues += validate(main, data, validator())
        return main

    def _check_references(self, source: Source, skip: Collection[DataPath]) -> None:
        self.issues += reference_issues(source, self.known, skip)

    def _instance(
        self,
        main: Source,
        doc: dict[str, Any],
        variables: dict[str, str],
        entry: dict[str, str] | None,
        index: int,
        checked: _Entry,
    ) -> Scenario | None:
        values = {**variables, **(entry or {})}
        data = self._substituted(main, doc, values, entry, index, checked)
        if data is None:
            return None
        checked.built = True
        declared = list(data.get("include", ()))
        site = Site(self, main, values, checked.late, declared=declared)
        if main.resolved is not None:
            site.chain = ((main.resolved, main.label),)
        for number, file in enumerate(declared):
            self.fragment(site, ("include", number), file)
        try:
            built = build_parts(data, site)
        except Abort as e:  # too many steps, or includes that substitute too much
            checked.late.append(e.issue)
            return None
        return self._scenario(main, data, built, entry, index)

    def _substituted(
        self,
        main: Source,
        doc: dict[str, Any],
        values: dict[str, str],
        entry: dict[str, str] | None,
        index: int,
        checked: _Entry,
    ) -> dict[str, Any] | None:
        """The scenario of one matrix entry (``entry``; None: no matrix) with its variables
        substituted, and checked; None when it has problems (in ``checked.early``)."""
        try:  # first: what it may make is bounded, and checking a matrix entry costs as much
            data = cast(dict[str, Any], substitute(doc, values, _NOT_SUBSTITUTED, (), self.budget))
        except TooLarge as e:
            at: DataPath = ("matrix", index) if entry is not None else ("variables",)
            checked.early.append(main.issue(Problem(at, str(e), at_key=entry is None)))
            return None
        used = list(references(doc, _NOT_SUBSTITUTED))
        checked.early += unset_issues(main, used, values)
        if data != doc:  # the matrix is checked as written, once: each entry checks one of it
            shown = {**data, "matrix": data["matrix"][:1]} if entry is not None else data
            checked.early += validate(main, shown, validator())
        return None if checked.early else data

    def _scenario(
        self,
        main: Source,
        data: dict[str, Any],
        parts: Parts,
        entry: dict[str, str] | None,
        index: int,
    ) -> Scenario:
        if entry is None:
            line = main.reader.position(("name",), at_key=True)[0]
        else:
            line = main.reader.position(("matrix", index), at_key=False)[0]
        return Scenario(
            name=data["name"],
            description=data.get("description"),
            tags=tuple(data.get("tags", ())),
            channel=data.get("channel"),
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

    def _check_ids(self, main: Source, scenarios: list[Scenario]) -> None:
        first: dict[str, int] = {}
        for index, scenario in enumerate(scenarios):
            if scenario.id in first:
                message = f"this entry gives the same test id as entry {first[scenario.id] + 1}: {scenario.id}"
                self.issues.append(main.issue(Problem(("matrix", index), message)))
            first.setdefault(scenario.id, index)

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
        kept: dict[tuple[object, ...], Issue] = {}
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
