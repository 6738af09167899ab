"""A live caller: a person's acts, as they make them (the browser's phone, a test).

A live call (``CallSettings(live=True)``) plays each Workflow in real time and, between its
events, waits for the live caller's next act (the ``Listen`` effect). The driver takes the act
from a ``LiveCaller``: ``press``, ``say``, ``talk`` and ``hang_up`` check it and queue it as a
caller step; the session then puts it at the moment it came and runs the Workflow again from its
start (``CallSession.play_live``), so the engine, the rules and the transcript are those of every
other call. Acts made while no Workflow plays (the bot is thinking) wait for the next one.

Holding to talk (the page's microphone): ``hold`` opens a talk, ``audio`` brings what the
microphone hears meanwhile (into the ``Held`` act's buffer, which the session keeps for the
recording), and ``release`` ends the talk there (``Released``): the session gives the talk its
real length and a recording holds that audio.

Bounds: at most ``MAX_QUEUED`` acts waiting, keys from ``0-9*#`` and at most ``MAX_KEYS`` at
once, a phrase of at most ``MAX_TEXT`` characters, talk of at most ``MAX_TALK`` seconds; a
refused act raises ``LiveInputError`` with its reason and the call goes on.
"""

from __future__ import annotations

import asyncio
import time

from emulator.audio.pcm import SAMPLE_RATE
from emulator.calling.caller import HangUp, Held, Live, Press, Released, Say, Step, Talk
from emulator.errors import BotemuError

MAX_QUEUED = 64
MAX_KEYS = 32
MAX_TEXT = 500
MAX_TALK = 120.0
OPEN_TALK = MAX_TALK + 1.0
"""The length of the talk a hold opens, until its release gives it its real one (no talk act is
this long, so the session knows it)."""
MIC_RATE = SAMPLE_RATE
"""The microphone's audio comes as 16-bit little-endian mono PCM at this rate (the rate of
recordings, 16 kHz)."""
MAX_HELD_BYTES = int(MAX_TALK * MIC_RATE) * 2
"""The most audio one hold keeps (``MAX_TALK`` seconds); more is dropped (``dropped`` counts it)."""
KEYS = "0123456789*#"
"""The keys of a phone's dial pad (the A-D of DTMF are not on it)."""


class LiveInputError(BotemuError):
    """An act the live caller cannot make; the message says why."""


class LiveCaller:
    """The acts of one live call, queued until the call takes them."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Step | Live] = asyncio.Queue(MAX_QUEUED)
        self.hung_up = False
        self.held: bytearray | None = None
        """The microphone's audio while the caller holds to talk (``hold`` to ``release``)."""
        self.dropped = 0
        self.held_since = 0.0

    def press(self, keys: str) -> None:
        if not keys or len(keys) > MAX_KEYS or any(k not in KEYS for k in keys):
            raise LiveInputError(f"keys are 1 to {MAX_KEYS} of 0-9, * and #; got {keys[:40]!r}")
        self.put(Press(keys))

    def say(self, text: str) -> None:
        words = " ".join(text.split())
        if not words or len(words) > MAX_TEXT:
            raise LiveInputError(f"say 1 to {MAX_TEXT} characters of words")
        self.put(Say(words))

    def talk(self, seconds: float) -> None:
        if not 0 < seconds <= MAX_TALK:
            raise LiveInputError(f"talk for more than 0 and at most {MAX_TALK:g} seconds")
        self.put(Talk(seconds))

    def hold(self) -> None:
        """The caller begins to talk into the microphone: a talk that lasts until ``release``,
        whose sound is the audio that comes meanwhile (the first ``MAX_TALK`` seconds)."""
        if self.held is not None:
            raise LiveInputError("the caller is already holding to talk")
        held = bytearray()
        self.put(Held(held, MIC_RATE))
        self.held, self.dropped = held, 0
        self.held_since = time.monotonic()

    def audio(self, chunk: bytes) -> None:
        """Audio from the microphone while holding (16-bit little-endian mono at ``MIC_RATE``)."""
        if self.held is None:
            raise LiveInputError("audio comes between hold and release")
        room = MAX_HELD_BYTES - len(self.held)
        self.held += chunk[: max(0, room)]
        self.dropped += max(0, len(chunk) - max(0, room))

    def release(self) -> None:
        """The caller stops talking: the talk opened by ``hold`` ends now."""
        if self.held is None:
            raise LiveInputError("release comes after hold")
        self.held = None
        self.put(Released(time.monotonic() - self.held_since))

    def hang_up(self) -> None:
        if not self.hung_up:
            self.hung_up = True
            self.put(HangUp())

    def put(self, step: Step | Live) -> None:
        if self.hung_up and not isinstance(step, HangUp):
            raise LiveInputError("the caller has hung up")
        try:
            self.queue.put_nowait(step)
        except asyncio.QueueFull:
            raise LiveInputError(
                f"too many acts waiting ({MAX_QUEUED}): the call takes them as it runs"
            ) from None

    async def next(self, seconds: float) -> tuple[Step | Live, float] | None:
        """The next act and how many seconds it took to come, or None after ``seconds``."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            step = await asyncio.wait_for(self.queue.get(), timeout=max(0.0, seconds))
        except TimeoutError:
            return None
        return step, loop.time() - started
