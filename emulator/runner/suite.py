"""``botemu test PATH... --bot URL``: run scenario files against a bot, as a CI step.

``register(subparsers)`` adds the command to a parser built elsewhere (``emulator/cli.py``); the
handler takes ``(args, out)`` and returns the exit code:

- 0: every selected scenario ran and passed;
- 1: at least one failed, or could not run (the bot did not answer, ...);
- 2: a usage or configuration error, a scenario file that is not valid (each problem one line,
  ``file:line:col: message``; nothing runs), or **zero scenarios selected** (a CI job that tests
  nothing must not pass).

The run, in order: read every scenario file under the paths (``loader.discover`` and
``load_scenarios``; each matrix entry is its own scenario), select with ``-k`` and ``--tag``, run
them with ``-j`` at a time through one ``Runner`` (printing one line as each finishes), then print
each failure in detail and a summary table, and write ``--junit`` / ``--json``. The rendering is
``reports.py``; the formats are documented in docs/testing.md.

Each scenario runs with its own seed, ``derive_seed(run seed, scenario id)``: the same ``--seed``
gives every scenario the same seed whatever else is selected and whatever ``-j`` is, so one
failing scenario of a big run repeats alone with ``-k``.

Errors: ``ConfigError`` (a ``BotemuError``) is a usage or configuration problem, one line, exit 2;
``KeywordError`` (a ``ConfigError``) a ``-k`` expression that does not parse, with its
``column``. The loader's ``ScenarioError`` is printed as it is, one line per problem.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO
from urllib.parse import urlsplit

import yaml

from emulator.errors import BotemuError
from emulator.findings import Finding
from emulator.runner.runner import derive_seed
from emulator.scenario.loader import ScenarioError, discover, load_scenarios
from emulator.scenario.model import Scenario
from emulator.scenario.reports import (
    Entry,
    Paint,
    RuleLookup,
    RunReport,
    ScenarioResultLike,
    SkippedResult,
    header,
    json_report,
    junit_xml,
    progress_line,
    render_failure,
    summary,
)
from emulator.transcripts.store import TranscriptError, TranscriptStore, default_db

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
ENV_PASSWORD = "BOT_APP_PASSWORD"
CONFIG_KEYS = ("bot", "messaging_bot", "app_id", "app_password", "emulator", "certs", "ca")
_TEXT_TAGS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int")
"""A config value is a string; a number is taken as written (an app id or password of digits)."""


class ConfigError(BotemuError):
    """A usage or configuration problem: one line, exit 2."""


# --- the target -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TargetSettings:
    """The bots under test and how to reach them (the runner's ``Target``): ``bot`` a calling
    bot's URL, ``messaging_bot`` a messaging bot's endpoint with its ``app_id`` and
    ``app_password``, ``emulator`` a running botemu to chat through (else the runner starts
    one), ``certs``/``ca`` for https bots."""

    bot: str | None = None
    messaging_bot: str | None = None
    app_id: str | None = None
    app_password: str | None = None
    emulator: str | None = None
    certs: Path | None = None
    ca: Path | None = None
    no_token: bool = False
    legacy_validation_outcome: bool = False
    control_certs: Path | None = None
    """The running botemu's certificates directory (its control secret), when not ``certs``."""


def read_config(path: Path) -> dict[str, str]:
    """The target keys of a YAML config file (``CONFIG_KEYS``; every value a string). Problems
    raise ``ConfigError`` with ``file:line:col``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not YAML: {e.problem}") from None
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"{_at(path, node)}: expected a mapping of settings ({', '.join(CONFIG_KEYS)})"
        )
    out: dict[str, str] = {}
    for key, value in node.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name not in CONFIG_KEYS:
            raise ConfigError(
                f"{_at(path, key)}: unknown setting {name!r} (known: {', '.join(CONFIG_KEYS)})"
            )
        if name in out:
            raise ConfigError(f"{_at(path, key)}: {name} is given twice")
        if not isinstance(value, yaml.ScalarNode) or value.tag not in _TEXT_TAGS:
            raise ConfigError(f"{_at(path, value)}: {name} is a string")
        out[name] = str(value.value)
    return out


def _at(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"


def target_settings(
    flags: Mapping[str, Any], environ: dict[str, str] | None = None
) -> TargetSettings:
    """The target from the configuration file ``flags["config"]`` and the flags (flags win;
    a flag that is None is not given); the password falls back to ``$BOT_APP_PASSWORD``."""
    environ = dict(os.environ) if environ is None else environ
    config = flags.get("config")
    data = read_config(config) if config is not None else {}

    def pick(name: str) -> str | None:
        flag = flags.get(name)
        return str(flag) if flag is not None else data.get(name)

    password = pick("app_password") or environ.get(ENV_PASSWORD) or None
    target = TargetSettings(
        bot=pick("bot"),
        messaging_bot=pick("messaging_bot"),
        app_id=pick("app_id"),
        app_password=password,
        emulator=pick("emulator"),
        certs=_path(pick("certs")),
        ca=_path(pick("ca")),
        no_token=bool(flags.get("no_token", False)),
        legacy_validation_outcome=bool(flags.get("legacy_validation_outcome", False)),
    )
    for flag, url in (("--bot", target.bot), ("--messaging-bot", target.messaging_bot),
                      ("--emulator", target.emulator)):  # fmt: skip
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigError(f"{flag} {url!r} is not an http(s) URL")
    return target


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def needs(scenario: Scenario) -> Literal["calling", "messaging"]:
    """The bot a scenario runs against: a call and ``probe: auth-calling`` need the calling bot;
    a conversation (``messaging:``) and ``probe: auth`` the messaging bot."""
    return "calling" if scenario.kind == "call" or scenario.probe == "auth-calling" else "messaging"


SKIP_REASONS = {
    "calling": "needs a calling bot: give --bot URL (or bot: in --config)",
    "messaging": "needs a messaging bot: give --messaging-bot URL (or messaging_bot: in --config)",
}
"""Why ``botemu test`` skips a scenario whose bot was not given."""


def split_by_target(
    has_calling: bool,
    has_messaging: bool,
    scenarios: Sequence[Scenario],
    reasons: Mapping[str, str] = SKIP_REASONS,
) -> tuple[list[Scenario], list[SkippedResult]]:
    """(the scenarios that can run, a ``SkippedResult`` for each of the others): a scenario
    whose bot (``needs``) is not there is skipped with ``reasons[kind]``."""
    runnable: list[Scenario] = []
    skipped: list[SkippedResult] = []
    for scenario in scenarios:
        kind = needs(scenario)
        if has_calling if kind == "calling" else has_messaging:
            runnable.append(scenario)
        else:
            skipped.append(SkippedResult(scenario, reasons[kind]))
    return runnable, skipped


def check_target(
    target: TargetSettings, scenarios: Sequence[Scenario]
) -> tuple[list[Scenario], list[SkippedResult]]:
    """Split a run by the bots it was given (``split_by_target``): the scenarios whose bot is
    missing are skipped, the rest run. A run of which nothing can run is refused (ConfigError,
    exit 2), naming the option that is missing."""
    runnable, skipped = split_by_target(
        target.bot is not None, target.messaging_bot is not None, scenarios
    )
    if runnable or not skipped:
        return runnable, skipped
    calls = sum(needs(s) == "calling" for s in scenarios)
    talks = len(scenarios) - calls
    if calls:
        raise ConfigError(f"{_are(calls, 'a call', 'calls')}: give --bot URL (or bot: in --config)")
    raise ConfigError(f"{_are(talks, 'a conversation', 'conversations')}: give "
                      "--messaging-bot URL, with --app-id ID and --app-password (or "
                      f"${ENV_PASSWORD}) for a bot with credentials")  # fmt: skip


# --- selection ------------------------------------------------------------------------------------


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


# --- the runner, behind a seam --------------------------------------------------------------------


class RunnerLike(Protocol):
    async def run(self, scenario: Scenario) -> ScenarioResultLike: ...


class OpenRunner(Protocol):
    def __call__(
        self,
        target: TargetSettings,
        store: TranscriptStore,
        *,
        seed: int,
        max_workflows: int | None,
        timeout: float | None,
    ) -> AbstractAsyncContextManager[RunnerLike]: ...


@dataclass(frozen=True, slots=True)
class Backend:
    """How scenarios are read and run: the loader and runner by default (tests pass fakes)."""

    collect: Callable[[Sequence[Path]], list[Scenario]]
    open_runner: OpenRunner


def default_backend() -> Backend:
    return Backend(collect=collect_scenarios, open_runner=open_runner)


def collect_scenarios(paths: Sequence[Path]) -> list[Scenario]:
    """Every scenario (each matrix entry) of every scenario file under ``paths``, in order.
    Raises ``ConfigError`` for a path that does not exist, and one ``ScenarioError`` holding
    every problem of every file (``.errors``)."""
    for path in paths:
        if not path.exists():
            raise ConfigError(f"{path}: no such file or directory")
    scenarios: list[Scenario] = []
    problems: list[ScenarioError] = []
    for file in discover(list(paths)):
        try:
            scenarios += load_scenarios(file)
        except ScenarioError as e:
            problems += e.errors
    if problems:
        first, *rest = problems
        raise ScenarioError(first.file, first.line, first.column, first.message, more=rest)
    return scenarios


def open_runner(
    target: TargetSettings,
    store: TranscriptStore,
    *,
    seed: int,
    max_workflows: int | None,
    timeout: float | None,
) -> AbstractAsyncContextManager[RunnerLike]:
    """``emulator.runner.runner.Runner`` for ``target``."""
    from emulator.runner.runner import Runner, Target

    made = Target(
        bot_url=target.bot,
        messaging_bot=target.messaging_bot,
        app_id=target.app_id,
        app_password=target.app_password,
        certs=target.certs,
        ca=target.ca,
        emulator=target.emulator,
        no_token=target.no_token,
        legacy_validation_outcome=target.legacy_validation_outcome,
        control_certs=target.control_certs,
    )
    return Runner(made, store, seed=seed, max_workflows=max_workflows, timeout=timeout)


def rule_lookup() -> RuleLookup:
    """Rule id -> ``Rule``, over every registry botemu has (``botemu rules``) and the scenario
    expectations' own."""
    from emulator.rulebook import rule_index

    return rule_index().get


@dataclass(frozen=True, slots=True)
class CrashedResult:
    """The result of a scenario whose run raised (a bug in botemu, not in the bot): reported
    as an error with the exception, so that one crash does not lose the run."""

    scenario: Scenario
    error: str
    duration: float
    passed: bool = False
    failures: tuple[Finding, ...] = ()
    findings: tuple[Finding, ...] = ()
    transcript_ids: tuple[str, ...] = ()
    vtime: float | None = None
    ladder: tuple[str, ...] = ()


# --- a run -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunOptions:
    """A parsed ``botemu test`` command line."""

    paths: tuple[Path, ...]
    target: TargetSettings
    jobs: int = 1
    seed: int | None = None
    keyword: str | None = None
    tags: tuple[str, ...] = ()
    db: Path = field(default_factory=default_db)
    max_workflows: int | None = None
    timeout: float | None = None
    junit: Path | None = None
    json: str | None = None


def run_options(
    options: RunOptions,
    out: TextIO,
    err: TextIO,
    backend: Backend | None = None,
    *,
    prog: str = "botemu test",
) -> int:
    """``run_tests`` with its errors printed the way the command prints them (each problem of
    an invalid scenario file one line, a configuration problem one line after ``prog``: exit 2).
    ``botemu demo`` runs its scenarios through this."""
    try:
        return run_tests(options, out, err, backend or default_backend())
    except ScenarioError as e:
        for problem in e.errors:
            err.write(f"{problem}\n")
        return EXIT_USAGE
    except BotemuError as e:
        err.write(f"{prog}: {e}\n")
        return EXIT_USAGE


def run_tests(options: RunOptions, out: TextIO, err: TextIO, backend: Backend) -> int:
    """Collect, select, run and report; the exit code. Raises ``ScenarioError`` (invalid
    files) and ``BotemuError`` (configuration) before anything runs."""
    scenarios = backend.collect(options.paths)
    if not scenarios:
        shown = " ".join(str(p) for p in options.paths)
        raise ConfigError(f"no scenarios under {shown}: nothing to test")
    selected = select(scenarios, options.keyword, options.tags)
    if not selected:
        filters = [f"-k {options.keyword!r}"] if options.keyword else []
        filters += [f"--tag {tag}" for tag in options.tags]
        how = " ".join(filters)
        raise ConfigError(f"no scenarios selected: {_count(len(scenarios), 'scenario')} found, "
                          f"none matches {how}")  # fmt: skip
    runnable, skipped = check_target(options.target, selected)
    human = err if options.json == "-" else out
    paint = Paint.for_stream(human)
    seed = options.seed if options.seed is not None else secrets.randbelow(2**32)
    files = len({str(s.path) for s in selected})
    human.write(
        header(len(selected), files, len(scenarios) - len(selected), seed, options.jobs) + "\n"
    )
    human.flush()

    def finished(entry: Entry) -> None:
        human.write(progress_line(entry, paint) + "\n")
        human.flush()

    skips = {id(s.scenario): Entry(s, derive_seed(seed, s.scenario.id)) for s in skipped}
    for entry in skips.values():
        finished(entry)

    try:
        store = TranscriptStore(options.db, write_behind=True)
    except TranscriptError as e:
        raise ConfigError(str(e)) from e
    started, clock = time.time(), time.perf_counter()
    with store:
        try:
            ran = iter(asyncio.run(execute(runnable, backend, options, seed, store, finished)))
        except OSError as e:  # the runner could not start (an in-process botemu's port, ...)
            raise ConfigError(f"cannot run: {e.strerror or e}") from e
    entries = [skips.get(id(s)) or next(ran) for s in selected]  # in the order of selection
    report = RunReport(
        entries=tuple(entries),
        seed=seed,
        started=started,
        duration=time.perf_counter() - clock,
        deselected=len(scenarios) - len(selected),
        jobs=options.jobs,
        db=str(options.db),
    )
    rules = rule_lookup()
    failed = [e for e in report.entries if e.status in ("failed", "error")]
    if failed:
        human.write("\n" + "\n\n".join(render_failure(e, rules, paint) for e in failed) + "\n")
    human.write("\n" + summary(report, paint) + "\n")
    human.flush()
    code = _write_reports(report, rules, options, out, err)
    return code if code is not None else report.exit_code


async def execute(
    scenarios: Sequence[Scenario],
    backend: Backend,
    options: RunOptions,
    seed: int,
    store: TranscriptStore,
    finished: Callable[[Entry], None],
) -> list[Entry]:
    """Run the scenarios, ``options.jobs`` at a time, through one runner; call ``finished`` as
    each ends; the entries in the order of ``scenarios``."""
    entries: list[Entry | None] = [None] * len(scenarios)
    slots = asyncio.Semaphore(options.jobs)
    async with backend.open_runner(options.target, store, seed=seed,
                                   max_workflows=options.max_workflows,
                                   timeout=options.timeout) as runner:  # fmt: skip

        async def one(index: int, scenario: Scenario) -> None:
            async with slots:
                began = time.perf_counter()
                try:
                    result: ScenarioResultLike = await runner.run(scenario)
                except Exception as e:  # a runner bug: an error of this scenario, not of the run
                    result = CrashedResult(scenario, f"botemu crashed: {type(e).__name__}: {e}",
                                           time.perf_counter() - began)  # fmt: skip
                entry = Entry(result, derive_seed(seed, scenario.id))
                entries[index] = entry
                finished(entry)

        await asyncio.gather(*(one(i, s) for i, s in enumerate(scenarios)))
    return [e for e in entries if e is not None]


def _write_reports(
    report: RunReport, rules: RuleLookup, options: RunOptions, out: TextIO, err: TextIO
) -> int | None:
    """Write ``--junit`` and ``--json``; EXIT_USAGE when one cannot be written."""
    try:
        if options.junit is not None:
            options.junit.parent.mkdir(parents=True, exist_ok=True)
            options.junit.write_text(junit_xml(report, rules), encoding="utf-8")
        if options.json is not None:
            text = json.dumps(json_report(report, rules), indent=2, ensure_ascii=False) + "\n"
            if options.json == "-":
                out.write(text)
            else:
                path = Path(options.json)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    except OSError as e:
        err.write(f"botemu test: cannot write a report: {e.filename}: {e.strerror or e}\n")
        return EXIT_USAGE
    return None


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _are(n: int, one: str, many: str) -> str:
    """``1 selected scenario is a call`` / ``2 selected scenarios are calls``."""
    return f"1 selected scenario is {one}" if n == 1 else f"{n} selected scenarios are {many}"
