"""pytest fixtures for bot developers: one botemu per test session, reset before every test.

Installed with botemu and registered through the ``pytest11`` entry point (plugin name
``botemu``), so a bot project's tests only ask for the fixture::

    async def test_menu(botemu, bot_url):
        call = await botemu.call(bot_url, caller=["press 1", "hangup"])
        assert call.prompts[0].text.startswith("Welcome")

Fixtures (docs/pytest-plugin.md):

=====================  ========  =============================================================
``botemu_config``      session   the ``ServiceConfig`` of the emulator (profile, bots, key
                                 directory); port 0 means a free port. Override it.
``botemu_store_path``  session   the transcript database (a temporary file). Override it.
``botemu_server``      session   the running emulator: a ``BotemuServer`` (``.url``, ``.config``,
                                 ``.placeholders``, ``.env``, ``.store``)
``botemu``             function  a ``Botemu`` on that server, reset first: ``call``, ``chat``,
                                 ``run_scenario``
=====================  ========  =============================================================

The emulator (identity, connector, control API) runs on its own event loop in a background
thread, the way pytest-httpserver runs its server. So the fixtures are plain synchronous
fixtures, and a test may run on any event loop: pytest-asyncio in auto or strict mode
(``@pytest.mark.asyncio``), pytest-aiohttp, or ``asyncio.run`` in a synchronous test. Calls are
placed from the test's own loop (the calling platform is the client side of a call).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from emulator.config import BotRegistration, Placeholders, ServiceConfig, anonymous_app_id
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON, JSONObject

if TYPE_CHECKING:
    from emulator.calling.caller import CallerScript
    from emulator.calling.events import EndReason
    from emulator.calling.model import OperationOutcome
    from emulator.calling.tokens import LocalTokens
    from emulator.identity.bearer import BotTokens
    from emulator.scenario.reports import ScenarioResultLike
    from emulator.transcripts.store import StoredEvent, TranscriptStore

EndedBy = Literal["bot", "caller", "platform"]
START_TIMEOUT = 30.0


# --- typed results -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt the platform played: its text (or file), when it started (seconds of virtual
    time since the call began), and whether the caller cut it off."""

    text: str | None
    file_uri: str | None
    at: float
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class CallResult:
    """How a call went, read back from its transcript.

    ``ended_by``: who ended it (``bot``, ``caller`` or ``platform``); ``end_reason`` the exact
    reason. ``outcomes``: each operation outcome the platform posted to the bot, in order (a
    retried delivery counts once). ``transcript``: every event, as ``botemu transcript show``
    prints them."""

    call_id: str
    chain_id: str
    ended_by: EndedBy
    end_reason: EndReason
    prompts: tuple[Prompt, ...]
    outcomes: tuple[OperationOutcome, ...]
    findings: tuple[Finding, ...]
    workflows: int
    vtime: float
    transcript: tuple[StoredEvent, ...]

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The error findings: what the real platform would refuse."""
        return tuple(f for f in self.findings if f.severity is Severity.ERROR)


@dataclass(frozen=True, slots=True)
class Attachment:
    content_type: str | None
    content_url: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class Message:
    """An activity the bot sent to the conversation through botemu's connector. ``activity``
    is the whole activity, for anything not lifted into a field."""

    type: str
    text: str | None
    attachments: tuple[Attachment, ...]
    suggested_actions: tuple[str, ...]
    """The titles (or, without a title, the values) of the suggested actions."""
    conversation_id: str
    activity: JSONObject


# --- the running emulator ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _LiveConfig(ServiceConfig):
    """A ``ServiceConfig`` that also knows the bots registered while the session runs
    (``Botemu.chat`` with an app id and password registers the bot on first use)."""

    live: dict[str, BotRegistration] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @classmethod
    def of(cls, config: ServiceConfig, **changes: Any) -> _LiveConfig:
        values = {f.name: getattr(config, f.name) for f in fields(ServiceConfig)}
        return cls(**(values | changes))

    def bot(self, app_id: str) -> BotRegistration | None:
        return self.live.get(app_id) or ServiceConfig.bot(self, app_id)

    def only_anonymous(self) -> str | None:
        found = {b.app_id for b in (*self.bots, *self.live.values()) if b.anonymous}
        return next(iter(found)) if len(found) == 1 else None


class BotemuServer:
    """botemu's identity, connector and control API, served from a background thread.

    ``start()`` binds the address of ``config`` (port 0: a free port, read back into
    ``config``), serves until ``stop()``. ``reset()`` forgets every conversation."""

    def __init__(self, config: ServiceConfig, store_path: Path) -> None:
        self.requested = config
        self.store_path = store_path
        self.config: _LiveConfig = _LiveConfig.of(config)
        self._store: TranscriptStore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._bot_tokens: BotTokens | None = None

    @property
    def url(self) -> str:
        return self.config.base_url

    @property
    def store(self) -> TranscriptStore:
        if self._store is None:
            raise RuntimeError("the botemu server is not running")
        return self._store

    @property
    def placeholders(self) -> Placeholders:
        """The value of every spec placeholder, as this emulator serves it."""
        return self.config.placeholders()

    @property
    def env(self) -> dict[str, str]:
        """The environment a bot reads its platform settings from (what ``botemu serve``
        prints): ``BOTEMU_TOKEN_URL``, ``BOTEMU_OPENID_METADATA_URL``, ... and
        ``BOTEMU_PROFILE``."""
        from emulator.config import ENV_NAMES

        out = {ENV_NAMES[k]: v for k, v in self.placeholders.to_json().items()}
        out["BOTEMU_PROFILE"] = self.config.profile.value
        return out

    def register(self, bot: BotRegistration) -> None:
        """Register (or re-register) a bot with the running emulator."""
        self.config.live[bot.app_id] = bot

    def calling_app_id(self, bot_url: str) -> str | None:
        """The app id of the bot registered with ``bot_url`` as its calling endpoint, or of the
        only registered bot; None when neither is."""
        bots = list(({b.app_id: b for b in self.config.bots} | self.config.live).values())
        for bot in bots:
            if bot.calling_endpoint is not None and bot.calling_endpoint.rstrip(
                "/"
            ) == bot_url.rstrip("/"):
                return bot.app_id
        return bots[0].app_id if len(bots) == 1 else None

    def calling_tokens(self, app_id: str) -> LocalTokens:
        """The Bearer tokens of calls to the bot ``app_id``, signed with this emulator's keys
        under its issuer."""
        from emulator.calling.tokens import LocalTokens
        from emulator.identity.bearer import BotTokens
        from emulator.identity.keys import KeyStore

        if self._bot_tokens is None:
            keys = KeyStore(self.config.certs_dir, grace_seconds=self.config.key_grace_seconds)
            self._bot_tokens = BotTokens(keys, self.placeholders, self.config.profile,
                                         lifetime=self.config.token_lifetime_seconds)  # fmt: skip
        return LocalTokens(self._bot_tokens, app_id)

    def start(self) -> None:
        from emulator.transcripts.store import TranscriptStore

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.requested.host, self.requested.port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        port = int(sock.getsockname()[1])
        self.config = _LiveConfig.of(self.requested, port=port)
        self._store = TranscriptStore(self.store_path, write_behind=True)
        started: list[BaseException | None] = []
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready, started), name="botemu-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(START_TIMEOUT):
            raise RuntimeError(f"botemu did not start within {START_TIMEOUT:g}s")
        if started and started[0] is not None:
            self._thread.join()
            self._store.close()
            self._store = None
            raise started[0]

    def _serve(
        self, sock: socket.socket, ready: threading.Event, started: list[BaseException | None]
    ) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main(sock, ready, started))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            sock.close()

    async def _main(
        self, sock: socket.socket, ready: threading.Event, started: list[BaseException | None]
    ) -> None:
        from aiohttp import web

        from emulator.service import make_app

        self._stopped = asyncio.Event()
        runner: web.AppRunner | None = None
        try:
            runner = web.AppRunner(make_app(self.config, self.store), access_log=None)
            await runner.setup()
            await web.SockSite(runner, sock).start()
        except BaseException as e:  # reported to start(), in the test's thread
            started.append(e)
            ready.set()
            if runner is not None:
                await runner.cleanup()
            return
        started.append(None)
        ready.set()
        try:
            await self._stopped.wait()
        finally:
            await runner.cleanup()

    def stop(self) -> None:
        loop, stopped, thread = self._loop, self._stopped, self._thread
        if loop is not None and stopped is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(stopped.set)
            thread.join(START_TIMEOUT)
        if self._store is not None:
            self._store.close()
            self._store = None

    def control_headers(self) -> dict[str, str]:
        """The headers of a control request: this emulator's secret (from its certificates
        directory, emulator/guard.py) and the JSON content type."""
        from emulator.guard import control_headers

        return control_headers(self.config.certs_dir)

    def reset(self) -> None:
        """Forget every conversation (``POST /_botemu/reset``)."""
        request = urllib.request.Request(f"{self.url}/_botemu/reset", data=b"{}", method="POST",
                                         headers=self.control_headers())  # fmt: skip
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
        with direct.open(request, timeout=10) as response:
            response.read()


# --- the per-test handle -------------------------------------------------------------------------


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
            new = [message_of(a, conversation) for a in page if not _from_user(a)]
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
        from emulator.runner.suite import (
            ConfigError,
            TargetSettings,
            default_backend,
            split_by_target,
        )

        backend = default_backend()
        scenarios = backend.collect([Path(path)])
        runnable, skipped = split_by_target(bot is not None, messaging_bot is not None, scenarios,
                                            _PLUGIN_SKIPS)  # fmt: skip
        if not runnable:
            reasons = sorted({s.skipped for s in skipped}) or ["no scenario"]
            raise ConfigError(f"{path}: nothing to run: every scenario " + "; ".join(reasons))
        if messaging_bot is not None and app_id is not None:
            self._registration(messaging_bot, app_id, app_password)
        target = TargetSettings(bot=bot, messaging_bot=messaging_bot, app_id=app_id,
                                app_password=app_password, certs=certs, ca=ca,
                                emulator=self.url,
                                control_certs=self.server.config.certs_dir)  # fmt: skip
        skips = {id(s.scenario): s for s in skipped}
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


_ENDED_BY: dict[str, EndedBy] = {"bot hung up": "bot", "bot rejected": "bot",
                                  "caller hung up": "caller"}  # fmt: skip


def read_call(
    store: TranscriptStore,
    call_id: str,
    chain_id: str,
    end_reason: EndReason,
    findings: Sequence[Finding],
    workflows: int,
    vtime: float,
) -> CallResult:
    """A ``CallResult`` from the call's transcript."""
    events = tuple(store.events(call_id))
    prompts: list[Prompt] = []
    outcomes: list[OperationOutcome] = []
    for event in events:
        payload = event.payload
        if event.kind == "platform" and payload.get("kind") == "prompt played":
            prompts.append(_prompt(payload))
        elif event.kind == "http.request" and payload.get("label") != "Conversation":
            if payload.get("attempt", 1) == 1:
                outcome = _outcome(payload)
                if outcome is not None:
                    outcomes.append(outcome)
    return CallResult(
        call_id=call_id,
        chain_id=chain_id,
        ended_by=_ENDED_BY.get(end_reason.value, "platform"),
        end_reason=end_reason,
        prompts=tuple(prompts),
        outcomes=tuple(outcomes),
        findings=tuple(findings),
        workflows=workflows,
        vtime=vtime,
        transcript=events,
    )


