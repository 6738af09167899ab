"""Selecting scenarios: ``-k`` expressions (parsed by hand, like pytest's) and ``--tag``.

A ``-k`` expression that does not parse is a ``KeywordError`` (a ``ConfigError``: exit 2), with
its ``column``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from emulator.runner.targets import ConfigError
from emulator.scenario.model import Scenario


class KeywordError(ConfigError):
    """A ``-k`` expression that does not parse; ``column`` is 1-based."""

    def __init__(self, expression: str, column: int, message: str) -> None:
        super().__init__(f"-k {expression!r}: {message} at column {column}")
        self.expression = expression
        self.column = column


Matcher = Callable[[Sequence[str]], bool]
"""Whether a scenario with these names (its id, its file) is selected."""
_TOKEN = re.compile(
    r"""\s*(?:(?P<paren>[()])|'(?P<sq>[^']*)'|"(?P<dq>[^"]*)"|(?P<word>[^\s()'"]+))"""
)
_KEYWORDS = ("and", "or", "not")


def compile_keyword(expression: str) -> Matcher:
    """A ``-k`` expression as a matcher, like pytest's: a name is selected when the word is a
    substring of its id or of its file's path (ignoring case); words combine with ``and``,
    ``or``, ``not`` and parentheses; a quoted word may hold spaces (``'"sales by keypad"'``).
    An empty expression selects everything. Parsed by hand (no ``eval``)."""
    tokens = _tokens(expression)
    if not tokens:
        return lambda names: True
    parser = _KeywordParser(expression, tokens)
    matcher = parser.expression()
    if parser.index < len(tokens):
        column, text, _ = tokens[parser.index]
        raise KeywordError(expression, column, f"unexpected {text!r}")
    return matcher


def _tokens(expression: str) -> list[tuple[int, str, str]]:
    """(column, text, kind) with kind one of ``(``, ``)``, ``op``, ``word``."""
    out: list[tuple[int, str, str]] = []
    pos = 0
    while pos < len(expression):
        if expression[pos:].strip() == "":
            break
        m = _TOKEN.match(expression, pos)
        if m is None or m.end() == pos:
            column = len(expression) - len(expression[pos:].lstrip()) + 1
            raise KeywordError(expression, column, "unclosed quote")
        start = m.start(m.lastgroup or 0) + 1
        if m.group("paren"):
            out.append((start, m.group("paren"), m.group("paren")))
        elif m.group("word") is not None:
            word = m.group("word")
            out.append((start, word, "op" if word in _KEYWORDS else "word"))
        else:
            quoted = m.group("sq") if m.group("sq") is not None else m.group("dq")
            out.append((start - 1, quoted, "word"))
        pos = m.end()
    return out


class _KeywordParser:
    """expression := term ('or' term)*; term := factor ('and' factor)*;
    factor := 'not' factor | '(' expression ')' | word."""

    def __init__(self, expression: str, tokens: list[tuple[int, str, str]]) -> None:
        self.text = expression
        self.tokens = tokens
        self.index = 0

    def peek(self) -> tuple[int, str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def accept(self, kind: str, text: str | None = None) -> bool:
        token = self.peek()
        if token is not None and token[2] == kind and (text is None or token[1] == text):
            self.index += 1
            return True
        return False

    def expression(self) -> Matcher:
        parts = [self.term()]
        while self.accept("op", "or"):
            parts.append(self.term())
        if len(parts) == 1:
            return parts[0]
        return lambda names: any(p(names) for p in parts)

    def term(self) -> Matcher:
        parts = [self.factor()]
        while self.accept("op", "and"):
            parts.append(self.factor())
        if len(parts) == 1:
            return parts[0]
        return lambda names: all(p(names) for p in parts)

    def factor(self) -> Matcher:
        token = self.peek()
        if token is None:
            raise KeywordError(
                self.text, len(self.text) + 1, "expected a word or '(' (the expression ends)"
            )
        column, text, kind = token
        if kind == "op" and text == "not":
            self.index += 1
            inner = self.factor()
            return lambda names: not inner(names)
        if kind == "(":
            self.index += 1
            inner = self.expression()
            if not self.accept(")"):
                after = self.peek()
                where = after[0] if after else len(self.text) + 1
                raise KeywordError(self.text, where, "expected ')'")
            return inner
        if kind == "word":
            self.index += 1
            needle = text.lower()
            return lambda names: any(needle in n.lower() for n in names)
        raise KeywordError(self.text, column, f"expected a word or '(', got {text!r}")


def select(
    scenarios: Sequence[Scenario], keyword: str | None = None, tags: Sequence[str] = ()
) -> list[Scenario]:
    """The scenarios ``-k keyword`` and ``--tag`` (any of them) select, in order."""
    matcher = compile_keyword(keyword or "")
    wanted = set(tags)
    return [
        s
        for s in scenarios
        if matcher((s.id, str(s.path) if s.path else ""))
        and (not wanted or wanted.intersection(s.tags))
    ]
