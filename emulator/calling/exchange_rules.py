"""Rules about the HTTP exchanges between the calling platform and a bot.

What the platform does with each is in ``docs/calling-http.md``; every case is recorded as a
finding with one of these ids, and none of them ends anything but the call.
"""

from __future__ import annotations

from emulator.findings import RuleRegistry, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
HTTP_NOTES = "field notes, Calling: HTTP"
ERRORS = "spec Errors"
DECISION = "botemu (docs/calling-http.md)"
NODE_SDK_NOTES = "field notes, Calling: wire format (Node calling SDK)"
EXECUTION_NOTES = "field notes, Calling: how the platform executes a Workflow"

NODE_SDK_PART_LIMIT = 1024 * 1024
"""Bytes of a multipart part that the Node calling SDK's parser keeps (field notes): a WAV
recording (16 kHz, 16 bits, mono: 32000 bytes a second) longer than about 32 s is cut."""
REAL_WORKFLOW_DROP = 13
"""The field notes record a real call dropped after about this many Workflows."""

EXCHANGE_RULES = RuleRegistry("HTTP exchanges (calling platform to bot)")
_r = EXCHANGE_RULES.add

# fmt: off
CALL_HTTP_5XX = _r("CALL-HTTP-5XX", ERROR, ERRORS,
    "The bot answered with a 5xx status: the platform retries with the same message id.")
CALL_TIMEOUT = _r("CALL-TIMEOUT", ERROR, ERRORS,
    "The bot did not answer within the time-out: the platform retries.")
CALL_CONNECTION = _r("CALL-CONNECTION", ERROR, DECISION,
    "The connection to the bot failed or was reset: the platform retries.")
CALL_DELIVERY_FAILED = _r("CALL-DELIVERY-FAILED", ERROR, ERRORS,
    "Every attempt failed: the platform hangs up the call.")
CALL_HTTP_STATUS = _r("CALL-HTTP-STATUS", ERROR, DECISION,
    "The bot answered with a status other than 2xx or 5xx: no retry, the platform hangs up.")
CALL_EMPTY_BODY = _r("CALL-EMPTY-BODY", WARNING, HTTP_NOTES,
    "A 2xx with an empty body to a live call sends no Workflow: the platform hangs up.")
CALL_NOT_JSON = _r("CALL-NOT-JSON", ERROR, "spec Endpoints 1-2",
    "The response body is a JSON Workflow (UTF-8).")
CALL_BODY_TOO_LARGE = _r("CALL-BODY-TOO-LARGE", ERROR, DECISION,
    "The response body is at most the size limit (1 MiB by default).")
CALL_CONTENT_TYPE = _r("CALL-CONTENT-TYPE", WARNING, "spec C (Bodies are JSON)",
    "A Workflow is sent with Content-Type application/json.")
CALL_INVALID_NO_CALLBACK = _r("CALL-INVALID-NO-CALLBACK", ERROR, "field notes, how the platform executes a Workflow",
    "An invalid Workflow without a usable callback cannot get the validation outcome: the platform hangs up.")
CALL_AFTER_END = _r("CALL-AFTER-END", WARNING, HTTP_NOTES,
    "A result with callState terminated is answered with 2xx and no Workflow.")
CALL_WORKFLOW_LIMIT = _r("CALL-WORKFLOW-LIMIT", WARNING, "field notes, how the platform executes a Workflow",
    "The call reached the platform's limit of Workflows: the platform hung up.")
CALL_MEDIA_FETCH = _r("CALL-MEDIA-FETCH", ERROR, "spec C, Prompt (fileUri)",
    "A prompt file can be fetched: otherwise the playPrompt fails.")
CALL_MEDIA_SIZE = _r("CALL-MEDIA-SIZE", ERROR, "spec Limits",
    "A prompt file is at most 512 KB.")
CALL_MEDIA_FORMAT = _r("CALL-MEDIA-FORMAT", ERROR, "spec C, Prompt (fileUri)",
    "A prompt file is WAV or WMA, judged from its bytes.")
CALL_FORCED_INVALID = _r("CALL-FORCED-INVALID", INFO, "botemu (docs/scenarios-running.md, faults)",
    "The platform answered this Workflow with the validation outcome because the scenario forced it (reject_workflow), not because it was invalid: nothing of it ran.")
CALL_DUPLICATE_DIFFERS = _r("CALL-DUPLICATE-DIFFERS", WARNING, "spec Errors (a retry keeps the message id)",
    "A message delivered twice with the same message id gets an equivalent answer (operationIds aside): a bot is idempotent.")
CALL_RECORDING_OVER_1MIB = _r("CALL-RECORDING-OVER-1MIB", WARNING, NODE_SDK_NOTES,
    "A recording posted to the bot is over 1 MiB: the Node calling SDK's multipart parser keeps only the first 1 MiB of a part, so a bot on that SDK gets it cut short (a WAV recording over about 32 s).")
CALL_WORKFLOWS_OVER_13 = _r("CALL-WORKFLOWS-OVER-13", WARNING, EXECUTION_NOTES,
    "The call went past 13 Workflows: a real call was dropped after about 13 (botemu's limit is 50 by default; --max-workflows 13 plays the real platform).")
CALL_DEADLINE = _r("CALL-DEADLINE", ERROR, DECISION,
    "A call ends within its wall-clock deadline (300 s by default, --deadline): past it, the platform hangs up, whatever is under way.")
# fmt: on
