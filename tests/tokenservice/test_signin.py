"""Sign-in through botemu's user token service (emulator/tokenservice, emulator/service/signin.py):
a bot that signs users in as OAuthPrompt does, the sign-in page, the headless sign-in of
``botemu chat --sign-in-as``, a refusal, a wrong magic code, sign-out, single sign-on."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from emulator.cli.options import service_config
from emulator.config import BotRegistration, OAuthSettings, ServiceConfig, anonymous_app_id
from emulator.connector.sender import TokenKind
from emulator.service import EMULATOR, make_app
from emulator.tokenservice import TOKENSERVICE, read_state
from emulator.transcripts.store import TranscriptStore
from tests.bots.oauth_bot import CONNECTION, make_bot
from tests.support import free_port

BOT = anonymous_app_id(1)


@dataclass
class Running:
    client: TestClient[web.Request, web.Application]
    app: web.Application

    async def say(self, text: str, conversation: str | None = None, *,
                  sign_in_as: str | None = None) -> str:  # fmt: skip
        emulator = self.app[EMULATOR]
        conversation_id, _, answer = await emulator.chat(
            BOT, text, conversation, TokenKind.CONNECTOR, sign_in_as=sign_in_as)  # fmt: skip
        assert answer.status == 200, answer
        return conversation_id

    def texts(self, conversation: str) -> list[str]:
        activities = self.app[EMULATOR].connector.conversation(conversation).activities
        return [str(a.get("text")) for a in activities
                if a["from"].get("role") == "bot" and a.get("text")]  # fmt: skip

    async def until(self, conversation: str, text: str) -> list[str]:
        for _ in range(200):
            found = self.texts(conversation)
            if text in found:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"{text!r} never came: {self.texts(conversation)}")

    def card(self, conversation: str) -> dict[str, Any]:
        activities = self.app[EMULATOR].connector.conversation(conversation).activities
        for activity in activities:
            for attachment in activity.get("attachments") or []:
                if attachment["contentType"].endswith("card.oauth"):
                    content: dict[str, Any] = attachment["content"]
                    return content
        raise AssertionError("no OAuth card")


OTHER = BotRegistration("other-bot", "other-s3cret", "http://127.0.0.1:1/api/messages")


async def running_with(
    tmp_path: Path, connections: tuple[OAuthSettings, ...] = (), **bot: Any
) -> AsyncIterator[Running]:
    port, bot_port = free_port(), free_port()
    config = ServiceConfig(port=port, certs_dir=tmp_path / "certs", bots=(
        BotRegistration(BOT, "", f"http://127.0.0.1:{bot_port}/api/messages", anonymous=True),
        OTHER), oauth_connections=connections)  # fmt: skip
    store = TranscriptStore(tmp_path / "t.db")
    app = make_app(config, store)
    client = TestClient(TestServer(app, host="127.0.0.1", port=port))
    await client.start_server()
    runner = web.AppRunner(make_bot(**bot))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", bot_port).start()
    try:
        yield Running(client, app)
    finally:
        await runner.cleanup()
        await client.close()
        store.close()


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    async for r in running_with(tmp_path):
        yield r


async def test_headless_sign_in_as_a_test_user(running: Running) -> None:
    conversation = await running.say("login", sign_in_as="ada")
    found = await running.until(conversation, "signed in as ada")
    assert "signed in as ada" in found
    await running.say("who", conversation)
    await running.until(conversation, "ada")
    await running.say("logout", conversation)
    await running.until(conversation, "signed out")
    await running.say("who", conversation)
    await running.until(conversation, "nobody")


async def test_the_sign_in_page_consents_and_the_channel_gives_the_code(
    running: Running,
) -> None:
    conversation = await running.say("login")
    link = running.card(conversation)["buttons"][0]["value"]
    path = link.split(str(running.client.port), 1)[1]
    page = await running.client.get(path)
    body = await page.text()
    assert page.status == 200 and "Consent" in body and page.headers["X-Frame-Options"] == "DENY"
    service = running.app[TOKENSERVICE]
    user = service.connection(CONNECTION).users[0]
    assert user.name in body
    state = read_state(path.split("state=", 1)[1])
    consent = await running.client.post("/_signin", data={"state": state.raw, "user": user.id,
                                                          "answer": "consent"})  # fmt: skip
    assert consent.status == 200 and "magic code" in await consent.text()
    await running.until(conversation, f"signed in as {user.name}")


async def test_a_page_of_another_origin_cannot_consent(running: Running) -> None:
    conversation = await running.say("login")
    link = running.card(conversation)["buttons"][0]["value"]
    raw = link.split("state=", 1)[1]
    refused = await running.client.post("/_signin", data={"state": raw, "user": "eve",
                                                          "answer": "consent"},
                                        headers={"Origin": "https://evil.example"})  # fmt: skip
    assert refused.status == 403
    assert running.app[TOKENSERVICE].tokens.pending[read_state(raw).raw].code is None


async def test_a_refused_sign_in_gives_no_token(running: Running) -> None:
    conversation = await running.say("login", sign_in_as="refuse:")
    await asyncio.sleep(0.3)
    assert not any(t.startswith("signed in") for t in running.texts(conversation))
    await running.say("who", conversation)
    await running.until(conversation, "nobody")


async def test_a_wrong_magic_code_is_refused_and_the_right_one_taken(running: Running) -> None:
    conversation = await running.say("login")
    link = running.card(conversation)["buttons"][0]["value"]
    raw = link.split("state=", 1)[1]
    service = running.app[TOKENSERVICE]
    pending = service.tokens.begin(read_state(raw))
    code = service.consent(pending, "grace")  # the page shows it; the person types it
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    await running.say(wrong, conversation)
    await running.until(conversation, "try again")
    await running.say(code, conversation)
    await running.until(conversation, "signed in as grace")


async def test_a_card_with_no_link_is_signed_in_as_a_channel_does(tmp_path: Path) -> None:
    async for r in running_with(tmp_path, no_link=True):
        conversation = await r.say("login", sign_in_as="linus")
        assert "value" not in r.card(conversation)["buttons"][0]
        await r.until(conversation, "signed in as linus")


async def test_the_token_service_routes_and_their_errors(running: Running) -> None:
    conversation = await running.say("login", sign_in_as="ada")
    await running.until(conversation, "signed in as ada")
    query = {"userId": "user-1", "connectionName": CONNECTION, "channelId": "webchat"}
    status = await running.client.get("/api/usertoken/GetTokenStatus",
                                      params={"userId": "user-1", "channelId": "webchat"})  # fmt: skip
    statuses = await status.json()
    assert {"connectionName": CONNECTION, "hasToken": True}.items() <= next(
        s for s in statuses if s["connectionName"] == CONNECTION
    ).items()
    aad = await running.client.post("/api/usertoken/GetAadTokens", params=query,
                                    json={"resourceUrls": ["https://graph.example"]})  # fmt: skip
    assert "https://graph.example" in await aad.json()
    missing = await running.client.get("/api/usertoken/GetToken", params={"userId": "x"})
    assert missing.status == 400 and (await missing.json())["error"]["code"] == "BadArgument"
    bad_state = await running.client.get("/api/botsignin/GetSignInResource", params={"state": "!!"})
    assert bad_state.status == 400
    lower = await running.client.get(
        "/api/botsignin/getsigninurl",
        params={
            "state": base64.b64encode(json.dumps({"connectionName": CONNECTION}).encode()).decode()
        },
    )
    assert lower.status == 200 and "/_signin?state=" in await lower.json()


async def test_single_sign_on_exchanges_a_token_botemu_signed_and_refuses_others(
    running: Running,
) -> None:
    service = running.app[TOKENSERVICE]
    connection = service.connection(CONNECTION)
    sso = service.sso_token(connection.users[1], connection)
    query = {"userId": "user-1", "connectionName": CONNECTION, "channelId": "msteams"}
    exchanged = await running.client.post("/api/usertoken/exchange", params=query,
                                          json={"uri": connection.exchange_uri, "token": sso})  # fmt: skip
    assert exchanged.status == 200
    assert (await exchanged.json())["connectionName"] == CONNECTION
    refused = await running.client.post("/api/usertoken/exchange", params=query,
                                        json={"uri": connection.exchange_uri, "token": "x.y.z"})  # fmt: skip
    assert refused.status == 404  # as an exchange with no token (an empty TokenResponse)


async def test_a_configured_connection_has_its_users_scopes_and_lifetime(tmp_path: Path) -> None:
    graph = OAuthSettings(CONNECTION, ("Mail.Read",), 60, (("ada", "Ada Lovelace"),))
    async for r in running_with(tmp_path, (graph,)):
        conversation = await r.say("login", sign_in_as="ada")
        await r.until(conversation, "signed in as Ada Lovelace")
        connection = r.app[TOKENSERVICE].connection(CONNECTION)
        issued = r.app[TOKENSERVICE].tokens.current("user-1", CONNECTION, "webchat")
        assert issued is not None and connection.scopes == ("Mail.Read",)
        assert 0 < issued.expires - r.app[TOKENSERVICE].clock() <= 60


def test_connections_from_the_command_line_and_the_file(tmp_path: Path) -> None:
    import argparse

    from emulator.cli.options import service_options

    parser = argparse.ArgumentParser()
    service_options(parser)
    config_file = tmp_path / "botemu.yaml"
    config_file.write_text("oauth_connections:\n  - name: graph\n    scopes: [Mail.Read]\n"
                           "    users: [{id: ada, name: Ada}]\n  - github\n")  # fmt: skip
    args = parser.parse_args(["--config", str(config_file), "--oauth-connection", "jira"])
    found = service_config(args).oauth_connections
    assert [c.name for c in found] == ["graph", "github", "jira"]
    assert found[0].scopes == ("Mail.Read",) and found[0].users == (("ada", "Ada"),)
    config_file.write_text("oauth_connections:\n  - {name: x, lifetime: -1}\n")
    with pytest.raises(Exception, match="lifetime is seconds"):
        service_config(parser.parse_args(["--config", str(config_file)]))


def findings(running: Running, conversation: str) -> list[str]:
    store = running.app[EMULATOR].store
    return [str(e.payload.get("rule")) for e in store.events(conversation) if e.kind == "finding"]


async def test_an_oauth_card_with_no_connection_is_a_finding(tmp_path: Path) -> None:
    async for r in running_with(tmp_path, flaw="no_connection"):
        conversation = await r.say("login")
        r.card(conversation)
        assert "SIGNIN-NO-CONNECTION" in findings(r, conversation)
    async for r in running_with(tmp_path / "good"):  # a correct bot raises none
        conversation = await r.say("login", sign_in_as="ada")
        await r.until(conversation, "signed in as ada")
        assert not [f for f in findings(r, conversation) if f.startswith("SIGNIN-")]


async def test_a_bot_that_never_redeems_the_code_is_a_finding(tmp_path: Path) -> None:
    async for r in running_with(tmp_path, flaw="ignores_code"):
        r.app[TOKENSERVICE].code_wait = 0.3
        conversation = await r.say("login", sign_in_as="ada")
        for _ in range(100):
            if "SIGNIN-CODE-IGNORED" in findings(r, conversation):
                break
            await asyncio.sleep(0.05)
        assert "SIGNIN-CODE-IGNORED" in findings(r, conversation)


async def test_asking_about_another_bots_sign_in_is_refused(running: Running) -> None:
    """A bot with a token (here: one botemu issued to a registered bot) asks with a state that
    names another bot: 403 and SIGNIN-OTHER-APP in that conversation."""
    conversation = await running.say("login")
    link = running.card(conversation)["buttons"][0]["value"]
    raw = link.split("state=", 1)[1]
    state = json.loads(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    state["msAppId"] = BOT  # the anonymous bot's sign-in, asked about by another bot
    forged = base64.b64encode(json.dumps(state).encode()).decode()
    token, _ = running.app[EMULATOR].identity.token_for(OTHER.app_id)
    response = await running.client.get("/api/botsignin/GetSignInResource", params={
        "state": forged}, headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    assert response.status == 403
    assert "SIGNIN-OTHER-APP" in findings(running, conversation)


async def notes_until(emulator: Any, conversation: str, text: str) -> list[str]:
    """The conversation's notes once one says ``text`` (the note follows the bot's answer to
    the invoke, which may come after the bot's reply reached the connector); bounded."""
    notes: list[str] = []
    for _ in range(200):
        notes = [str(e.payload.get("summary")) for e in emulator.store.events(conversation)
                 if e.kind == "note"]  # fmt: skip
        if any(text in n for n in notes):
            break
        await asyncio.sleep(0.02)
    return notes


