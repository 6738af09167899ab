"""The rules on a Workflow's actions: the list, each action's kind and operationId, the order
the platform accepts them in, and answer's modalities; each kind's own fields are judged by
``prompts``, ``record`` and ``recognize``.
"""

from __future__ import annotations

from collections.abc import Mapping

from emulator.calling import ruleset as R
from emulator.calling.model import ActionType, ModalityType, WireEnum
from emulator.calling.rules.checker import Checker
from emulator.calling.rules.prompts import check_play_prompt
from emulator.calling.rules.recognize import check_recognize
from emulator.calling.rules.record import check_record
from emulator.calling.wire.fields import action_fields
from emulator.jsonutil import JSON, child, find_key

MAX_ACTIONS = 50
"""Actions checked in one Workflow (``WF-ACTIONS-LIMIT``): real Workflows have a handful."""
_RANK = {
    ActionType.ANSWER: 1,
    ActionType.REJECT: 1,
    ActionType.PLAY_PROMPT: 2,
    ActionType.RECORD: 2,
    ActionType.RECOGNIZE: 2,
    ActionType.HANGUP: 3,
}


def check_actions(
    c: Checker, doc: Mapping[str, JSON], keys: dict[str, str]
) -> list[ActionType | None]:
    """Check the Workflow's actions; the kind of each (None when unknown)."""
    where = c.where("$", keys, "actions")
    value = c.get(doc, keys, "actions")
    if value is None:
        c.add(R.WF_REQUIRED, where, "actions is required")
        return []
    actions = c.array(value, where)
    if actions is None:
        return []
    if not actions:
        c.add(R.WF_ACTIONS_EMPTY, where, "actions is empty: a Workflow has at least one action")
        return []
    if len(actions) > MAX_ACTIONS:
        c.add(
            R.WF_ACTIONS_LIMIT,
            where,
            f"{len(actions):,} actions; a Workflow has at most {MAX_ACTIONS} (real Workflows "
            f"have a handful): only the first {MAX_ACTIONS} are checked",
        )
        actions = actions[:MAX_ACTIONS]
    kinds = [check_action(c, a, child(where, i)) for i, a in enumerate(actions)]
    check_sequence(c, kinds, where)
    return kinds


def check_action(c: Checker, value: JSON, where: str) -> ActionType | None:
    """Check one action; its kind when known."""
    if not isinstance(value, dict):
        c.type_error(where, "an action object", value)
        return None
    kind = _kind(c, value, where)
    if kind is None:
        # The fields of an action of unknown kind cannot be judged: only find operationId.
        keys = {n: k for n in ("operationId", "action") if (k := find_key(value, n))}
    else:
        keys = c.fields(value, where, action_fields(kind))
    _operation_id(c, value, keys, where)
    if kind is ActionType.ANSWER:
        check_answer(c, value, keys, where)
    elif kind is ActionType.PLAY_PROMPT:
        check_play_prompt(c, value, keys, where)
    elif kind is ActionType.RECORD:
        check_record(c, value, keys, where)
    elif kind is ActionType.RECOGNIZE:
        check_recognize(c, value, keys, where)
    return kind


def _kind(c: Checker, value: Mapping[str, JSON], where: str) -> ActionType | None:
    """Check an action's ``action`` member; its kind when known."""
    kind_key = find_key(value, "action") or "action"
    raw_kind = value.get(kind_key)
    if raw_kind is None:
        c.add(R.WF_REQUIRED, child(where, "action"), "action is required")
        return None
    if not isinstance(raw_kind, str):
        c.type_error(child(where, kind_key), "a string", raw_kind)
        return None
    kind = ActionType.read(raw_kind)
    if kind is ActionType.NOT_UNDERSTOOD:
        allowed = ", ".join(ActionType.canonical())
        c.add(
            R.WF_ACTION_UNKNOWN,
            child(where, kind_key),
            f"unknown action '{raw_kind}' (one of: {allowed})",
            raw_kind,
        )
        return None
    if not kind.is_canonical(raw_kind):
        c.add(R.WF_CASING, child(where, kind_key), f"'{raw_kind}' is written '{kind.value}'",
              raw_kind)  # fmt: skip
    return kind


