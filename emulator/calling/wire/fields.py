"""The field names of every calling message, as the spec writes them: what a reader knows (the
rest is kept in ``extra``) and what the rules accept on an action.
"""

from __future__ import annotations

from emulator.calling.model import ActionType, OutcomeType

PARTICIPANT_FIELDS = ("identity", "displayName", "languageId", "originator")
CONVERSATION_FIELDS = (
    "id",
    "participants",
    "presentedModalityTypes",
    "isMultiparty",
    "callState",
    "links",
    "subject",
    "threadId",
)
PROMPT_FIELDS = (
    "value",
    "fileUri",
    "voice",
    "culture",
    "silenceLengthInMilliseconds",
    "emphasize",
    "sayAs",
)
OPTION_FIELDS = ("name", "speechVariation", "dtmfVariation")
COLLECT_FIELDS = ("maxNumberOfDtmfs", "stopTones")
_ACTION_FIELDS: dict[ActionType, tuple[str, ...]] = {
    ActionType.ANSWER: ("acceptModalityTypes",),
    ActionType.REJECT: (),
    ActionType.HANGUP: (),
    ActionType.PLAY_PROMPT: ("prompts",),
    ActionType.RECORD: (
        "playPrompt",
        "maxDurationInSeconds",
        "initialSilenceTimeoutInSeconds",
        "maxSilenceTimeoutInSeconds",
        "recordingFormat",
        "playBeep",
        "stopTones",
    ),
    ActionType.RECOGNIZE: (
        "playPrompt",
        "bargeInAllowed",
        "culture",
        "initialSilenceTimeoutInSeconds",
        "interdigitTimeoutInSeconds",
        "choices",
        "collectDigits",
    ),
}


def action_fields(kind: ActionType) -> tuple[str, ...]:
    """Every field name an action of this kind may carry (with operationId and action)."""
    return ("operationId", "action", *_ACTION_FIELDS.get(kind, ()))


WORKFLOW_FIELDS = ("actions", "links", "callState", "appState", "notificationSubscriptions")
OUTCOME_COMMON_FIELDS = ("type", "id", "outcome", "failureReason")
OUTCOME_FIELDS: dict[OutcomeType, tuple[str, ...]] = {
    OutcomeType.PLAY_PROMPT: ("completionReason",),
    OutcomeType.RECORD: ("completionReason", "lengthOfRecordingInSecs", "format"),
    OutcomeType.RECOGNIZE: ("choiceOutcome", "collectDigitsOutcome"),
}
CHOICE_OUTCOME_FIELDS = ("completionReason", "choiceName")
DIGITS_OUTCOME_FIELDS = ("completionReason", "digits")
RESULT_FIELDS = ("id", "appId", "callState", "operationOutcome", "links", "appState")
