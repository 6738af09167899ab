"""``Botemu``: what a test gets from the ``botemu`` fixture, the session's emulator reset, with
``call`` (a calling bot), ``chat`` (a messaging bot, through botemu's connector) and
``run_scenario``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emulator.config import BotRegistration, Placeholders, anonymous_app_id
from emulator.jsonutil import JSON, JSONObject
from emulator.testkit.results import CallResult, Message, from_user, message_of, read_call
from emulator.testkit.server import BotemuServer

if TYPE_CHECKING:
    from emulator.calling.caller import CallerScript
    from emulator.scenario.model import Scenario
    from emulator.scenario.reports import ScenarioResultLike, SkippedResult
    from emulator.transcripts.store import TranscriptStore


class Botemu:
    """What a test gets from the ``botemu`` fixture: the session's emulator, reset."""

    def __init__(self, server: BotemuServer) -> None:
        self.server = server
        self._conversations: dict[str, str] = {}
        """app id -> the conversation this test is having with that bot."""

    @property
    def url(self) -> str:
        """The emulator's base URL (``serviceUrl`` of every activity it sends)."""
        return self.server.url

    @property
    def placeholders(self) -> Placeholders:
        return self.server.placeholders

    @property
    def env(self) -> dict[str, str]:
        return self.server.env

    @property
    def store(self) -> TranscriptStore:
        return self.server.store

    async def call(
        self,
        bot_url: str,
        caller: str | Sequence[str | dict[str, Any]] | CallerScript = (),
        *,
        seed: int | None = None,
        **options: Any,
    ) -> CallResult:
        """Place one call to the calling bot at ``bot_url`` and run it to its end (in virtual
        time: a 30-second menu timeout takes no time).

        ``caller``: the caller's steps, inline (``"press 1; hangup"``), as a list of inline
        steps (``["press 1", "hangup"]``) or of scenario-file items (``[{"press": "1"}]``), or a
        ``CallerScript``. ``seed`` reproduces the caller's identity and audio. ``options`` are
        fields of ``emulator.calling.session.CallSettings``: ``app_id``, ``max_workflows``,
        ``ssl_context`` (for an https bot), ``retry``, ``allow_http``, ``pace``, ``wire``, ...

        Every request carries a Bearer token signed by this emulator for ``app_id`` (default: the
        bot registered with ``bot_url`` as its calling endpoint, or the only registered bot); a
        bot checks it against ``botemu.placeholders.openid_metadata_url``. ``no_token=True``
        sends none."""
        from emulator.calling.session import CallSettings, place_call

        no_token = bool(options.pop("no_token", False))
        known = {f.name for f in fields(CallSettings)} - {"bot_url", "caller", "seed"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(
                f"unknown call option {unknown[0]!r} (known: no_token, {', '.join(sorted(known))})"
            )
        options.setdefault("platform_url", f"{self.url}/_botemu")
        if not no_token and options.get("tokens") is None:
            app_id = options.get("app_id") or self.server.calling_app_id(bot_url)
            if app_id is not None:
                options["app_id"] = app_id
                options["tokens"] = self.server.calling_tokens(app_id)
        settings = CallSettings(bot_url=bot_url, caller=caller_script(caller), seed=seed, **options)
        report = await place_call(settings, self.store)
        return read_call(self.store, report.call_id, report.chain_id, report.end_reason,
                         report.findings, report.workflows, report.vtime)  # fmt: skip

    async def chat(
        self,
        messaging_bot_url: str,
        text: str,
        *,
        app_id: str | None = None,
        app_password: str | None = None,
        wait: float = 5.0,
        settle: float = 0.2,
        new_conversation: bool = False,
    ) -> list[Message]:
        """Send ``text`` as the user to the messaging bot at ``messaging_bot_url`` through
        botemu's connector; the activities the bot sent back.

        The first message to a bot opens a conversation (with ``conversationUpdate``, so a
        welcome comes back too); later ones in the same test continue it, unless
        ``new_conversation``. With ``app_id`` and ``app_password`` the bot is registered with
        the emulator first (its replies authenticate with them); without, the bot registered
        at that endpoint (``botemu_config``), or else an anonymous bot (an SDK template with no
        credentials: no token either way, and a CONN-ANONYMOUS-BOT warning). Replies are
        collected until ``settle`` seconds pass with none new, or ``wait`` seconds in all."""
        import aiohttp

        app_id = self._registration(messaging_bot_url, app_id, app_password)
        conversation = None if new_conversation else self._conversations.get(app_id)
        body: dict[str, JSON] = {"app_id": app_id, "text": text}
        if conversation is not None:
            body["conversation_id"] = conversation
        async with aiohttp.ClientSession(base_url=self.url) as http:
            seen = 0
            if conversation is not None:
                seen = len(await self._activities(http, conversation, 0))
            headers = self.server.control_headers()
            async with http.post("/_botemu/chat", json=body, headers=headers) as response:
                if response.status >= 400:
                    raise RuntimeError(f"botemu refused the message: HTTP {response.status}: "
                                       f"{(await response.text())[:300]}")  # fmt: skip
                sent = await response.json()
            conversation = str(sent["conversation_id"])
            self._conversations[app_id] = conversation
            return await self._replies(http, conversation, seen, wait, settle)

    def _registration(self, url: str, app_id: str | None, app_password: str | None) -> str:
        if app_id is not None:
            known = self.server.config.bot(app_id)
            if known is None or app_password is not None or known.endpoint != url:
                password = app_password if app_password is not None else (
                    known.app_password if known else "")  # fmt: skip
                name = known.name if known else None
                self.server.register(BotRegistration(app_id, password, url, name=name))
            return app_id
        if app_password is not None:
            raise ValueError("app_password needs app_id")
        bots = [*self.server.config.live.values(), *self.server.config.bots]
        for bot in bots:
            if bot.endpoint == url:
                return bot.app_id
        # A bot with no credentials, as an SDK template starts: registered as an anonymous bot.
        number = sum(b.anonymous for b in bots) + 1
        anonymous = BotRegistration(anonymous_app_id(number), "", url, anonymous=True)
        self.server.register(anonymous)
        return anonymous.app_id

    async def _activities(self, http: Any, conversation: str, after: int) -> list[JSONObject]:
        async with http.get(
            f"/_botemu/conversations/{conversation}/activities", params={"after": str(after)}
        ) as response:
            response.raise_for_status()
            page = await response.json()
        activities: list[JSONObject] = page["activities"]
        return activities

    async def _replies(
        self, http: Any, conversation: str, seen: int, wait: float, settle: float
    ) -> list[Message]:
        deadline = time.monotonic() + wait
        quiet_until: float | None = None
        messages: list[Message] = []
        index = seen
        while True:
            page = await self._activities(http, conversation, index)
            index += len(page)
            new = [message_of(a, conversation) for a in page if not from_user(a)]
            messages += new
            now = time.monotonic()
            if new:
                quiet_until = now + settle
            if now >= deadline or (quiet_until is not None and now >= quiet_until):
                return messages
            await asyncio.sleep(0.02)

    async def run_scenario(
        self,
        path: str | Path,
        *,
        bot: str | None = None,
        messaging_bot: str | None = None,
        app_id: str | None = None,
        app_password: str | None = None,
        seed: int = 0,
        certs: Path | None = None,
        ca: Path | None = None,
        max_workflows: int | None = None,
        timeout: float | None = None,
    ) -> list[ScenarioResultLike]:
        """Run a scenario file (or every scenario file under a directory), each matrix entry
        as its own scenario, against ``bot`` (calls) or ``messaging_bot`` (conversations, through
        this emulator); one result per scenario. Raises ``ScenarioError`` for an invalid file.
        A scenario whose bot was not given (a call or ``probe: auth-calling`` without ``bot``,
        a conversation or ``probe: auth`` without ``messaging_bot``) is not run: its result is
        a ``SkippedResult`` (``skipped`` the reason, ``passed`` True); when no scenario has its
        bot, ``ConfigError`` is raised. ``explain(results)`` says what failed."""
        from emulator.runner.suite import TargetSettings, default_backend

        backend = default_backend()
        scenarios = backend.collect([Path(path)])
        skips = _skips(path, scenarios, bot is not None, messaging_bot is not None)
        if messaging_bot is not None and app_id is not None:
            self._registration(messaging_bot, app_id, app_password)
        target = TargetSettings(bot=bot, messaging_bot=messaging_bot, app_id=app_id,
                                app_password=app_password, certs=certs, ca=ca,
                                emulator=self.url,
                                control_certs=self.server.config.certs_dir)  # fmt: skip
        async with backend.open_runner(
            target, self.store, seed=seed, max_workflows=max_workflows, timeout=timeout
        ) as runner:
            return [skips.get(id(s)) or await runner.run(s) for s in scenarios]

    @staticmethod
    def explain(results: Sequence[ScenarioResultLike]) -> str:
        """What failed in ``results``, as ``botemu test`` prints it (for an assert message)."""
        from emulator.runner.suite import rule_lookup
        from emulator.scenario.reports import render_failures

        return render_failures(results, rule_lookup())


_PLUGIN_SKIPS = {
    "calling": "needs a calling bot: pass bot=URL to run_scenario",
    "messaging": "needs a messaging bot: pass messaging_bot=URL to run_scenario",
}
"""Why ``run_scenario`` skips a scenario whose bot was not given."""


def _skips(
    path: str | Path, scenarios: Sequence[Scenario], calls: bool, conversations: bool
) -> dict[int, SkippedResult]:
    """The results of the scenarios whose bot was not given (``calls``: a calling bot was,
    ``conversations``: a messaging bot), by ``id`` of the scenario; ``ConfigError`` when no
    scenario can run."""
    from emulator.runner.suite import ConfigError, split_by_target

    runnable, skipped = split_by_target(calls, conversations, scenarios, _PLUGIN_SKIPS)
    if not runnable:
        reasons = sorted({s.skipped for s in skipped}) or ["no scenario"]
        raise ConfigError(f"{path}: nothing to run: every scenario " + "; ".join(reasons))
    return {id(s.scenario): s for s in skipped}


def caller_script(caller: str | Sequence[str | dict[str, Any]] | CallerScript) -> CallerScript:
    """A ``CallerScript`` from the inline form, a list of inline steps or scenario-file items,
    or a script."""
    from emulator.calling.caller import CallerScript, Step

    if isinstance(caller, CallerScript):
        return caller
    if isinstance(caller, str):
        return CallerScript.from_inline(caller)
    steps: list[Step] = []
    for i, item in enumerate(caller):
        script = (
            CallerScript.from_inline(item)
            if isinstance(item, str)
            else CallerScript.from_data([item], f"caller[{i}]")
        )
        steps += script.steps
    return CallerScript(tuple(steps))
