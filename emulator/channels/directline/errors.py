"""Direct Line's errors, as the service gives them: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from emulator.errors import BotemuError
from emulator.jsonutil import JSONObject


class DirectLineError(BotemuError):
    """A request refused: its HTTP status, the service's error code and a message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> JSONObject:
        return {"error": {"code": self.code, "message": self.message}}


def not_found(conversation_id: str) -> DirectLineError:
    return DirectLineError(404, "BadArgument", f"conversation {conversation_id[:80]!r} not found")
