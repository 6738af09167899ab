"""What a call needs from the world, as values: the sans-I/O boundary of the calling platform.

A call (``callsession.CallSession``) is a generator of ``Effect`` values: it yields what it needs
done (post this request, fetch that prompt file, let this much time pass, wait for a live
caller's act, give me a Bearer token, run this CPU work elsewhere) and is sent back what happened (an ``Answer``, a
``Failed``, a token or ``TokenUnavailable``, a computed value, or None). It never touches a
socket, a clock or a thread. A driver does the I/O: ``session.place_call`` over asyncio and
aiohttp, ``emulator.load.driver`` over gevent for Locust. Validation, the engine, retries,
findings and the transcript therefore exist once, and tests drive a call with no sockets at all.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from emulator.calling.caller import Live, Step

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Post:
    """One attempt of one platform request: POST ``body`` to ``url``, no redirects; read at most
    ``max_body`` bytes of the answer; give up after ``timeout`` seconds (the whole exchange).
    Sent back: an ``Answer`` or a ``Failed``."""

    url: str
    body: bytes
    headers: Mapping[str, str]
    timeout: float
    max_body: int
    label: str


@dataclass(frozen=True, slots=True)
class Get:
    """Fetch a prompt file: GET ``url``, at most ``max_body`` bytes, within ``timeout`` seconds.
    Sent back: an ``Answer`` or a ``Failed``."""

    url: str
    timeout: float
    max_body: int


@dataclass(frozen=True, slots=True)
class Wait:
    """Let ``seconds`` of real time pass (the call's pace, a retry's back-off). Sent back: None."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Listen:
    """Wait up to ``seconds`` of real time for a live caller's next act (``live.LiveCaller``),
    from virtual time ``at`` at ``pace`` real seconds per virtual second. Sent back: None when
    the time passed with no act, or the ``Heard`` act. A driver may keep to the call's
    schedule: a Listen that goes on from where the last one ended (its ``at``, with no other
    effect between) waits until that one's real end plus ``seconds``, so lateness does not add
    up."""

    seconds: float
    at: float = 0.0
    pace: float = 1.0


@dataclass(frozen=True, slots=True)
class Heard:
    """A live caller's act (a caller step, or the end of a hold), and how many seconds into
    the wait it came."""

    step: Step | Live
    after: float


@dataclass(frozen=True, slots=True)
class Token:
    """The Bearer token for the next request, from the call's token source. Sent back: the token
    (a string), or the ``TokenUnavailable`` that says why there is none."""


@dataclass(frozen=True, slots=True)
class Compute:
    """CPU work that must not stall the driver's other calls (encoding a recording): run
    ``function(*args, **kwargs)`` off the event loop. Sent back: its result."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] | None = None

    def __call__(self) -> Any:
        return self.function(*self.args, **(self.kwargs or {}))


@dataclass(frozen=True, slots=True)
class Answer:
    """What the bot answered to one attempt, as read off the wire."""

    status: int
    data: bytes
    oversized: bool
    headers: dict[str, str]
    sent_headers: dict[str, str]
    """The request headers exactly as the HTTP client sent them (Authorization redacted)."""


FailureKind = Literal["timeout", "tls", "connection"]


@dataclass(frozen=True, slots=True)
class Failed:
    """An exchange that got no answer: ``kind`` and the client's own message (``str(error)``,
    or the error's type name when it has none; empty for a time-out)."""

    kind: FailureKind
    message: str = ""

    @property
    def reason(self) -> str:
        """The message's first line, at most 200 characters (what a finding quotes)."""
        return self.message.splitlines()[0][:200] if self.message else ""


Effect = Post | Get | Wait | Listen | Token | Compute
Steps = Generator[Effect, Any, T]
"""A piece of a call that yields effects and returns a ``T``: compose with ``yield from``."""


def run_blocking(steps: Steps[T], answer: Callable[[Effect], Any]) -> T:
    """Drive ``steps`` to its end, ``answer`` carrying out each effect and returning what it
    gives back, blocking: the gevent driver's loop, and the tests' with no I/O at all."""
    value: Any = None
    while True:
        try:
            effect = steps.send(value)
        except StopIteration as stop:
            result: T = stop.value
            return result
        value = answer(effect)
