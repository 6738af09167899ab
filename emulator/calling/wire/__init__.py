"""Reading and writing the calling protocol's JSON (spec section C; field notes, "wire format").
Pure: it imports the message model, errors and the JSON helpers, nothing that does I/O.

Reading (what a bot sends, or any message in tests; ``read``): names and enum values are matched
case-insensitively, unknown fields are kept in ``extra``, unknown enum values become
``NOT_UNDERSTOOD``, and a bare-string ``stopTones`` is accepted. Reading raises ``WireError``
(with a JSON path) and nothing else.

Writing (what the platform sends; ``write``): camelCase names, camelCase enum values (culture
"en-US"), nulls left out, compact UTF-8 bytes (``encode``).

``fields`` names the fields of every message; ``objects`` reads JSON text and objects with paths.
"""

from __future__ import annotations

from emulator.calling.wire.fields import action_fields
from emulator.calling.wire.objects import ROOT, loads, read_digits, read_enum
from emulator.calling.wire.read import (
    parse_workflow,
    read_action,
    read_collect_digits,
    read_conversation,
    read_conversation_result,
    read_option,
    read_outcome,
    read_participant,
    read_prompt,
    read_workflow,
)
from emulator.calling.wire.write import (
    DEFAULT_OPTIONS,
    Message,
    WireOptions,
    action_to_json,
    conversation_result_to_json,
    conversation_to_json,
    encode,
    outcome_to_json,
    participant_to_json,
    prompt_to_json,
    to_json,
    workflow_to_json,
)

__all__ = [
    "DEFAULT_OPTIONS",
    "ROOT",
    "Message",
    "WireOptions",
    "action_fields",
    "action_to_json",
    "conversation_result_to_json",
    "conversation_to_json",
    "encode",
    "loads",
    "outcome_to_json",
    "parse_workflow",
    "participant_to_json",
    "prompt_to_json",
    "read_action",
    "read_collect_digits",
    "read_conversation",
    "read_conversation_result",
    "read_digits",
    "read_enum",
    "read_option",
    "read_outcome",
    "read_participant",
    "read_prompt",
    "read_workflow",
    "to_json",
    "workflow_to_json",
]
