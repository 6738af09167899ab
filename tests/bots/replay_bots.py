"""Bots for the replay tests: the reference IVR bot (``examples/ivr_bot.py``, loaded by path and
left as it is) with one thing changed, so that a scenario made from a call to the reference bot
can be run against a bot that behaves differently.

``make_app(kind)`` builds the aiohttp app; ``python -m tests.bots.replay_bots KIND --port N``
serves it. Kinds:

- ``reference``: the reference IVR bot itself;
- ``greeting``: another welcome prompt ("Welcome to the new botemu line.");
- ``swapped``: sales on 2 and support on 1 in the menu (the prompt says so);
- ``volatile``: a welcome with a number, a date and a time that change with every call
  ("Welcome, caller 10. Today is 2026-11-11 at 09:01."), so that only a loose replay passes.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.support import EXAMPLES, load_module

ivr = load_module(EXAMPLES / "ivr_bot.py", "ivr_bot_for_replay")

KINDS = ("reference", "greeting", "swapped", "volatile")
NEW_GREETING = "Welcome to the new botemu line."


def _set_welcome(workflow: dict[str, Any], text: str) -> dict[str, Any]:
    workflow["actions"][1]["prompts"][0]["value"] = text
    return workflow


class GreetingFlow(ivr.IvrFlow):  # type: ignore[misc, name-defined]
    def welcome(self, callback: str) -> dict[str, Any]:
        return _set_welcome(super().welcome(callback), NEW_GREETING)


class SwappedFlow(ivr.IvrFlow):  # type: ignore[misc, name-defined]
    def _menu(self, at: Any, *before: Any) -> dict[str, Any]:
        menu: dict[str, Any] = super()._menu(at, *before)
        choices = menu["choices"]
        choices[0]["dtmfVariation"], choices[1]["dtmfVariation"] = "2", "1"
        prompts = menu["playPrompt"]["prompts"]
        prompts[-1]["value"] = (
            "For support, press 1 or say support. For sales, press 2 or say sales. "
            "To leave a message, press 3 or say voicemail."
        )
        return menu


class VolatileFlow(ivr.IvrFlow):  # type: ignore[misc, name-defined]
    def __init__(self) -> None:
        super().__init__()
        self.count = itertools.count(1)

    def welcome(self, callback: str) -> dict[str, Any]:
        n = next(self.count)
        text = f"Welcome, caller {9 + n}. Today is 2026-11-{10 + n % 18:02d} at 09:{n % 60:02d}."
        return _set_welcome(super().welcome(callback), text)


def make_app(kind: str, voicemail_dir: Path) -> web.Application:
    flows = {"reference": ivr.IvrFlow, "greeting": GreetingFlow, "swapped": SwappedFlow,
             "volatile": VolatileFlow}  # fmt: skip
    app: web.Application = ivr.make_app(voicemail_dir=voicemail_dir, flow=flows[kind]())
    return app


def main() -> None:
    """``python -m tests.bots.replay_bots KIND --port N`` (in the repository): serve one bot on
    127.0.0.1."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = make_app(args.kind, Path(tempfile.mkdtemp(prefix="replay-bot-")))
    web.run_app(app, host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