async def test_single_sign_on_on_msteams_needs_no_click(running: Running) -> None:
    emulator = running.app[EMULATOR]
    conversation, _, _ = await emulator.chat(BOT, "login", None, TokenKind.CONNECTOR,
                                             channel="msteams", sign_in_as="ada")  # fmt: skip
    await running.until(conversation, "signed in as ada")
    notes = await notes_until(emulator, conversation, "took the exchanged token")
    assert any("took the exchanged token" in n for n in notes), notes
    pending = running.app[TOKENSERVICE].tokens.pending
    assert all(p.code is None for p in pending.values())  # no magic code: no card clicked


async def test_a_refused_exchange_falls_back_to_the_card(tmp_path: Path) -> None:
    async for r in running_with(tmp_path, refuse_sso=True):
        emulator = r.app[EMULATOR]
        conversation, _, _ = await emulator.chat(BOT, "login", None, TokenKind.CONNECTOR,
                                                 channel="msteams", sign_in_as="grace")  # fmt: skip
        await r.until(conversation, "signed in as grace")
        notes = await notes_until(emulator, conversation, "refused the exchange")
        assert any("refused the exchange" in n for n in notes), notes


def _from_user(r: Running, conversation: str) -> list[dict[str, Any]]:
    activities = r.app[EMULATOR].connector.conversation(conversation).activities
    return [a for a in activities if a["from"].get("role") == "user"]


async def test_outside_teams_the_person_types_the_code_and_teams_sends_verify_state(
    tmp_path: Path,
) -> None:
    """As the platform's channels do: Web Chat shows the magic code and the person types it (a
    six-digit message; the SDKs' ActivityHandler answers verifyState with 501 outside Teams);
    Teams sends ``signin/verifyState``."""
    async for r in running_with(tmp_path, refuse_sso=True):
        conversation = await r.say("login", sign_in_as="ada")
        await r.until(conversation, "signed in as ada")
        sent = _from_user(r, conversation)
        assert [a["type"] for a in sent] == ["conversationUpdate", "message", "message"]
        assert str(sent[-1]["text"]).isdigit() and len(sent[-1]["text"]) == 6
        teams, _, _ = await r.app[EMULATOR].chat(BOT, "login", None, TokenKind.CONNECTOR,
                                                 channel="msteams", sign_in_as="grace")  # fmt: skip
        await r.until(teams, "signed in as grace")
        names = [a.get("name") for a in _from_user(r, teams) if a["type"] == "invoke"]
        assert names == ["signin/tokenExchange", "signin/verifyState"]
