"""The asyncio driver of a call: ``place_call`` runs a ``CallSession`` (``callsession``, which does
no I/O) and carries out its effects with aiohttp: each request and prompt file over the call's
HTTP(S) session, each wait with ``asyncio.sleep`` (at the call's pace; none in virtual time), the
Bearer token from the call's token source, a recording's encoding in a thread. It keeps the
call's wall-clock deadline, and the time left to the run that places it (``cut``: explore's and
fuzz's ``--max-time``). ``botemu call``, ``botemu test``, the pytest plugin and the demo place
their calls through it; Locust's users through ``emulator.load.driver``.
"""

from __future__ import annotations

import asyncio
import io
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from emulator.calling.calllog import Listener
from emulator.calling.callsession import CallSession
from emulator.calling.delivery import plain_headers
from emulator.calling.effects import (
    Answer,
    Compute,
    Effect,
    Failed,
    Get,
    Heard,
    Listen,
    Post,
    Steps,
    Token,
    Wait,
)
from emulator.calling.engine import Media
from emulator.calling.judging import JSON_TYPE, JUDGE_CACHE_MAX_BODY, Judged, judge
from emulator.calling.live import LiveCaller
from emulator.calling.outgoing import USER_AGENT, describe_outcome, multipart_body
from emulator.calling.settings import DEFAULT_DEADLINE, CallReport, CallSettings
from emulator.calling.tokens import TokenUnavailable
from emulator.httpio import platform_session, read_limited, redact_authorization
from emulator.transcripts.store import TranscriptStore

__all__ = [
    "DEFAULT_DEADLINE",
    "JSON_TYPE",
    "JUDGE_CACHE_MAX_BODY",
    "USER_AGENT",
    "CallCut",
    "CallReport",
    "CallSettings",
    "Judged",
    "Listener",
    "RunTime",
    "describe_outcome",
    "judge",
    "multipart_body",
    "place_call",
]

Sleep = Callable[[float], Awaitable[None]]


class CallCut(Exception):
    """The run that placed a call ran out of time while the call was under way
    (``place_call(cut=...)``): the call was abandoned there, and its transcript ends with a
    hang-up and a note that says why. No verdict can be drawn from it."""

    def __init__(self, call_id: str, seconds: float) -> None:
        super().__init__(f"call {call_id} cut off after {round(seconds, 1):g} s: the run's time "
                         "ran out")  # fmt: skip
        self.call_id = call_id


class RunTime:
    """The seconds a run that places calls may take (explore's and fuzz's ``--max-time``; None:
    no bound). ``over()``: no call starts once they have passed, by ``clock`` (a test's clock of
    calls) or by the wall clock; ``left()``: the wall-clock seconds left, which cut off the call
    under way (``place_call(cut=...)``)."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._by_clock = None if seconds is None else clock() + seconds
        self._by_wall = None if seconds is None else time.monotonic() + seconds

    def over(self) -> bool:
        if self._by_clock is None or self._by_wall is None:
            return False
        return self._clock() >= self._by_clock or time.monotonic() >= self._by_wall

    def left(self) -> float | None:
        return None if self._by_wall is None else self._by_wall - time.monotonic()


async def place_call(
    settings: CallSettings,
    store: TranscriptStore,
    *,
    http: aiohttp.ClientSession | None = None,
    listener: Listener | None = None,
    media_cache: dict[str, Media] | None = None,
    sleep: Sleep = asyncio.sleep,
    live: LiveCaller | None = None,
    cut: float | None = None,
) -> CallReport:
    """Place one call and run it to its end. Never raises for anything the bot does.

    ``media_cache`` shares fetched prompt files across calls; ``sleep`` is how real time passes
    when ``settings.pace`` is above 0 (injectable for tests); ``live``: the acts of a live
    caller (``settings.live``); ``cut``: the seconds (wall clock) left to the run that places
    the call, such as a crawl's ``--max-time``: when they pass first, the call is abandoned as
    the run's cancellation abandons it, noted as cut off, and ``CallCut`` raised (the call's
    own ``deadline`` is a finding against the bot; this is not)."""
    if http is None:
        async with platform_session() as own:
            return await place_call(settings, store, http=own, listener=listener,
                                    media_cache=media_cache, sleep=sleep, live=live,
                                    cut=cut)  # fmt: skip
    if settings.live and live is None:
        raise ValueError("a live call needs its LiveCaller")
    session = CallSession(settings, store, listener, media_cache)
    io = AioIO(http, settings, sleep, live)
    steps = session.run()
    timer = asyncio.timeout(None if cut is None else max(cut, 0.0))
    try:
        async with timer:
            return await _within_deadline(steps, io, session)
    except asyncio.CancelledError:
        steps.close()
        session.cancelled()
        raise
    except TimeoutError:
        if not timer.expired():
            raise
    steps.close()
    seconds = max(cut or 0.0, 0.0)
    session.cancelled(f"cut off: the run's time ran out {round(seconds, 1):g} s into the call")
    raise CallCut(session.call_id, seconds)


async def _within_deadline(steps: Steps[CallReport], io: AioIO, session: CallSession) -> CallReport:
    """The call's run, within its deadline: when it passes, whatever is under way (a request, a
    retry's back-off, a prompt file) is abandoned and the platform hangs up."""
    deadline = session.settings.deadline
    if deadline is None:
        return await drive(steps, io.perform)
    timer = asyncio.timeout(deadline)
    try:
        async with timer:
            return await drive(steps, io.perform)
    except TimeoutError:
        if not timer.expired():
            raise
    steps.close()
    return session.deadline_passed()


