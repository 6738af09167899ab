"""examples/skill/skill.py with one promise of its manifest broken: ``botemu manifest check`` must
fail it on exactly that promise.

``make_broken_skill(settings, flaw)`` builds the skill's aiohttp app with one flaw (``FLAWS``):

- ``temperature-as-text`` (the default): the ``getWeather`` invoke answers ``temperature`` as a
  string (``"21.5 °C"``), where the manifest's ``resultValue`` (``weatherReport``) says number ->
  ``SKILL-INVOKE-RESULT`` at ``activities/getWeather/resultValue: $.temperature``, nothing else;
- ``undeclared-trace``: besides its reply to a message, it sends a ``trace`` activity, which
  ``activitiesSent`` does not declare -> ``SKILL-SENT-DECLARED`` at ``activities/message``.

Everything else (token validation, replies through the connector) is the example skill's.

Runnable for manual work, with the settings of ``botemu serve`` in the environment:
``python tests/bots/broken_skill.py [FLAW] --port 3980``.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]
FLAWS = ("temperature-as-text", "undeclared-trace")


def _load_skill() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "botemu_example_skill", ROOT / "examples" / "skill" / "skill.py"
    )
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while being built
        spec.loader.exec_module(module)
    return module


skill = _load_skill()


class TemperatureAsText(skill.Skill):  # type: ignore[misc, name-defined]
    def weather(self, city: str) -> dict[str, Any]:
        report: dict[str, Any] = super().weather(city)
        report["temperature"] = f"{report['temperature']} °C"
        return report


class UndeclaredTrace(skill.Skill):  # type: ignore[misc, name-defined]
    def handle(self, activity: Mapping[str, Any]) -> Any:
        answer = super().handle(activity)
        if activity.get("type") != "message":
            return answer
        trace = {**skill.reply(activity, ""), "type": "trace", "name": "debug",
                 "label": "skill internals", "value": {"handled": True}}  # fmt: skip
        del trace["text"]
        return skill.Answer(answer.status, answer.body, (*answer.sends, trace))


BEHAVIOURS = {"temperature-as-text": TemperatureAsText, "undeclared-trace": UndeclaredTrace}


def make_broken_skill(settings: Any, flaw: str = "temperature-as-text") -> web.Application:
    """The example skill's app with ``flaw`` (one of ``FLAWS``)."""
    app: web.Application = skill.make_app(settings, BEHAVIOURS[flaw]())
    return app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The example skill with one flaw.")
    parser.add_argument("flaw", nargs="?", choices=FLAWS, default=FLAWS[0])
    args, rest = parser.parse_known_args(argv)
    settings, host, port = skill.parse_command_line(rest, os.environ)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    web.run_app(make_broken_skill(settings, args.flaw), host=host, port=port, print=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
