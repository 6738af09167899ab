"""``botemu scenario``: check scenario files and print their JSON Schema.

``register(subparsers)`` adds the command to a parser built elsewhere (``emulator/cli.py``).
Handlers take ``(args, out)`` and return the exit code: 0 every file is valid, 1 at least one is
not, 2 a file cannot be read (missing, a directory, not UTF-8, too large) or a directory holds no
scenario files. A valid file with a matrix is reported once per entry: ``file[lang=en]: ok``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from emulator.scenario.loader import ScenarioError
    from emulator.scenario.model import Scenario

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
__all__ = ["check_handler", "register", "schema_handler"]

Result = tuple[str, list["ScenarioError"], list["Scenario"]]
"""A file checked: its name, its errors, and its scenarios (one per matrix entry)."""


def register(subparsers: Any) -> None:
    """Add ``scenario check FILE...`` and ``scenario schema`` to ``subparsers`` (the object
    ``ArgumentParser.add_subparsers()`` returns)."""
    scenario = subparsers.add_parser(
        "scenario",
        help="check scenario files, print the scenario JSON Schema",
        description="Work with scenario files (docs/scenarios.md).",
    )
    scenario.set_defaults(handler=_help(scenario))
    sub = scenario.add_subparsers(dest="scenario_command", metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="validate scenario files",
        description="Validate scenario files: each error as file:line:col: message. "
        "Exit 0: all valid; 1: at least one invalid; 2: a file cannot be read.",
    )
    check.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="a scenario file, a directory (every *.yaml and *.yml under it, except _*.yaml "
        "files, which scenarios include), or - for stdin",
    )
    check.add_argument("--json", action="store_true", help="print the results as JSON")
    check.set_defaults(handler=check_handler)

    show = sub.add_parser(
        "schema",
        help="print the scenario JSON Schema",
        description="Print the JSON Schema of scenario files (draft-07), for editors and tools.",
    )
    show.set_defaults(handler=schema_handler)


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace, TextIO], int]:
    """The handler of ``botemu scenario`` alone: its help on stderr, exit 2."""

    def handler(args: argparse.Namespace, out: TextIO) -> int:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    return handler


def check_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.scenario.loader import ScenarioFileError

    results: list[Result] = []
    for name in args.files:
        files = _expand(name)
        if not files:
            empty = ScenarioFileError(name, None, None, "no scenario files (*.yaml, *.yml) here")
            results.append((name, [empty], []))
        for file in files:
            results.append((file, *_check(file)))
    code = _exit_code(results)
    if args.json:
        json.dump([_json(result) for result in results], out, indent=2)
        out.write("\n")
        return code
    for result in results:
        _print(result, out)
    return code


def _exit_code(results: list[Result]) -> int:
    """2 when a file cannot be read, else 1 when one is invalid, else 0."""
    from emulator.scenario.loader import ScenarioFileError

    code = EXIT_OK
    for _, errors, _ in results:
        if any(isinstance(e, ScenarioFileError) for e in errors):
            code = EXIT_USAGE
        elif errors and code == EXIT_OK:
            code = EXIT_FAILED
    return code


def _json(result: Result) -> dict[str, object]:
    from emulator.scenario.loader import ScenarioFileError

    file, errors, scenarios = result
    return {
        "file": file,
        "valid": not errors,
        "readable": not any(isinstance(e, ScenarioFileError) for e in errors),
        "errors": [
            {"file": e.file, "line": e.line, "column": e.column, "message": e.message}
            for e in errors
        ],
        "scenarios": [
            {"id": s.id, "name": s.name, "entry": _entry(s), "line": s.line} for s in scenarios
        ],
    }


def _print(result: Result, out: TextIO) -> None:
    """A line per scenario that is valid, then one per error (on stderr when unreadable)."""
    from emulator.scenario.loader import ScenarioFileError

    file, errors, scenarios = result
    for scenario in scenarios:
        entry = _entry(scenario)
        out.write(f"{file}[{entry}]: ok\n" if entry is not None else f"{file}: ok\n")
    for error in errors:
        if isinstance(error, ScenarioFileError):
            sys.stderr.write(f"botemu scenario check: {error}\n")
        else:
            out.write(f"{error}\n")


def schema_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.scenario.loader import schema

    json.dump(schema(), out, indent=2)
    out.write("\n")
    return EXIT_OK


def _expand(name: str) -> list[str]:
    """A file as given; a directory as the scenario files under it (``loader.discover``)."""
    from emulator.scenario.loader import discover

    if name == "-":
        return [name]
    return [str(p) for p in discover([Path(name)])]


def _check(name: str) -> tuple[list[ScenarioError], list[Scenario]]:
    from emulator.scenario.loader import ScenarioError, load_scenarios, load_scenarios_text

    try:
        if name == "-":
            scenarios = load_scenarios_text(_stdin(), "<stdin>", base=Path.cwd())
        else:
            scenarios = load_scenarios(Path(name))
    except ScenarioError as e:
        return list(e.errors), []
    return [], scenarios


def _entry(scenario: Scenario) -> str | None:
    """The matrix entry of a scenario as its test id shows it (``lang=en``), or None."""
    if not scenario.variables:
        return None
    return scenario.id.removeprefix(scenario.name)[1:-1]


def _stdin() -> str:
    from emulator.inputs import InputError, read_stdin
    from emulator.scenario.loader import MAX_BYTES, ScenarioFileError

    try:
        data = read_stdin(MAX_BYTES)
    except InputError as e:
        raise ScenarioFileError("<stdin>", None, None, e.message) from None
    if len(data) > MAX_BYTES:
        raise ScenarioFileError("<stdin>", None, None, f"larger than {MAX_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ScenarioFileError("<stdin>", None, None, f"not UTF-8 text (byte {e.start})") from e