async def drive(
    steps: Steps[CallReport], perform: Callable[[Effect], Awaitable[Any]]
) -> CallReport:
    """Run ``steps`` to its end, carrying out each effect with ``perform``."""
    value: Any = None
    while True:
        try:
            effect = steps.send(value)
        except StopIteration as stop:
            report: CallReport = stop.value
            return report
        value = await perform(effect)


LARGE_BODY = 2**20
"""From this size a request body goes to aiohttp as a file object (``AioIO.post``)."""


class AioIO:
    """Carries out a call's effects with aiohttp and asyncio."""

    def __init__(
        self,
        http: aiohttp.ClientSession,
        settings: CallSettings,
        sleep: Sleep,
        live: LiveCaller | None = None,
    ) -> None:
        self.http = http
        self.live = live
        self.tokens = settings.tokens
        self.sleep = sleep
        context = settings.ssl_context
        self.ssl: ssl.SSLContext | bool = context if context is not None else True
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self.schedule: tuple[float, float] | None = None
        """A live call's (virtual time, real time) where the last wait for the caller ended,
        while nothing else has happened since: the next wait keeps to that schedule."""

    async def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Listen):
            return await self.listen(effect)
        self.schedule = None  # a request or a computation: the call's clock stood still
        if isinstance(effect, Post):
            return await self.post(effect)
        if isinstance(effect, Wait):
            await self.sleep(effect.seconds)
            return None
        if isinstance(effect, Get):
            return await self.get(effect)
        if isinstance(effect, Token):
            return await self.token()
        if isinstance(effect, Compute):
            return await asyncio.to_thread(effect)
        raise TypeError(f"not an effect: {effect!r}")

    def timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        made = self._timeouts.get(seconds)
        if made is None:
            made = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds)
        return made

    async def listen(self, effect: Listen) -> Heard | None:
        """The live caller's next act within the wait; without a live caller, the time. A wait
        that goes on from where the last ended keeps to the call's schedule (``Listen``)."""
        if self.live is None:
            await self.sleep(effect.seconds)
            return None
        now = asyncio.get_running_loop().time()
        held = self.schedule
        start = held[1] if held is not None and abs(held[0] - effect.at) < 1e-9 else now
        act = await self.live.next(max(0.0, start + effect.seconds - now))
        if act is None:
            self.schedule = (effect.at + effect.seconds / effect.pace, start + effect.seconds)
            return None
        step, waited = act
        after = min(effect.seconds, now + waited - start)
        self.schedule = (effect.at + after / effect.pace, start + after)
        return Heard(step, after)

    async def post(self, e: Post) -> Answer | Failed:
        """One POST and its answer; a time-out, TLS or connection failure as a ``Failed``."""
        # aiohttp warns that a raw bytes body of a mebibyte or more may block the event loop;
        # as a file object it is written in chunks (a long recording's multipart body).
        data: bytes | io.BytesIO = io.BytesIO(e.body) if len(e.body) >= LARGE_BODY else e.body
        try:
            async with self.http.post(e.url, data=data, headers=e.headers,
                                      timeout=self.timeout(e.timeout), allow_redirects=False,
                                      ssl=self.ssl) as response:  # fmt: skip
                data, oversized = await read_limited(response, e.max_body)
                sent = plain_headers(response.request_info.headers)
                if "Authorization" in sent:
                    sent["Authorization"] = redact_authorization(sent["Authorization"])
                return Answer(response.status, data, oversized, plain_headers(response.headers),
                              sent)  # fmt: skip
        except TimeoutError:
            return Failed("timeout")
        except aiohttp.ClientSSLError as error:
            return Failed("tls", _message(error))
        except (aiohttp.ClientError, OSError) as error:
            return Failed("connection", _message(error))

    async def get(self, e: Get) -> Answer | Failed:
        """One prompt file; a failure to fetch it as a ``Failed``."""
        try:
            async with self.http.get(e.url, timeout=self.timeout(e.timeout), ssl=self.ssl) as r:
                data, more = await read_limited(r, e.max_body)
                return Answer(r.status, data, more, {}, {})
        except TimeoutError:
            return Failed("timeout")
        except (aiohttp.ClientError, OSError, ValueError) as error:
            return Failed("connection", _message(error))

    async def token(self) -> str | TokenUnavailable:
        assert self.tokens is not None  # a Token effect comes only from a call with tokens
        try:
            return await self.tokens.token(self.http)
        except TokenUnavailable as e:
            return e


def _message(error: BaseException) -> str:
    return str(error) or type(error).__name__