def _operation_id(c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
    """An action's operationId is present and not used by another action of the Workflow."""
    op_where = c.where(where, keys, "operationId")
    op = c.get(value, keys, "operationId")
    if op is None or op == "":
        c.add(
            R.WF_OPERATION_ID,
            op_where,
            "operationId is required: it ties the outcome to this action",
        )
    elif c.string(op, op_where) is not None:
        assert isinstance(op, str)
        if op in c.operation_ids:
            c.add(
                R.WF_OPERATION_ID_UNIQUE,
                op_where,
                f"operationId '{op}' is also used at {c.operation_ids[op]}",
                op,
            )
        c.operation_ids.setdefault(op, where)


def check_sequence(c: Checker, kinds: list[ActionType | None], where: str) -> None:
    """The actions come in an order the platform runs: answer or reject first in the reply to
    the Conversation, no repeats but playPrompt, then by rank, hangup last."""
    if c.context.first and kinds and kinds[0] not in (ActionType.ANSWER, ActionType.REJECT):
        shown = kinds[0].value if kinds[0] else "an invalid action"
        c.add(
            R.WF_FIRST_ACTION,
            child(where, 0),
            f"the reply to a Conversation starts with answer or reject, not {shown}",
        )
    seen: dict[ActionType, int] = {}
    highest: tuple[int, ActionType] | None = None
    for i, kind in enumerate(kinds):
        if kind is None:
            continue
        at = child(where, i)
        _placement(c, kind, at, len(kinds))
        if kind in seen and kind is not ActionType.PLAY_PROMPT:
            c.add(
                R.WF_ACTION_REPEATED,
                at,
                f"{kind.value} appears twice (first at {child(where, seen[kind])})",
            )
        seen.setdefault(kind, i)
        highest = _rank(c, kind, i, highest, where)


def _placement(c: Checker, kind: ActionType, at: str, count: int) -> None:
    """reject stands alone on an unanswered call; answer belongs to an unanswered call."""
    if kind is ActionType.REJECT:
        if count > 1:
            c.add(R.WF_REJECT_ALONE, at, "reject is the only action of its Workflow")
        if not c.context.first:
            c.add(
                R.WF_REJECT_PLACEMENT,
                at,
                "reject declines an unanswered call; this call is answered: use hangup",
            )
    if kind is ActionType.ANSWER and not c.context.first:
        c.add(R.WF_ANSWER_AGAIN, at, "the call is already answered; answer does nothing")


def _rank(
    c: Checker, kind: ActionType, i: int, highest: tuple[int, ActionType] | None, where: str
) -> tuple[int, ActionType] | None:
    """Check that action ``i`` does not come after one of a higher rank; the highest so far."""
    rank = _RANK[kind]
    if highest is not None and rank < _RANK[highest[1]]:
        if highest[1] is ActionType.HANGUP:
            c.add(
                R.WF_HANGUP_LAST,
                child(where, highest[0]),
                f"hangup is the last action; {kind.value} follows it",
            )
        else:
            c.add(
                R.WF_ORDER,
                child(where, i),
                f"{kind.value} comes after {highest[1].value}: "
                "the order is answer, then playPrompt/record/recognize, then hangup",
            )
    if highest is None or rank > _RANK[highest[1]]:
        return (i, kind)
    return highest


def check_answer(c: Checker, value: Mapping[str, JSON], keys: dict[str, str], where: str) -> None:
    at = c.where(where, keys, "acceptModalityTypes")
    items = c.array(c.get(value, keys, "acceptModalityTypes"), at)
    seen: set[WireEnum] = set()
    for i, item in enumerate(items or []):
        if not c.not_null(item, child(at, i), "a modality"):
            continue
        member = c.enum(ModalityType, item, child(at, i))
        if member is ModalityType.VIDEO_BASED_SCREEN_SHARING:
            c.add(
                R.WF_ANSWER_MODALITIES, child(at, i), "videoBasedScreenSharing cannot be accepted"
            )
        elif member is not None and member in seen:
            c.add(R.WF_ANSWER_MODALITIES, child(at, i), f"{member.value} is listed twice")
        if member is not None:
            seen.add(member)
