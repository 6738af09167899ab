"""Direct Line beside a running botemu: its service made over the Emulator's connector, sender
and transcript store, its routes mounted, and what ``GET /_botemu/config`` says of it."""

from __future__ import annotations

from aiohttp import web

from emulator.channels.directline import (
    DIRECTLINE,
    PREFIX,
    DirectLine,
    Grants,
    Limits,
    directline_routes,
)
from emulator.config import BotRegistration
from emulator.connector.sender import BotAnswer
from emulator.jsonutil import JSONObject
from emulator.service.state import EMULATOR


def setup_directline(app: web.Application, limits: Limits | None = None) -> DirectLine:
    """Mount Direct Line on ``app`` (whose ``EMULATOR`` is set)."""
    emulator = app[EMULATOR]

    async def deliver(
        bot: BotRegistration, conversation_id: str, activity: JSONObject
    ) -> BotAnswer:
        if emulator.sender is None:
            return BotAnswer(None, failure="botemu is stopping")
        return await emulator.sender.send(bot, conversation_id, activity)

    service = DirectLine(
        emulator.connector,
        Grants(emulator.config.certs_dir, clock=emulator.clock),
        bots=lambda: emulator.config.bots,
        deliver=deliver,
        record=emulator.record,
        limits=limits or Limits(),
        clock=emulator.clock,
    )
    app[DIRECTLINE] = service
    app.add_routes(directline_routes())
    return service


def directline_document(app: web.Application, base_url: str, *, secrets: bool) -> JSONObject:
    """``GET /_botemu/config``'s ``directline``: its domain, and (to a caller with the control
    secret only: never a page) each bot's secret."""
    document: JSONObject = {"domain": f"{base_url}{PREFIX}"}
    if secrets:
        document["secrets"] = dict(app[DIRECTLINE].secrets())
    return document
