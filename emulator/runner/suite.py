"""The run of a whole suite of scenario files against a bot, as a CI step: what ``botemu test``
(whose command line is ``emulator/cli/test.py``), ``botemu demo`` and the pytest plugin share.
``run_options(options, out, err)`` runs it and returns the exit code:

- 0: every selected scenario ran and passed;
- 1: at least one failed, or could not run (the bot did not answer, ...);
- 2: a usage or configuration error, a scenario file that is not valid (each problem one line,
  ``file:line:col: message``; nothing runs), or **zero scenarios selected** (a CI job that tests
  nothing must not pass).

The run, in order: read every scenario file under the paths (``loader.discover`` and
``load_scenarios``; each matrix entry is its own scenario), select with ``-k`` and ``--tag``
(``keywords.py``), skip those whose bot was not given (``targets.py``), run the rest with ``-j``
at a time through one ``Runner`` (printing one line as each finishes), then print each failure in
detail and a summary table, and write ``--junit`` / ``--json``. The rendering is
``emulator/scenario/reports.py``; the formats are documented in docs/testing.md.

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
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from emulator.errors import BotemuError
from emulator.findings import Finding
from emulator.runner.common import derive_seed
from emulator.runner.keywords import KeywordError, Matcher, compile_keyword, select
from emulator.runner.targets import (
    CONFIG_KEYS,
    ENV_PASSWORD,
    SKIP_REASONS,
    ConfigError,
    TargetSettings,
    check_target,
    needs,
    read_config,
    split_by_target,
    target_settings,
)
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

if TYPE_CHECKING:
    from emulator.calling.settings import PromptTiming

__all__ = [
    "CONFIG_KEYS",
    "ENV_PASSWORD",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "SKIP_REASONS",
    "Backend",
    "ConfigError",
    "CrashedResult",
    "KeywordError",
    "Matcher",
    "OpenRunner",
    "RunOptions",
    "RunnerLike",
    "SkippedResult",
    "TargetSettings",
    "check_target",
    "collect_scenarios",
    "compile_keyword",
    "default_backend",
    "derive_seed",
    "execute",
    "needs",
    "open_runner",
    "read_config",
    "rule_lookup",
    "run_options",
    "run_tests",
    "select",
    "split_by_target",
    "target_settings",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


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
        prompt_timing: PromptTiming | None = None,
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
    prompt_timing: PromptTiming | None = None,
) -> AbstractAsyncContextManager[RunnerLike]:
    """``emulator.runner.runner.Runner`` for ``target``; ``prompt_timing`` is every call's
    (a scenario's ``platform: {prompt_timing}`` wins; None: ``$BOTEMU_PROMPT_TIMING``)."""
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
    return Runner(made, store, seed=seed, max_workflows=max_workflows, timeout=timeout,
                  prompt_timing=prompt_timing)  # fmt: skip


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
    """A parsed ``botemu test`` command line. ``prompt_timing``: how long every call's text
    prompts play (``--prompt-timing``), unless its scenario's ``platform: {prompt_timing}`` says
    otherwise; None leaves it to ``$BOTEMU_PROMPT_TIMING``, else ``estimate``."""

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
    prompt_timing: PromptTiming | None = None


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
    selected = _selected(scenarios, options)
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
    ran, started, clock = _run(runnable, backend, options, seed, finished)
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
    return _report(report, options, human, paint, out, err)


def _selected(scenarios: Sequence[Scenario], options: RunOptions) -> list[Scenario]:
    """The scenarios ``-k`` and ``--tag`` select; ``ConfigError`` when there are none."""
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
    return selected


def _run(
    scenarios: Sequence[Scenario],
    backend: Backend,
    options: RunOptions,
    seed: int,
    finished: Callable[[Entry], None],
) -> tuple[Iterator[Entry], float, float]:
    """``execute`` with the run's transcript store: (the entries, in the order of
    ``scenarios``; when the run started, epoch seconds; and ``time.perf_counter()`` then)."""
    try:
        store = TranscriptStore(options.db, write_behind=True)
    except TranscriptError as e:
        raise ConfigError(str(e)) from e
    started, clock = time.time(), time.perf_counter()
    with store:
        try:
            ran = iter(asyncio.run(execute(scenarios, backend, options, seed, store, finished)))
        except OSError as e:  # the runner could not start (an in-process botemu's port, ...)
            raise ConfigError(f"cannot run: {e.strerror or e}") from e
    return ran, started, clock


def _report(
    report: RunReport, options: RunOptions, human: TextIO, paint: Paint, out: TextIO, err: TextIO
) -> int:
    """Print each failure and the summary to ``human``, write the reports; the exit code."""
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
                                   timeout=options.timeout,
                                   prompt_timing=options.prompt_timing) as runner:  # fmt: skip

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