def _prompt(payload: dict[str, JSON]) -> Prompt:
    text, uri, at = payload.get("text"), payload.get("file_uri"), payload.get("at")
    return Prompt(
        text=text if isinstance(text, str) else None,
        file_uri=uri if isinstance(uri, str) else None,
        at=float(at) if isinstance(at, int | float) else 0.0,
        interrupted=payload.get("interrupted") is True,
    )


def _outcome(payload: dict[str, JSON]) -> OperationOutcome | None:
    from emulator.calling.wire import loads, read_conversation_result
    from emulator.errors import WireError

    body = payload.get("body")
    parts = payload.get("parts")
    if not isinstance(body, str) and isinstance(parts, dict):
        body = parts.get("conversationResult")
    if not isinstance(body, str):
        return None
    try:
        return read_conversation_result(loads(body)).operation_outcome
    except WireError:
        return None


def _from_user(activity: JSONObject) -> bool:
    sender = activity.get("from")
    return isinstance(sender, dict) and sender.get("role") == "user"


def message_of(activity: JSONObject, conversation_id: str) -> Message:
    """A ``Message`` from an activity as the connector stored it."""
    text = activity.get("text")
    attachments = activity.get("attachments")
    suggested = activity.get("suggestedActions")
    actions = suggested.get("actions") if isinstance(suggested, dict) else None
    return Message(
        type=str(activity.get("type") or ""),
        text=text if isinstance(text, str) else None,
        attachments=tuple(
            Attachment(_str(a.get("contentType")), _str(a.get("contentUrl")), _str(a.get("name")))
            for a in (attachments if isinstance(attachments, list) else [])
            if isinstance(a, dict)
        ),
        suggested_actions=tuple(
            str(a.get("title") or a.get("value") or "")
            for a in (actions if isinstance(actions, list) else [])
            if isinstance(a, dict)
        ),
        conversation_id=conversation_id,
        activity=activity,
    )


def _str(value: JSON) -> str | None:
    return value if isinstance(value, str) else None


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def botemu_config(tmp_path_factory: pytest.TempPathFactory) -> ServiceConfig:
    """How the session's emulator is set up. Override it (session scope) to register bots,
    choose the auth profile or a fixed port; ``port=0`` picks a free one."""
    return ServiceConfig(port=0, certs_dir=tmp_path_factory.mktemp("botemu-keys"))


@pytest.fixture(scope="session")
def botemu_store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The transcript database of the session (override it to keep transcripts for
    ``botemu transcript show`` after the run)."""
    return tmp_path_factory.mktemp("botemu") / "transcripts.db"


@pytest.fixture(scope="session")
def botemu_server(botemu_config: ServiceConfig, botemu_store_path: Path) -> Iterator[BotemuServer]:
    """The session's running emulator (started on first use, stopped at the end)."""
    server = BotemuServer(botemu_config, botemu_store_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def botemu(botemu_server: BotemuServer) -> Botemu:
    """The session's emulator, reset for this test: ``call``, ``chat``, ``run_scenario``."""
    botemu_server.reset()
    return Botemu(botemu_server)
