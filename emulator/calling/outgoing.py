"""What the platform sends a bot, without sending it: the Conversation, the ConversationResult
of a run (its bytes, label and the record a fault changed), request headers, and the multipart
body and transcript event of a recording. No I/O: ``posting`` sends them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from emulator.calling import exchange_rules as X
from emulator.calling.engine import WorkflowRun, result_for
from emulator.calling.judging import JSON_TYPE
from emulator.calling.media import CONTENT_TYPES
from emulator.calling.model import (
    CallState,
    Conversation,
    ModalityType,
    OperationOutcome,
    Participant,
    PlayPromptOutcome,
    RecognizeOutcome,
    RecordingFormat,
    RecordOutcome,
)
from emulator.calling.wire import WireOptions, encode, to_json
from emulator.errors import BotemuError
from emulator.jsonutil import JSONObject

if TYPE_CHECKING:
    from faker import Faker

    from emulator.calling.faults import PlatformFaults

USER_AGENT = "botemu-calling/0.1"


@lru_cache(maxsize=1)
def _faker() -> Faker:
    from faker import Faker  # imported when first used: 100 ms a process that never does

    return Faker("en_US")


def preload() -> None:
    """Import now what a call imports when it first needs it: Faker (the caller's name) and PyAV
    (audio coded). A load run does so before its clock starts, so that its first calls are not
    slowed by imports, which on a busy machine took longer than a short run."""
    import av  # noqa: F401

    _faker()


@lru_cache(maxsize=1024)
def _identity(seed: int) -> tuple[str, str]:
    """The caller's user name and display name for a Faker seed (seeded runs repeat them)."""
    faker = _faker()
    faker.seed_instance(seed)
    return faker.user_name(), faker.name()


MAX_DISPLAY_NAME = 256
_IDENTITY = re.compile(r"[0-9A-Za-z]{1,16}:[^\s:][^\s]{0,255}")


@dataclass(frozen=True, slots=True)
class CallerIdentity:
    """Who calls, when the caller is chosen rather than made up: the participant's ``identity``
    (``<prefix>:<name>``, spec B, Participant; ``8:`` is a user), its ``display_name``, and
    whether the call is ``multiparty``. A field left None is made up from the call's seed as
    usual. ``CallerIdentityError`` when a field is not of its form."""

    identity: str | None = None
    display_name: str | None = None
    multiparty: bool = False

    def __post_init__(self) -> None:
        identity = self.identity
        if identity is not None and not (_IDENTITY.fullmatch(identity) and identity.isprintable()):
            raise CallerIdentityError(
                "the caller's identity is <prefix>:<name> (a user is 8:<name>), with no spaces;"
                f" got {identity[:80]!r}"
            )
        name = self.display_name
        if name is not None and (len(name) > MAX_DISPLAY_NAME or not name.isprintable()):
            raise CallerIdentityError(
                f"the caller's display name is at most {MAX_DISPLAY_NAME} printable characters"
            )


class CallerIdentityError(BotemuError):
    """A caller identity that is not of its form; the message says which field and why."""


def conversation(
    call_id: str, seed: int, app_id: str | None, who: CallerIdentity | None = None
) -> Conversation:
    """The Conversation that places a call: an audio call from a caller named after ``seed``,
    or as ``who`` says."""
    user_name, name = _identity(seed)
    who = who or CallerIdentity()
    caller = Participant(
        identity=who.identity or f"8:{user_name}",
        display_name=who.display_name if who.display_name is not None else name,
        language_id="en-US",
        originator=True,
    )
    bot = Participant(identity=f"28:{app_id or 'bot'}", originator=False)
    return Conversation(
        id=call_id,
        participants=(caller, bot),
        presented_modality_types=(ModalityType.AUDIO,),
        is_multiparty=who.multiparty,
        call_state=CallState.INCOMING,
    )


def request_headers(content_type: str, chain_id: str, message_id: str) -> dict[str, str]:
    """The headers of every platform request, but the Authorization a token source adds."""
    return {
        "Content-Type": content_type,
        "Accept": JSON_TYPE,
        "User-Agent": USER_AGENT,
        "X-Platform-Chain-ID": chain_id,
        "X-Platform-Message-ID": message_id,
    }


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A ConversationResult to post: its bytes, its outcome, a one-line label, and ``meta`` to
    record with each attempt (the result as the platform made it, when a fault changed its
    bytes)."""

    body: bytes
    outcome: OperationOutcome
    label: str
    meta: JSONObject | None = None


def result_message(
    call_id: str,
    run: WorkflowRun,
    *,
    app_state: str | None,
    platform_url: str,
    app_id: str | None,
    wire: WireOptions,
    faults: PlatformFaults | None,
) -> Outgoing:
    """The ConversationResult of a run that has an outcome to post, as the platform sends it
    (changed by ``faults``, if any are set)."""
    result = result_for(
        call_id,
        run,
        app_state=app_state,
        call_link=f"{platform_url}/calls/{call_id}",
        app_id=app_id,
    )
    assert result is not None
    if faults is not None:
        result = faults.result(result)
    outcome = result.operation_outcome
    label = describe_outcome(outcome)
    body = encode(result, wire) if faults is None else faults.encode_result(result, wire)
    meta: JSONObject | None = None
    if faults is not None and faults.unknown_enums:  # the bytes differ from it
        meta = {"platform_result": to_json(result, wire)}
    return Outgoing(body, outcome, label, meta)


def describe_outcome(outcome: OperationOutcome) -> str:
    """One line for a posted outcome: ``recognizeOutcome success dtmfOptionMatched choice=sales``."""
    words = [outcome.type.value, outcome.outcome.value]
    if isinstance(outcome, PlayPromptOutcome | RecordOutcome):
        words.append(outcome.completion_reason.value)
    if isinstance(outcome, RecordOutcome):
        words.append(f"length={outcome.length_of_recording_in_secs:g}s")
    if isinstance(outcome, RecognizeOutcome):
        if outcome.choice_outcome is not None:
            words.append(outcome.choice_outcome.completion_reason.value)
            if outcome.choice_outcome.choice_name:
                words.append(f"choice={outcome.choice_outcome.choice_name}")
        if outcome.collect_digits_outcome is not None:
            words.append(outcome.collect_digits_outcome.completion_reason.value)
            if outcome.collect_digits_outcome.digits:
                words.append(f"digits={outcome.collect_digits_outcome.digits}")
    if outcome.failure_reason:
        words.append(f"({outcome.failure_reason[:120]})")
    return " ".join(words)


def recording_event(outcome: RecordOutcome, fmt: RecordingFormat, size: int) -> JSONObject:
    """The transcript event of a recording about to be posted (its audio is the blob)."""
    return {
        "summary": f"recording of {outcome.length_of_recording_in_secs:g}s ({fmt.value}, "
        f"{size} bytes)",
        "operation_id": outcome.id,
        "format": fmt.value,
        "content_type": CONTENT_TYPES[fmt],
        "seconds": outcome.length_of_recording_in_secs,
        "recording": True,
    }


def recording_cut(outcome: RecordOutcome, fmt: RecordingFormat, size: int) -> str | None:
    """The CALL-RECORDING-OVER-1MIB message when a recording of ``size`` bytes is over the part
    limit of the Node calling SDK's parser; None when it fits."""
    if size <= X.NODE_SDK_PART_LIMIT:
        return None
    seconds = outcome.length_of_recording_in_secs
    kept = seconds * X.NODE_SDK_PART_LIMIT / size
    smaller = ", or recordingFormat wma or mp3," if fmt.value == "wav" else ""
    return (f"the {seconds:g}s {fmt.value} recording is {size} bytes, over 1 MiB: "
            "the Node calling SDK's multipart parser keeps only the first 1 MiB of a "
            f"part, so a bot on that SDK gets about the first {kept:.0f}s of it "
            f"(a shorter maxDurationInSeconds{smaller} keeps it whole)")  # fmt: skip


def multipart_body(boundary: str, json_body: bytes, audio: bytes, audio_type: str) -> bytes:
    """A record result as both real SDK parsers accept it (field notes): two form-data parts,
    JSON first, no filename on either."""
    crlf = b"\r\n"
    head = f"--{boundary}".encode()
    return b"".join(
        [
            head, crlf,
            b"Content-Type: application/json; charset=utf-8", crlf,
            b'Content-Disposition: form-data; name="conversationResult"', crlf,
            crlf, json_body, crlf,
            head, crlf,
            f"Content-Type: {audio_type}".encode(), crlf,
            b'Content-Disposition: form-data; name="recordedAudio"', crlf,
            crlf, audio, crlf,
            head, b"--", crlf,
        ]
    )  # fmt: skip
