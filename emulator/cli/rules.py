"""``botemu rules``: every rule botemu checks (``emulator.rulebook``), as a table, JSON, or the
text of ``docs/rules.md``."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from emulator.cli.common import EXIT_OK


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    rules = subparsers.add_parser(
        "rules",
        help="list every protocol rule botemu checks",
        description="List every rule with its id, severity and source.",
    )
    form = rules.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the rules as JSON")
    form.add_argument("--markdown", action="store_true", help="print docs/rules.md")
    rules.set_defaults(handler=rules_handler)


def rules_handler(args: argparse.Namespace, out: TextIO) -> int:
    from emulator.rulebook import REGISTRIES, rules_markdown

    if args.markdown:
        out.write(rules_markdown())
    elif args.json:
        items = [
            {
                "id": r.id,
                "area": reg.area,
                "severity": r.severity.value,
                "source": r.source,
                "summary": r.summary,
            }
            for reg in REGISTRIES
            for r in reg
        ]
        json.dump(items, out, indent=2)
        out.write("\n")
    else:
        for reg in REGISTRIES:
            for r in reg:
                out.write(f"{r.id:30} {r.severity.value:8} {r.summary}\n")
    return EXIT_OK
