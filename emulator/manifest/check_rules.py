"""The rules of ``botemu manifest check`` (SKILL-*): data only, so that ``botemu rules`` and the
log view list them without loading the check."""

from __future__ import annotations

from emulator.findings import RuleRegistry, Severity

RULES = RuleRegistry("Skill check (manifest against a running skill)")
_M = "spec A. Skill manifest"
_r = RULES.add
_r("SKILL-ACTIVITIES", Severity.ERROR, f"{_M} (activities)",
   "The manifest declares at least one activity in activities, and botemu can send at least one "
   "(a check that sends nothing passes nothing).")  # fmt: skip
_r("SKILL-REACHABLE", Severity.ERROR, f"{_M} (endpoint: endpointUrl)",
   "The skill answers at the endpointUrl of the checked endpoint.")  # fmt: skip
_r("SKILL-ACCEPTS", Severity.ERROR, f"{_M} (activities); spec Authentication",
   "The skill accepts (2xx) each declared activity, sent with a valid sample value and a skill "
   "consumer's token (aud its platformAppId, appid the consumer).")  # fmt: skip
_r("SKILL-INVOKE-RESULT", Severity.ERROR, f"{_M} (invokeActivity: resultValue)",
   "An invoke's response body is valid against the activity's resultValue.")  # fmt: skip
_r("SKILL-EOC-RESULT", Severity.ERROR, f"{_M} (activity definitions: resultValue)",
   "The value of the endOfConversation the skill sends back is valid against the resultValue of "
   "the activity it answers.")  # fmt: skip
_r("SKILL-SENT-DECLARED", Severity.ERROR, f"{_M} (activitiesSent)",
   "Every activity the skill sends is declared in activitiesSent, by type and (when declared) "
   "name.")  # fmt: skip
_r("SKILL-SENT-VALUE", Severity.ERROR, f"{_M} (activitiesSent: value)",
   "The value of an activity the skill sends is valid against the value schema activitiesSent "
   "declares for it.")  # fmt: skip
_r("SKILL-SAMPLE", Severity.WARNING, f"{_M} (activity definitions: value)",
   "botemu can make a sample value for each declared value schema; when it cannot, the activity "
   "is not sent (and not checked).")  # fmt: skip
