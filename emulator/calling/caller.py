"""The scripted caller: what a person on the phone does, as a list of steps.

A script maps one to one onto the ``caller:`` list of a scenario file::

    caller:
      - listen                      # hear the next prompt out before acting
      - press: "2"                  # or {digits: "1234#", gap: 0.5s, after: 3.6s}
      - say: "sales"                # speech, matched against speechVariation / choice names
      - silence: 6s                 # say nothing (drives timeouts)
      - talk: 4s                    # speak into a recording, then fall silent
      - talk: {for: 30s, then: "#"} # speak, then press a stop tone
      - hangup                      # or {hangup: {during: playPrompt, after: 1.5s}}

and onto the inline form ``press 2; silence 6s; say sales; talk 4s; hangup``.

How the engine consumes steps (docs/engine.md has the full account):

- Steps are consumed by *input turns*: each recognize or record action is one turn. A plain
  playPrompt action only plays; the caller hears it out.
- In a turn the caller acts at the earliest moment its input counts: during the recognize prompt
  when barge-in is allowed, otherwise when the prompt ends; for a record, when recording starts.
  ``listen`` first makes the caller hear the prompt to its end.
- Within a turn, steps run one after another in virtual time until the action completes; a step
  that has not started when the action completes is left for the next turn.
- ``hangup`` hangs up when the caller next hears something (a prompt or a turn); with ``during``
  it waits for that kind of action and hangs up ``after`` seconds into it.
- When the steps run out the caller stays on the line in silence.

A script may also carry reactive ``when`` rules (``caller: {steps: [...], when: [...]}``): at each
input turn the text of the prompt the caller heard is tested against each rule in order
(``re.search``, ignoring case); the first that matches supplies that turn's steps instead of the
sequential script, whose place does not move. A ``once`` rule is used at most once per call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from emulator.calling.model import DTMF_KEYS, ActionType
from emulator.errors import CallerScriptError
from emulator.patterns import compile_pattern

DEFAULT_DIGIT_GAP = 0.25
"""Seconds between two keys of one ``press`` step."""


@dataclass(frozen=True, slots=True)
class Listen:
    """Hear the next prompt out before acting."""


@dataclass(frozen=True, slots=True)
class Press:
    """Press keys, ``gap`` seconds apart, the first ``after`` seconds after the step before
    (or the turn's start: into a prompt that allows barge-in), with no silence in between."""

    digits: str
    gap: float = DEFAULT_DIGIT_GAP
    after: float = 0.0


@dataclass(frozen=True, slots=True)
class Say:
    """Speak a phrase (duration estimated at the speech rate of ``engine.SPEECH_SECONDS_PER_WORD``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Silence:
    """Say and press nothing for a while."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Talk:
    """Speak into a recording for a while, then optionally press keys (a stop tone)."""

    seconds: float
    then: str | None = None


@dataclass(frozen=True, slots=True)
class HangUp:
    """Hang up; with ``during``, ``after`` seconds into the next action of that kind."""

    during: ActionType | None = None
    after: float = 0.0


@dataclass(frozen=True, slots=True)
class At:
    """Not before virtual time ``at``: when a live caller acted (``emulator.calling.live``).
    Never written in a scenario. In a turn the engine goes on to the next step at that moment (a
    key then barges in where the menu allows it); before a plain prompt, a hang-up after it
    happens then."""

    at: float


@dataclass(frozen=True, slots=True, eq=False)
class Held:
    """A live caller began to hold to talk: a talk open until its ``Released``, which sounds as
    ``sound`` holds (the microphone's 16-bit little-endian mono PCM at ``rate``, growing while
    held). Never a caller step: the live session opens the talk (``liveplay``)."""

    sound: bytearray
    rate: int


@dataclass(frozen=True, slots=True)
class Released:
    """A live caller let go of the microphone: the talk its hold opened ends now, after
    ``seconds`` of real time held. Never a caller step."""

    seconds: float


Live = Held | Released
"""A live caller's act that is not a caller step."""


Step = Listen | Press | Say | Silence | Talk | HangUp | At

STEP_NAMES = ("listen", "press", "say", "silence", "talk", "hangup")
HANGUP_TARGETS = (ActionType.PLAY_PROMPT, ActionType.RECOGNIZE, ActionType.RECORD)


@dataclass(frozen=True, slots=True)
class WhenRule:
    """A reactive rule: at an input turn whose prompt text matches ``pattern`` (``re.search``,
    ignoring case), the caller does ``steps`` in that turn instead of its sequential steps.
    ``once``: the rule is used at most once per call."""

    pattern: str
    steps: tuple[Step, ...] = ()
    once: bool = False

    def __post_init__(self) -> None:
        problem = regex_problem(self.pattern)
        if problem is not None:
            raise CallerScriptError("when", problem)

    def matches(self, text: str) -> bool:
        return _compiled(self.pattern).search(text) is not None


def _compiled(pattern: str) -> re.Pattern[str]:
    return compile_pattern(pattern, re.IGNORECASE)


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable regular expression, or None when it is."""
    try:
        _compiled(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        return f"not a valid regular expression: {e}"
    return None


RULE_KEYS = ("prompt", "do", "once")


@dataclass(frozen=True, slots=True)
class CallerScript:
    """An immutable list of steps, and the reactive rules. The engine keeps its own cursor into
    the steps, and the set of ``once`` rules already used."""

    steps: tuple[Step, ...] = ()
    rules: tuple[WhenRule, ...] = ()

    @classmethod
    def of(cls, *steps: Step) -> CallerScript:
        return cls(tuple(steps))

    @classmethod
    def from_data(cls, data: object, where: str = "caller") -> CallerScript:
        """Read the ``caller:`` value of a scenario (already parsed from YAML or JSON): a list of
        steps, or a mapping ``{steps: [...], when: [{prompt, do, once}, ...]}``."""
        if isinstance(data, Mapping) and any(k in data for k in ("steps", "when")):
            _only_keys(data, ("steps", "when"), where)
            steps = _steps(data.get("steps", []), f"{where}.steps")
            rules = data.get("when", [])
            if not isinstance(rules, list):
                raise CallerScriptError(
                    f"{where}.when", f"expected a list of rules, got {_kind(rules)}"
                )
            return cls(steps, tuple(_rule(r, f"{where}.when[{i}]") for i, r in enumerate(rules)))
        return cls(_steps(data, where))

    def rule_for(self, heard: str, used: frozenset[int] = frozenset()) -> int | None:
        """The index of the first rule that matches ``heard``, skipping ``once`` rules in
        ``used``; None when no rule matches."""
        for index, rule in enumerate(self.rules):
            if rule.once and index in used:
                continue
            if rule.matches(heard):
                return index
        return None

    @classmethod
    def from_inline(cls, text: str) -> CallerScript:
        """Read the inline form: steps separated by ``;``, each ``name [argument]``::

        listen; press 1234# gap 0.5s; say sales; silence 6s; talk 30s then #;
        hangup during playPrompt after 1.5s
        """
        steps: list[Step] = []
        for i, part in enumerate(p.strip() for p in text.split(";")):
            if not part:
                continue
            where = f"step {i + 1} ('{part}')"
            steps.append(parse_step(_inline_data(part, where), where))
        return cls(tuple(steps))


def _steps(data: object, where: str) -> tuple[Step, ...]:
    if not isinstance(data, list):
        raise CallerScriptError(where, f"expected a list of steps, got {_kind(data)}")
    return tuple(parse_step(item, f"{where}[{i}]") for i, item in enumerate(data))


def _rule(data: object, where: str) -> WhenRule:
    if not isinstance(data, Mapping):
        raise CallerScriptError(where, f"expected a rule {{prompt, do, once}}, got {_kind(data)}")
    _only_keys(data, RULE_KEYS, where)
    for key in ("prompt", "do"):
        if key not in data:
            raise CallerScriptError(where, f"expected '{key}'")
    pattern = data["prompt"]
    if not isinstance(pattern, str) or not pattern:
        raise CallerScriptError(
            f"{where}.prompt", f"expected a regular expression, got {_kind(pattern)}"
        )
    problem = regex_problem(pattern)
    if problem is not None:
        raise CallerScriptError(f"{where}.prompt", problem)
    once = data.get("once", False)
    if not isinstance(once, bool):
        raise CallerScriptError(f"{where}.once", f"expected true or false, got {_kind(once)}")
    return WhenRule(pattern, _steps(data["do"], f"{where}.do"), once)


def _inline_data(part: str, where: str) -> object:
    """The YAML form of one inline step."""
    name, _, arg = part.partition(" ")
    arg = arg.strip()
    if not arg:
        return name
    words = arg.split()
    if name == "press" and len(words) in (3, 5) and set(words[1::2]) <= {"gap", "after"}:
        return {name: {"digits": words[0], **dict(zip(words[1::2], words[2::2], strict=True))}}
    if name == "talk" and len(words) == 3 and words[1] == "then":
        return {name: {"for": words[0], "then": words[2]}}
    if name == "hangup":
        if len(words) % 2 or any(w not in ("during", "after") for w in words[::2]):
            raise CallerScriptError(
                f"{where}.hangup", "expected 'hangup [during ACTION] [after DURATION]'"
            )
        return {name: dict(zip(words[::2], words[1::2], strict=True))}
    return {name: arg}


# --- Reading steps -----------------------------------------------------------------------------


def parse_step(data: object, where: str) -> Step:
    """One step from its YAML form: a bare name, or a one-key mapping ``{name: argument}``."""
    if isinstance(data, str):
        name, arg = data.strip(), None
        if name not in ("listen", "hangup"):
            if name in STEP_NAMES:
                raise CallerScriptError(
                    where, f"'{name}' needs an argument, e.g. {_EXAMPLES[name]}"
                )
            raise CallerScriptError(where, f"unknown step '{name}'{_did_you_mean(name)}")
    elif isinstance(data, Mapping):
        if len(data) != 1:
            keys = ", ".join(str(k) for k in data)
            raise CallerScriptError(where, f"a step has exactly one key, got: {keys}")
        ((name, arg),) = data.items()
        if not isinstance(name, str) or name not in STEP_NAMES:
            raise CallerScriptError(where, f"unknown step '{name}'{_did_you_mean(str(name))}")
    else:
        raise CallerScriptError(where, f"expected a step name or a mapping, got {_kind(data)}")
    where = f"{where}.{name}"
    if name == "listen":
        if arg is not None:
            raise CallerScriptError(where, "listen takes no argument")
        return Listen()
    if name == "press":
        return _press(arg, where)
    if name == "say":
        if not isinstance(arg, str | int) or isinstance(arg, bool) or not str(arg).strip():
            raise CallerScriptError(where, f"expected the words to say, got {_kind(arg)}")
        return Say(str(arg))
    if name == "silence":
        return Silence(parse_duration(arg, where))
    if name == "talk":
        return _talk(arg, where)
    return _hangup(arg, where)


_EXAMPLES = {
    "press": 'press: "2"',
    "say": 'say: "sales"',
    "silence": "silence: 6s",
    "talk": "talk: 4s",
}


def _press(arg: object, where: str) -> Press:
    gap, after = DEFAULT_DIGIT_GAP, 0.0
    if isinstance(arg, Mapping):
        _only_keys(arg, ("digits", "gap", "after"), where)
        if "digits" not in arg:
            raise CallerScriptError(where, "expected 'digits'")
        if "gap" in arg:
            gap = parse_duration(arg["gap"], f"{where}.gap")
        if "after" in arg:
            after = parse_duration(arg["after"], f"{where}.after")
        arg = arg["digits"]
    digits = _digits(arg, where)
    if not digits:
        raise CallerScriptError(where, "expected at least one key to press")
    return Press(digits, gap, after)


def _talk(arg: object, where: str) -> Talk:
    if isinstance(arg, Mapping):
        _only_keys(arg, ("for", "then"), where)
        if "for" not in arg:
            raise CallerScriptError(where, "expected 'for' (how long to talk)")
        then = None if arg.get("then") is None else _digits(arg["then"], f"{where}.then")
        return Talk(parse_duration(arg["for"], f"{where}.for"), then or None)
    return Talk(parse_duration(arg, where))


def _hangup(arg: object, where: str) -> HangUp:
    if arg is None:
        return HangUp()
    if not isinstance(arg, Mapping):
        raise CallerScriptError(
            where, f"expected {{during: playPrompt, after: 1.5s}}, got {_kind(arg)}"
        )
    _only_keys(arg, ("during", "after"), where)
    during = None
    if "during" in arg:
        raw = arg["during"]
        during = ActionType.read(raw) if isinstance(raw, str) else ActionType.NOT_UNDERSTOOD
        if during not in HANGUP_TARGETS:
            names = ", ".join(t.value for t in HANGUP_TARGETS)
            raise CallerScriptError(f"{where}.during", f"expected one of {names}, got {raw!r}")
    after = parse_duration(arg["after"], f"{where}.after") if "after" in arg else 0.0
    return HangUp(during, after)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|min)?\s*$")


def parse_duration(value: object, where: str) -> float:
    """Seconds from ``6``, ``1.5``, ``"6s"``, ``"500ms"``, ``"2m"``."""
    if isinstance(value, bool):
        raise CallerScriptError(where, "expected a duration such as 6s or 500ms, got a boolean")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        unit = m.group(2) or "s"
        seconds = float(m.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0}[unit]
    else:
        raise CallerScriptError(where, f"expected a duration such as 6s or 500ms, got {value!r}")
    if not 0 <= seconds <= 24 * 3600:
        raise CallerScriptError(where, f"duration {value!r} is outside 0 to 24h")
    return seconds


def _digits(value: object, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str):
        raise CallerScriptError(where, f'expected keys such as "1234#", got {_kind(value)}')
    keys = value.replace(" ", "")
    bad = [c for c in keys if c not in DTMF_KEYS]
    if bad:
        raise CallerScriptError(where, f"'{bad[0]}' is not a key (0-9 * # A B C D)")
    return keys


def _only_keys(arg: Mapping[object, object], allowed: Sequence[str], where: str) -> None:
    for key in arg:
        if key not in allowed:
            close = _did_you_mean(str(key), allowed)
            raise CallerScriptError(
                where, f"unknown key '{key}'{close} (expected: {', '.join(allowed)})"
            )


def _did_you_mean(name: str, options: Sequence[str] = STEP_NAMES) -> str:
    import difflib

    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def describe(step: Step) -> str:
    """The inline form of one step (``from_inline`` reads it back; not ``At``, a live caller's
    moment, shown as ``at 3.2s``)."""
    if isinstance(step, Listen):
        return "listen"
    if isinstance(step, At):
        return f"at {step.at:.3f}s"
    if isinstance(step, Press):
        gap = f" gap {step.gap:g}s" if step.gap != DEFAULT_DIGIT_GAP else ""
        return f"press {step.digits}{gap}" + (f" after {step.after:g}s" if step.after else "")
    if isinstance(step, Say):
        return f"say {step.text}"
    if isinstance(step, Silence):
        return f"silence {step.seconds:g}s"
    if isinstance(step, Talk):
        return f"talk {step.seconds:g}s" + (f" then {step.then}" if step.then else "")
    during = f" during {step.during.value}" if step.during is not None else ""
    after = f" after {step.after:g}s" if step.after else ""
    return f"hangup{during}{after}"
