"""The connector's domain errors: each one is an HTTP status, an error code and a message.

ConnectorError (a BotemuError)   status, code, message; ``to_json()`` is the wire error body
├── BadArgument          400  a value is of the wrong kind or out of range
├── BadSyntax            400  the body is not JSON
├── MissingProperty      400  a required property is absent (``.property`` names it)
├── Unauthorized         401  no Bearer token, or a token that fails validation
├── Forbidden            403  a valid token of a bot that is not registered or not a party
├── NotFound             404  unknown conversation, activity, member, attachment or view
├── MethodNotAllowed     405  a known /v3 path with a method it does not have
├── MessageSizeTooBig    413  a body over the limit
├── TooManyRequests      429  a bot that created as many conversations as botemu keeps
├── ServiceError         500  anything botemu did not expect (never a traceback)
├── ContentStreamNotAllowed   403  a stream not allowed: channel, complete, too old, too large
└── ContentStreamSequenceOrderPreConditionFailed   202  an out-of-order chunk, ignored

An error about a streamed reply carries the ``finding`` (``rules.py``, ``CONN-STREAM-*``) that the
transcript records beside the exchange.

``models.py`` raises them, ``auth.py`` raises Unauthorized and Forbidden, and one middleware
(``routes.connector_errors``) turns them into ``{"error": {"code": ..., "message": ...}}``. The
codes are those the field notes list for the connector (BadArgument, BadSyntax, MissingProperty,
MessageSizeTooBig, ServiceError, Unauthorized); Forbidden, NotFound, MethodNotAllowed and
TooManyRequests are botemu's own names for the statuses the notes give no code for (see
``docs/connector.md``).
"""

from __future__ import annotations

from typing import ClassVar

from emulator.errors import BotemuError
from emulator.findings import Finding
from emulator.jsonutil import JSONObject


class ConnectorError(BotemuError):
    """A request the connector refuses. ``status`` and ``code`` are fixed per subclass."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "ServiceError"
    finding: Finding | None = None
    """The finding the transcript records with the refusal (a broken rule of a stream)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{self.code}: {message}")
        self.message = message

    def to_json(self) -> JSONObject:
        return {"error": {"code": self.code, "message": self.message}}


class BadArgument(ConnectorError):
    status = 400
    code = "BadArgument"


class BadSyntax(ConnectorError):
    status = 400
    code = "BadSyntax"


class MissingProperty(ConnectorError):
    """``property`` is the JSON path of the absent property (``$.type``)."""

    status = 400
    code = "MissingProperty"

    def __init__(self, property: str, message: str | None = None) -> None:
        super().__init__(message or f"{property} is required")
        self.property = property


class Unauthorized(ConnectorError):
    """``reason`` is a short machine word (``missing``, ``expired``...) when one is known."""

    status = 401
    code = "Unauthorized"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class Forbidden(ConnectorError):
    status = 403
    code = "Forbidden"


class NotFound(ConnectorError):
    status = 404
    code = "NotFound"


class MethodNotAllowed(ConnectorError):
    status = 405
    code = "MethodNotAllowed"


class MessageSizeTooBig(ConnectorError):
    """``limit`` is the limit in bytes that the body went over."""

    status = 413
    code = "MessageSizeTooBig"

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class TooManyRequests(ConnectorError):
    """botemu's own bound (``MemoryLimits.conversations_per_bot``), with Direct Line's code for
    its bounds: the field notes give none."""

    status = 429
    code = "TooManyRequests"


class ServiceError(ConnectorError):
    status = 500
    code = "ServiceError"


class ContentStreamNotAllowed(ConnectorError):
    status = 403
    code = "ContentStreamNotAllowed"


class ContentStreamSequenceOrderPreConditionFailed(ConnectorError):
    """Not a refusal in the HTTP sense: the platform answers 202 and ignores the chunk."""

    status = 202
    code = "ContentStreamSequenceOrderPreConditionFailed"


# --- factories: the names the rest of botemu uses ----------------------------------------------


def bad_argument(message: str) -> BadArgument:
    return BadArgument(message)


def bad_syntax(message: str) -> BadSyntax:
    return BadSyntax(message)


def missing_property(property: str, message: str | None = None) -> MissingProperty:
    return MissingProperty(property, message)


def not_found(message: str) -> NotFound:
    return NotFound(message)


def unauthorized(message: str, *, reason: str | None = None) -> Unauthorized:
    return Unauthorized(message, reason=reason)


def forbidden(message: str) -> Forbidden:
    return Forbidden(message)


def too_big(what: str, size: int | None, limit: int) -> MessageSizeTooBig:
    """``what`` is what the body holds (``an Activity``, ``attachment``); ``size`` None if
    unknown."""
    size_text = "" if size is None else f"{size} bytes, "
    return MessageSizeTooBig(
        f"the body is {size_text}over the limit of {limit} bytes for {what}", limit=limit
    )


def with_finding(error: ConnectorError, finding: Finding) -> ConnectorError:
    """``error``, carrying ``finding`` for the transcript."""
    error.finding = finding
    return error
