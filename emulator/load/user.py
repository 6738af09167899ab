"""``CallerUser``: the Locust user that places calls, each one a whole call checked against the
protocol, as ``botemu call`` places it (the same ``CallSession``, driven by gevent here).

Each task places one call to the bot at ``--host``, with a caller script drawn in turn from the
call scenarios given (``--botemu-scenarios``; none: ``--botemu-caller``'s inline steps, or a
caller who stays silent). It fires one
Locust request event per exchange, named by its kind (``Conversation``, ``answerOutcome``,
``recognizeOutcome``, ``recordOutcome``, ...), with its latency and size; an exchange fails for a
5xx, a time-out, a connection error, an invalid Workflow or any error finding, and the failure
names the rule id first (``WF-ORDER: ...``), so Locust groups failures by rule. Transcripts keep
every failing call and a sample of the rest (``--botemu-keep``).

Settings come from Locust's parsed options, so ``locust -f`` runs it unchanged: ``--host`` (the
bot's calling URL), ``--botemu-scenarios``, ``--botemu-pace`` (0: virtual time; 1.0: real time),
``--botemu-keep``, ``--botemu-db``, ``--botemu-app-id`` (sign a Bearer token for this app id
with the keys in ``--botemu-certs``), ``--botemu-no-token``, ``--botemu-rate`` (calls per second
that this process starts; 0: back to back).

Importing this module imports Locust, which monkey-patches the process with gevent.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from locust import User, constant, events, task
from locust.env import Environment
from locust.runners import MasterRunner

from emulator.calling.caller import CallerScript
from emulator.calling.engine import Media
from emulator.calling.outgoing import preload
from emulator.calling.settings import CallSettings
from emulator.config import ServiceConfig
from emulator.load.driver import Clients, Exchange, place_call
from emulator.load.keeping import KeepingStore, KeepPolicy
from emulator.load.metrics import METRICS
from emulator.load.options import StartPacer
from emulator.transcripts.store import TranscriptStore, default_db

REQUEST_TYPE = "CALL"


class CallFailure(Exception):
    """An exchange that failed; its text starts with the rule id."""


def add_arguments(parser: Any, **_: Any) -> None:
    """The user's own options (Locust's parser: ``locust -f ... --help`` lists them)."""
    group = parser.add_argument_group("botemu", "the calls CallerUser places")
    group.add_argument("--botemu-scenarios", nargs="*", default=[], metavar="FILE",
                       help="call scenarios whose caller scripts the users take in turn")  # fmt: skip
    group.add_argument("--botemu-caller", default="", metavar="STEPS",
                       help="an inline caller script when no scenario is given, e.g. 'press 1; hangup'")  # fmt: skip
    group.add_argument("--botemu-pace", type=float, default=0.0,
                       help="0 runs each call in virtual time; 1.0 holds it open in real time")  # fmt: skip
    group.add_argument("--botemu-keep", default="failures",
                       help="transcripts kept: failures, sample:N, all or none")  # fmt: skip
    group.add_argument("--botemu-db", default=str(default_db()), help="the transcript database")
    group.add_argument("--botemu-app-id", default=None, help="the bot's app id (Bearer token)")
    group.add_argument("--botemu-certs", default="certs",
                       help="the directory whose signing keys sign the token (botemu serve's)")  # fmt: skip
    group.add_argument("--botemu-no-token", action="store_true", help="send no Bearer token")
    group.add_argument("--botemu-emulator", default=None, metavar="URL",
                       help="a running botemu whose keys sign the Bearer token (its control "
                       "secret from --botemu-certs)")  # fmt: skip
    group.add_argument("--botemu-rate", type=float, default=0.0,
                       help="calls per second this process starts (0: back to back)")  # fmt: skip


events.init_command_line_parser.add_listener(add_arguments)


@dataclass
class Caller:
    """One caller script to place calls with: a call scenario's, or the silent default."""

    name: str | None
    settings: CallSettings


@dataclass
class Plan:
    """What the users of one process share: the callers, the store, the connection pools."""

    callers: list[Caller]
    store: KeepingStore
    clients: Clients = field(default_factory=Clients)
    media: dict[str, Media] = field(default_factory=dict)
    pacer: StartPacer | None = None
    db: TranscriptStore | None = None
    turn: itertools.count[int] = field(default_factory=itertools.count)

    def next(self) -> CallSettings:
        return self.callers[next(self.turn) % len(self.callers)].settings


_PLANS: dict[int, Plan] = {}


