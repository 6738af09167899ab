"""The scenario expectations' rules (EXP-*, defined in ``rules.py``) and the ``Judge`` every
expectation is judged by:
the scenario, the facts of its transcript, and how a failure is said (``fail``, ``pick``).

The expectations themselves are judged by what they are about: ``expect_call.py`` (the call as a
whole, its recording), ``expect_prompts.py`` (prompts, choices, outcomes), ``expect_replies.py``
(a conversation's replies) and ``expect_run.py`` (latency and findings, of any run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from emulator.findings import Finding, Rule, Severity
from emulator.scenario.facts import Facts, summary_of
from emulator.scenario.model import Scenario
from emulator.transcripts.store import StoredEvent

ERROR = Severity.ERROR

T = TypeVar("T")
EVIDENCE_LINES = 12


def where(scenario: Scenario, line: int | None) -> str:
    """``file:line`` of an expectation (the scenario's own line when it has none)."""
    name = str(scenario.path) if scenario.path is not None else scenario.name
    line = line if line is not None else scenario.line
    return f"{name}:{line}" if line is not None else name


class Judge:
    """Judges the expectations of ``scenario`` on the facts of one run."""

    def __init__(self, scenario: Scenario, facts: Facts) -> None:
        self.scenario = scenario
        self.facts = facts
        self.is_call = scenario.kind == "call"
        self.noun = "a probe" if scenario.kind == "probe" else "a conversation"

    def fail(
        self, rule_id: str, line: int | None, message: str, evidence: Iterable[str] = ()
    ) -> Finding:
        """A failed expectation at ``line``, with at most ``EVIDENCE_LINES`` of evidence."""
        lines = list(evidence)
        if len(lines) > EVIDENCE_LINES:
            more = len(lines) - EVIDENCE_LINES
            lines = [*lines[:EVIDENCE_LINES], f"... and {more} more"]
        return Finding(
            rule_id, ERROR, where(self.scenario, line), message, "\n".join(lines) or None
        )

    def only_calls(self, line: int | None, rule: Rule, what: str) -> list[Finding]:
        """A failure when the scenario is not a call (``what`` belongs to calls); else none."""
        if self.is_call:
            return []
        return [self.fail(rule.id, line, f"expected {what}, but this scenario is {self.noun}: "
                          f"{what} belong to calls")]  # fmt: skip

    # --- choices, outcomes, replies: the n-th one, or any ---

    def pick(
        self,
        rule: Rule,
        line: int | None,
        noun: str,
        items: Sequence[T],
        index: int | None,
        want: str,
        matches: Callable[[T], bool],
        show: Callable[[T], str],
    ) -> list[Finding]:
        """``want`` completes "expected the recognize #0 ...": ``to offer [sales]``."""
        evidence = [f"#{i} {show(item)}" for i, item in enumerate(items)] or [f"(no {noun})"]
        if index is not None:
            if index >= len(items):
                got = f"only {count(len(items), noun)}" if items else f"no {noun} at all"
                return [self.fail(rule.id, line, f"expected {noun} #{index} {want}, got {got}",
                                  evidence)]  # fmt: skip
            if not matches(items[index]):
                return [self.fail(rule.id, line, f"expected {noun} #{index} {want}, got "
                                  f"{show(items[index])}", evidence)]  # fmt: skip
            return []
        if any(matches(item) for item in items):
            return []
        got = "; ".join(show(item) for item in items) or f"no {noun} at all"
        article = "an" if noun[0] in "aeiou" else "a"
        return [self.fail(rule.id, line, f"expected {article} {noun} {want}, got {got}", evidence)]


# --- wording -------------------------------------------------------------------------------------


def event_line(event: StoredEvent) -> str:
    """An event as one line of evidence: its virtual time and summary."""
    at = f"{event.vtime:7.2f}s" if event.vtime is not None else "       -"
    return f"{at}  {summary_of(event)}"


def short(text: str, limit: int = 60) -> str:
    """At most ``limit`` characters of ``text`` (an ellipsis ends what is cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def names_of(names: Iterable[str]) -> str:
    """``[a, b]``."""
    return "[" + ", ".join(names) + "]"


def count(n: int, word: str) -> str:
    """``1 reply`` / ``2 replies``."""
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{n} {word if n == 1 else plural}"


def unique(items: Iterable[str]) -> list[str]:
    """The items without repeats, in order."""
    return list(dict.fromkeys(items))
