"""The connector's own rules: what botemu reports about a conversation beyond the token checks.

``CONN-ANONYMOUS-BOT``: a bot registered without an app id (as every SDK template starts) is
served the way the platform's own emulator serves it, with no token either way; the real
connector would refuse it, so each of its conversations carries one warning saying so, and how to
test with credentials.

``CONN-STREAM-*``: a streamed reply (``streams.py``): chunks are ``typing`` activities with a
``streaminfo`` entity, ended by a ``message`` whose entity says ``streamType: "final"``. Each
rule the platform enforces on a stream is one id here; the connector answers as the platform
does (403 ``ContentStreamNotAllowed``, 202 ``ContentStreamSequenceOrderPreConditionFailed``,
400 ``BadArgument``) and the conversation's transcript gets the finding.
"""

from __future__ import annotations

from emulator.findings import Finding, Rule, RuleRegistry, Severity

CONNECTOR_RULES = RuleRegistry("Connector (messaging)")
ANONYMOUS_BOT = CONNECTOR_RULES.add(
    "CONN-ANONYMOUS-BOT",
    Severity.WARNING,
    "spec Authentication, Bot to connector 3 and Connector to bot 4-6",
    "A bot registered without an app id (an SDK template's default) is served with no token "
    "either way; the real connector would refuse it.",
)


def anonymous_bot_finding(app_id: str) -> Finding:
    """The warning every conversation of the anonymous bot ``app_id`` carries."""
    return Finding(
        ANONYMOUS_BOT.id,
        ANONYMOUS_BOT.severity,
        "conversation",
        f"{app_id} is registered without an app id: botemu sends it no token and takes its "
        "requests without one, as the platform's own emulator does, but the real connector "
        "refuses them. To test with credentials, register the bot with an app id and password "
        "(botemu serve --app-id ID --app-password PW) and give the bot the same.",
    )


_STREAMS = "field notes, The Microsoft 365 Agents SDK: streaming replies"
STREAM_CHANNEL = CONNECTOR_RULES.add(
    "CONN-STREAM-CHANNEL", Severity.ERROR, _STREAMS,
    "A stream on a channel that does not stream (only msteams, webchat, directline and emulator "
    "do): 403 ContentStreamNotAllowed.",
)  # fmt: skip
STREAM_ORDER = CONNECTOR_RULES.add(
    "CONN-STREAM-ORDER", Severity.ERROR, _STREAMS,
    "A chunk whose streamSequence is not above the stream's last one: 202 "
    "ContentStreamSequenceOrderPreConditionFailed, and the chunk is ignored.",
)  # fmt: skip
STREAM_SHRINK = CONNECTOR_RULES.add(
    "CONN-STREAM-SHRINK", Severity.ERROR, _STREAMS,
    "A chunk's text must start with the text streamed so far (each chunk is the whole message "
    "so far): 403 ContentStreamNotAllowed.",
)  # fmt: skip
STREAM_ENDED = CONNECTOR_RULES.add(
    "CONN-STREAM-ENDED", Severity.ERROR, _STREAMS,
    "A chunk after the stream's final message: 403 ContentStreamNotAllowed.",
)  # fmt: skip
STREAM_TIMEOUT = CONNECTOR_RULES.add(
    "CONN-STREAM-TIMEOUT", Severity.ERROR, _STREAMS,
    "A stream may last 2 minutes from its first chunk; a chunk after that: 403 "
    "ContentStreamNotAllowed.",
)  # fmt: skip
STREAM_SIZE = CONNECTOR_RULES.add(
    "CONN-STREAM-SIZE", Severity.ERROR, _STREAMS,
    "A stream too large (a chunk's text over the message size, or too many chunks): 403 "
    "ContentStreamNotAllowed.",
)  # fmt: skip
STREAM_ID = CONNECTOR_RULES.add(
    "CONN-STREAM-ID", Severity.ERROR, _STREAMS,
    "Every chunk after the first carries the streamId (the id the first chunk was answered "
    "with), and it names a stream of the conversation: 400 BadArgument.",
)  # fmt: skip
STREAM_ENTITY = CONNECTOR_RULES.add(
    "CONN-STREAM-ENTITY", Severity.ERROR, _STREAMS,
    "A streaminfo entity is well formed: streamType informative, streaming or final; "
    "streamSequence a positive integer; streamId a string; chunks are typing activities and "
    "the final one a message: 400 BadArgument.",
)  # fmt: skip


def stream_finding(rule: Rule, message: str) -> Finding:
    """A finding about a stream's chunk (``where``: its streaminfo entity)."""
    return Finding(rule.id, rule.severity, "$.entities[?(@.type=='streaminfo')]", message)