def close_plans(**_: Any) -> None:
    """When the process stops (Locust's ``quitting``): commit every kept call, close the
    connection pools."""
    for plan in _PLANS.values():
        if plan.db is not None:
            plan.db.close()
        plan.clients.close()
    _PLANS.clear()


events.quitting.add_listener(close_plans)


def preload_before_the_run(runner: Any = None, **_: Any) -> None:
    """Locust's ``init``, before the run starts: a process that places calls (not a master of
    workers) imports what its first call would, so that the run's clock does not count it."""
    if not isinstance(runner, MasterRunner):
        preload()


events.init.add_listener(preload_before_the_run)


def plan_for(environment: Environment) -> Plan:
    """The process's plan, made from the parsed options on first use."""
    plan = _PLANS.get(id(environment))
    if plan is None:
        plan = _PLANS[id(environment)] = make_plan(environment.parsed_options, environment.host)
    return plan


def make_plan(options: Any, host: str | None) -> Plan:
    if not host:
        raise ValueError("CallerUser needs the bot's calling URL: --host URL")
    script = CallerScript.from_inline(str(getattr(options, "botemu_caller", "") or ""))
    pace = float(getattr(options, "botemu_pace", 0.0) or 0.0)
    base = CallSettings(bot_url=host, caller=script, pace=pace)
    callers = [Caller(None, base)]
    paths = list(getattr(options, "botemu_scenarios", None) or [])
    if paths:
        callers = scenario_callers(paths, base)
    callers = [replace(c, settings=with_token(c.settings, options)) for c in callers]
    keep = KeepPolicy.parse(str(getattr(options, "botemu_keep", "failures") or "failures"))
    db = getattr(options, "botemu_db", None)
    store = None
    if db and keep != KeepPolicy(failures=False):  # kept calls go in by group commits
        store = TranscriptStore(Path(db), write_behind=True)
    rate = float(getattr(options, "botemu_rate", 0.0) or 0.0)
    pacer = StartPacer(rate, METRICS.late) if rate > 0 else None
    return Plan(callers, KeepingStore(store, keep), pacer=pacer, db=store)


def scenario_callers(paths: list[str], base: CallSettings) -> list[Caller]:
    """A caller per call scenario (each matrix entry) of ``paths``; conversations are left out."""
    from emulator.scenario.loader import load_scenarios

    callers = []
    for path in paths:
        for scenario in load_scenarios(Path(path)):
            if scenario.caller is None:
                continue
            settings = replace(base, caller=scenario.caller, scenario=scenario.name,
                               faults=scenario.faults.platform_faults(),
                               app_id=scenario.platform.app_id or base.app_id)  # fmt: skip
            callers.append(Caller(scenario.name, settings))
    if not callers:
        raise ValueError(f"no call scenario in {', '.join(paths)}")
    return callers


def with_token(settings: CallSettings, options: Any) -> CallSettings:
    """The settings with a token source when an app id is known and tokens are wanted."""
    app_id = getattr(options, "botemu_app_id", None) or settings.app_id
    if getattr(options, "botemu_no_token", False) or not app_id:
        return replace(settings, app_id=app_id)
    from emulator.calling.tokens import local_tokens
    from emulator.load.tokens import AskedTokens

    certs = Path(getattr(options, "botemu_certs", None) or "certs")
    emulator = getattr(options, "botemu_emulator", None)
    if emulator:
        return replace(settings, app_id=app_id, tokens=AskedTokens(emulator, app_id, certs=certs))
    tokens = local_tokens(ServiceConfig(certs_dir=certs), app_id)
    return replace(settings, app_id=app_id, tokens=tokens)


class CallerUser(User):
    """Places calls back to back (or at ``--botemu-rate`` per process), one at a time."""

    wait_time = constant(0)

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self.plan = plan_for(environment)

    @task
    def call(self) -> None:
        plan = self.plan
        if plan.pacer is not None:
            delay = plan.pacer.delay()
            if delay > 0:
                self.wait_seconds(delay)
        settings = plan.next()
        METRICS.started()
        report = place_call(settings, plan.store, plan.clients, self.fire, media_cache=plan.media)
        METRICS.ended(report.errors > 0)

    def wait_seconds(self, seconds: float) -> None:
        import gevent

        gevent.sleep(seconds)

    def fire(self, exchange: Exchange) -> None:
        failure = exchange.failure()
        self.environment.events.request.fire(
            request_type=REQUEST_TYPE,
            name=exchange.name,
            response_time=exchange.milliseconds,
            response_length=exchange.size,
            exception=CallFailure(failure) if failure is not None else None,
            context={},
        )
