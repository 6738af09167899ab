"""emulator/conformance/auth_calling.py, ``POST /_botemu/probe/auth`` with ``"calling": true`` and
``botemu probe auth --calling``.

A real botemu runs in-process on a free port, and beside it a calling bot of
tests/bots/weak_calling_bots.py: the correct one must pass every case, and each weak one must fail
exactly the cases its flaw lets through.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web

from emulator.calling.wire import loads, read_conversation
from emulator.certs import ensure_certs, server_ssl_context
from emulator.cli import main
from emulator.config import BotRegistration, ServiceConfig
from emulator.conformance.auth import TokenFactory
from emulator.conformance.auth_calling import (
    CASES,
    REQUESTS,
    RULES,
    client_ssl,
    conversation,
    headers,
    probe_auth_calling,
)
from emulator.conformance.tls import ProbeError
from emulator.findings import Finding, Severity
from emulator.identity.bearer import TokenKind
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import Expectation, TokenError, validate
from emulator.runner.runner import Runner, Target
from emulator.scenario.loader import load_scenarios
from emulator.transcripts.store import EventKind, TranscriptStore
from tests.bots.weak_calling_bots import (
    FLAWS,
    STATE,
    WORKFLOW,
    CallingSettings,
    make_weak_calling_bot,
)
from tests.support import LoopbackServers, free_port, post_control

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "conformance" / "calling-auth-probe.yaml"
APP = "22222222-3333-4444-5555-666666666666"
NAMES = [c.name for c in CASES]
BAD = {c.rule for c in CASES if not c.expect_accept}
NOW = 1_750_000_000.0


class Servers(LoopbackServers):
    """A botemu with the calling bot registered (its calling endpoint), and the bot beside it."""

    async def emulator(self, bots: tuple[BotRegistration, ...]) -> ServiceConfig:
        config = ServiceConfig(port=free_port(), certs_dir=self.tmp_path / "certs", bots=bots)
        return await self.serve_emulator(config)

    async def bot(
        self, flaw: str | None, *, tls: ssl.SSLContext | None = None
    ) -> tuple[ServiceConfig, web.Application, str]:
        """A weak calling bot on a free port (https with ``tls``), and a botemu with it
        registered; the bot knows the botemu's OpenID metadata before either starts."""
        port = free_port()
        url = f"{'https' if tls else 'http'}://127.0.0.1:{port}/api/calls"
        config = await self.emulator((BotRegistration(APP, "", calling_endpoint=url),))
        app = make_weak_calling_bot(settings(config), flaw)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._runners.append(runner)
        await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls).start()
        return config, app, url

    @property
    def store(self) -> TranscriptStore:
        return self._stores[-1]


def settings(config: ServiceConfig) -> CallingSettings:
    return CallingSettings(APP, config.placeholders().openid_metadata_url)


@pytest.fixture
async def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Servers]:
    # The CLI finds the botemu's control secret in ./certs: run it where the botemu's are.
    monkeypatch.chdir(tmp_path)
    s = Servers(tmp_path)
    try:
        yield s
    finally:
        await s.close()


async def post_probe(config: ServiceConfig, body: dict[str, Any]) -> tuple[int, Any]:
    return await post_control(config, "/_botemu/probe/auth", body)


def findings_of(report: dict[str, Any]) -> list[Finding]:
    return [Finding.from_json(f) for f in report["findings"]]


async def run_probe(config: ServiceConfig, url: str) -> list[Finding]:
    status, report = await post_probe(config, {"calling": True, "bot": url, "app_id": APP})
    assert status == 200, report
    assert (report["bot"], report["app_id"], report["calling"]) == (url, APP, True)
    return findings_of(report)


def by_severity(findings: list[Finding], severity: Severity) -> set[str]:
    return {f.rule for f in findings if f.severity is severity}


# --- the rules, the tokens and the requests -------------------------------------------------------


def test_every_rule_is_registered_with_its_sources() -> None:
    assert RULES.ids() == [
        "AUTH-CALL-VALID-ACCEPTED",
        "AUTH-CALL-NO-HEADER",
        "AUTH-CALL-SCHEME",
        "AUTH-CALL-ISSUER",
        "AUTH-CALL-AUDIENCE",
        "AUTH-CALL-EXPIRED",
        "AUTH-CALL-EXPIRED-WITHIN-SKEW",
        "AUTH-CALL-NOT-YET-VALID",
        "AUTH-CALL-TAMPERED",
        "AUTH-CALL-UNKNOWN-KEY",
        "AUTH-CALL-UNKNOWN-KID",
        "AUTH-CALL-ALG-NONE",
        "AUTH-CALL-ALG-NONE-UNKNOWN-KID",
        "AUTH-CALL-HS256-PUBLIC-KEY",
        "AUTH-CALL-MALFORMED",
        "AUTH-CALL-GARBAGE",
        "AUTH-CALL-ALIVE",
    ]
    assert [c.rule for c in CASES] == RULES.ids()[:-1]
    for rule in RULES:
        assert rule.source.startswith("spec Authentication, Connector to bot ")
        assert rule.source.endswith("field notes, Calling: HTTP")
    assert [c.name for c in CASES if c.control] == ["valid"]
    assert [c.name for c in CASES if c.expect_accept] == ["valid", "expired-within-skew"]
    assert {c.path for c in CASES} == {TokenKind.CALLING}
    assert REQUESTS == 2 * len(CASES) == 32


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory) -> TokenFactory:
    config = ServiceConfig(certs_dir=tmp_path_factory.mktemp("certs"))
    keys = KeyStore(config.certs_dir, clock=lambda: NOW)
    return TokenFactory(keys, config.placeholders(), config.profile, APP, clock=lambda: NOW)


REASONS = {
    "valid": "ok",
    "no-header": "not bearer",
    "scheme": "not bearer",
    "issuer": "issuer",
    "audience": "audience",
    "expired": "expired",
    "expired-within-skew": "ok",
    "not-yet-valid": "not-yet-valid",
    "tampered": "signature",
    "unknown-key": "unknown-kid",
    "unknown-kid": "unknown-kid",
    "alg-none": "algorithm",
    "alg-none-unknown-kid": "algorithm",
    "hs256-public-key": "algorithm",
    "malformed": "malformed",
    "garbage": "malformed",
}


def test_each_token_breaks_exactly_the_rule_of_its_case(factory: TokenFactory) -> None:
    """botemu's own validator, on the connector path, says why it refuses each case's header."""
    expect = Expectation((factory.placeholders.connector_issuer,), (APP,))

    def reason(authorization: str | None) -> str:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme != "Bearer":
            return "not bearer"
        try:
            validate(token, factory.keys, expect, now=NOW)
        except TokenError as e:
            return e.reason
        return "ok"

    assert {c.name: reason(c.build(factory)) for c in CASES} == REASONS


def test_calling_tokens_are_connector_tokens_without_serviceurl(factory: TokenFactory) -> None:
    by_name = {c.name: c for c in CASES}
    good = str(by_name["valid"].build(factory)).removeprefix("Bearer ")
    current = factory.keys.current()
    header = jwt.get_unverified_header(good)
    assert (header["alg"], header["kid"]) == ("RS256", current.kid)
    claims = jwt.decode(good, options={"verify_signature": False})
    assert claims == {
        "iss": factory.placeholders.connector_issuer,
        "aud": APP,
        "iat": int(NOW),
        "nbf": int(NOW),
        "exp": int(NOW) + 3600,
    }
    within = str(by_name["expired-within-skew"].build(factory)).removeprefix("Bearer ")
    assert jwt.decode(within, options={"verify_signature": False})["exp"] == int(NOW) - 60
    none = str(by_name["alg-none-unknown-kid"].build(factory)).removeprefix("Bearer ")
    kid = jwt.get_unverified_header(none)["kid"]
    assert none.endswith(".") and kid not in {k.kid for k in factory.keys.published()}
    assert by_name["garbage"].build(factory) == "Bearer not-a-jwt"


def test_each_request_is_a_new_call_with_the_platform_headers() -> None:
    first, second = conversation(APP), conversation(APP)
    call = read_conversation(loads(first))
    assert [p.identity for p in call.participants] == ["8:botemu-auth-probe", f"28:{APP}"]
    assert call.participants[0].originator and not call.participants[1].originator
    assert call.call_state.value == "incoming" and not call.is_multiparty
    assert read_conversation(loads(second)).id != call.id
    sent, again = headers(), headers()
    assert (sent["Content-Type"], sent["Accept"]) == ("application/json", "application/json")
    assert sent["X-Platform-Message-ID"] != again["X-Platform-Message-ID"]
    assert sent["X-Platform-Chain-ID"] != again["X-Platform-Chain-ID"]


# --- the weak calling bots, through POST /_botemu/probe/auth ---------------------------------------


async def test_a_correct_bot_passes_every_case_and_answers_each_good_call(
    servers: Servers,
) -> None:
    config, app, url = await servers.bot(None)
    status, report = await post_probe(config, {"calling": True, "bot": url, "app_id": APP})
    assert status == 200, report
    findings = findings_of(report)
    assert [f.where for f in findings] == NAMES
    assert [f.rule for f in findings] == [c.rule for c in CASES]
    assert {f.severity for f in findings} == {Severity.INFO}, findings
    assert findings[0].message == "accepted a valid calling token (HTTP 200)"
    # Each case, then a good Conversation: the bot accepted the two good cases and 16 checks.
    assert app[STATE].accepted == 2 + len(CASES)
    # The findings are in the probe's transcript, a call that passed.
    summary = servers.store.call(report["call_id"])
    assert summary is not None and summary.passed is True and summary.kind == "call"
    events = servers.store.events(report["call_id"])
    assert [e.payload["rule"] for e in events if e.kind == EventKind.FINDING] == RULES.ids()[:-1]


WEAK = [
    pytest.param("optional-auth", {"AUTH-CALL-NO-HEADER"}, set(), id="optional-auth"),
    pytest.param("any-scheme", {"AUTH-CALL-SCHEME"}, set(), id="any-scheme"),
    pytest.param("skip-issuer", {"AUTH-CALL-ISSUER"}, set(), id="skip-issuer"),
    pytest.param("skip-audience", {"AUTH-CALL-AUDIENCE"}, set(), id="skip-audience"),
    pytest.param("skip-expiry", {"AUTH-CALL-EXPIRED"}, set(), id="skip-expiry"),
    pytest.param("no-skew", set(), {"AUTH-CALL-EXPIRED-WITHIN-SKEW"}, id="no-skew"),
    pytest.param("skip-nbf", {"AUTH-CALL-NOT-YET-VALID"}, set(), id="skip-nbf"),
    pytest.param("any-signature", {"AUTH-CALL-TAMPERED"}, set(), id="any-signature"),
    pytest.param("trust-embedded-jwk", {"AUTH-CALL-UNKNOWN-KEY"}, set(), id="trust-embedded-jwk"),
    pytest.param("unknown-kid-ok", {"AUTH-CALL-UNKNOWN-KID"}, set(), id="unknown-kid-ok"),
    pytest.param("accept-none", {"AUTH-CALL-ALG-NONE", "AUTH-CALL-ALG-NONE-UNKNOWN-KID"}, set(),
                 id="accept-none"),
    pytest.param("none-without-key", {"AUTH-CALL-ALG-NONE-UNKNOWN-KID"}, set(),
                 id="none-without-key"),
    pytest.param("hs256-public-key", {"AUTH-CALL-HS256-PUBLIC-KEY"}, set(), id="hs256-public-key"),
    pytest.param("crashes-on-malformed", {"AUTH-CALL-MALFORMED"}, set(),
                 id="crashes-on-malformed"),
    pytest.param("crashes", BAD - {"AUTH-CALL-EXPIRED-WITHIN-SKEW"}, set(), id="crashes"),
    pytest.param("answers-401", set(), BAD - {"AUTH-CALL-EXPIRED-WITHIN-SKEW"},
                 id="answers-401"),
]  # fmt: skip
"""Weak bot flaw -> the error rules and the warning rules it gets; the bot keeps answering."""


@pytest.mark.parametrize(("flaw", "errors", "warnings"), WEAK)
async def test_each_weak_bot_fails_exactly_its_cases(
    servers: Servers, flaw: str, errors: set[str], warnings: set[str]
) -> None:
    config, _, url = await servers.bot(flaw)
    findings = await run_probe(config, url)
    assert [f.where for f in findings] == NAMES  # the bot kept answering: no AUTH-CALL-ALIVE
    assert by_severity(findings, Severity.ERROR) == errors
    assert by_severity(findings, Severity.WARNING) == warnings
    for f in findings:
        if f.severity is Severity.ERROR and flaw.startswith("crashes"):
            assert f.message.startswith("crashed on ") and f.evidence == "HTTP 500"
        elif f.severity is Severity.ERROR:
            assert f.message.startswith("accepted a bad token (security hole): ")
            assert f.evidence == "HTTP 200"
        elif f.severity is Severity.WARNING and flaw == "no-skew":
            assert f.message == (
                "refused a token expired 1 minute ago (within the 5-minute skew) (HTTP 403); the "
                "spec allows 5 minutes of clock skew, so it must be accepted"
            )
        elif f.severity is Severity.WARNING:
            assert f.message.endswith("with HTTP 401; the spec says 403")


async def test_a_bot_that_dies_on_garbage_gets_errors_naming_that_case(
    servers: Servers,
) -> None:
    config, _, url = await servers.bot("crashes-on-garbage")
    findings = await run_probe(config, url)
    assert [f.where for f in findings] == [*NAMES, "garbage"]
    *_, garbage, alive = findings
    assert (garbage.rule, garbage.severity) == ("AUTH-CALL-GARBAGE", Severity.ERROR)
    assert garbage.message.startswith("no answer to a token that is not a JWT (Bearer not-a-jwt): ")
    assert (alive.rule, alive.severity, alive.where) == (
        "AUTH-CALL-ALIVE",
        Severity.ERROR,
        "garbage",
    )
    assert alive.message.startswith(
        "the bot stopped answering after a token that is not a JWT (Bearer not-a-jwt): a valid "
        "Conversation then got no answer ("
    )
    assert alive.message.endswith("; the probe stopped here")
    assert by_severity(findings, Severity.ERROR) == {"AUTH-CALL-GARBAGE", "AUTH-CALL-ALIVE"}


async def test_botbuilder_calling_301_fails_on_its_three_flaws(servers: Servers) -> None:
    config, _, url = await servers.bot("sdk-3.0.1")
    findings = await run_probe(config, url)
    assert by_severity(findings, Severity.ERROR) == {
        "AUTH-CALL-ALG-NONE-UNKNOWN-KID",
        "AUTH-CALL-GARBAGE",
        "AUTH-CALL-ALIVE",
    }
    assert by_severity(findings, Severity.WARNING) == {"AUTH-CALL-EXPIRED-WITHIN-SKEW"}


def test_every_flaw_is_tested() -> None:
    tested = {"crashes-on-garbage", "sdk-3.0.1"} | {p.values[0] for p in WEAK}
    assert tested == set(FLAWS)


async def test_an_https_bot_gets_the_platforms_client_certificate(
    servers: Servers, tmp_path: Path
) -> None:
    paths = ensure_certs(tmp_path / "tls")
    config, _, url = await servers.bot(None, tls=server_ssl_context(paths))
    body = {"calling": True, "bot": url, "certs": str(paths.dir)}  # the one registered bot's app id
    status, report = await post_probe(config, body)
    assert status == 200, report
    assert report["app_id"] == APP
    assert {f.severity for f in findings_of(report)} == {Severity.INFO}
    assert client_ssl("http://127.0.0.1/", paths.dir) is None


async def test_the_route_refuses_what_cannot_work(servers: Servers, tmp_path: Path) -> None:
    registered = f"http://127.0.0.1:{free_port()}/api/calls"
    config = await servers.emulator(
        (
            BotRegistration(APP, "", calling_endpoint=registered),
            BotRegistration("messaging-only", "", "http://127.0.0.1:1/api/messages"),
        )
    )
    cases = [
        ({"calling": "yes", "app_id": APP}, 400, "calling is true or false"),
        ({"calling": True}, 400, "give app_id or bot"),
        ({"calling": True, "bot": "http://127.0.0.1:1/other"}, 404,
         "no bot is registered with the calling endpoint http://127.0.0.1:1/other, and 2 bots"),
        ({"calling": True, "app_id": "messaging-only"}, 404,
         "no calling endpoint is registered for app id messaging-only: give bot"),
        ({"calling": True, "app_id": "x" * 257, "bot": registered}, 400, "app_id is over 256"),
        ({"calling": True, "app_id": APP, "bot": "ftp://bot/"}, 400,
         "the bot's calling address must be an http(s) URL"),
        ({"calling": True, "bot": "https://127.0.0.1:1/", "app_id": APP,
          "certs": str(tmp_path / "none")}, 400, "no such directory; run 'botemu certs' first"),
        ({"calling": True, "app_id": APP}, 502, "cannot connect"),  # the registered endpoint
        ({"calling": True, "bot": registered}, 502, "cannot connect"),  # its app id
    ]  # fmt: skip
    for body, status, message in cases:
        got, text = await post_probe(config, body)
        assert (got, message in text) == (status, True), (body, text)


# --- probe_auth_calling's verdicts, against a bot that answers what it is told -------------------

Behaviour = Callable[[str, int], Awaitable[web.StreamResponse]]
"""(the header, the number of the request) -> the answer."""


async def scripted(servers: Servers, factory: TokenFactory, behave: Behaviour) -> dict[str, Any]:
    """Findings by case name (the ALIVE finding under "alive"), from a bot that answers as
    ``behave`` says."""
    count = 0

    async def calls(request: web.Request) -> web.StreamResponse:
        nonlocal count
        count += 1
        await request.read()
        return await behave(request.headers.get("Authorization", ""), count)

    app = web.Application()
    app.router.add_post("/api/calls", calls)
    base = await servers.serve(app, free_port())
    async with aiohttp.ClientSession() as http:
        seen: list[Finding] = []
        findings = await probe_auth_calling(
            f"{base}/api/calls", factory, http=http, timeout=0.5, on_finding=seen.append
        )
    assert seen == findings
    out: dict[str, Any] = {f.where: f for f in findings if f.rule != "AUTH-CALL-ALIVE"}
    out["alive"] = [f for f in findings if f.rule == "AUTH-CALL-ALIVE"]
    return out


def good(factory: TokenFactory) -> Callable[[str], bool]:
    valid = {
        f"Bearer {factory.token(TokenKind.CALLING)}",
        f"Bearer {factory.expired(60, TokenKind.CALLING)}",
    }
    return lambda header: header in valid


async def test_a_2xx_without_a_workflow_is_a_warning_on_the_control(
    servers: Servers, factory: TokenFactory
) -> None:
    is_good = good(factory)

    async def behave(header: str, _: int) -> web.StreamResponse:
        return web.Response(status=200 if is_good(header) else 403, text="")

    got = await scripted(servers, factory, behave)
    valid = got["valid"]
    assert isinstance(valid, Finding) and valid.severity is Severity.WARNING
    assert valid.message == (
        "accepted a valid calling token (HTTP 200), but the answer is not a Workflow: an empty body"
    )
    assert got["alive"] == []
    assert {got[n].severity for n in NAMES[1:]} == {Severity.INFO}


async def test_a_bot_that_stops_accepting_good_calls_is_not_alive(
    servers: Servers, factory: TokenFactory
) -> None:
    is_good = good(factory)
    broken = False

    async def behave(header: str, _: int) -> web.StreamResponse:
        nonlocal broken
        broken = broken or header == "Bearer not-a-jwt"
        if broken:
            return web.Response(status=500)
        return web.json_response(WORKFLOW) if is_good(header) else web.Response(status=403)

    got = await scripted(servers, factory, behave)
    (alive,) = got["alive"]
    assert isinstance(alive, Finding)
    assert (alive.where, alive.evidence) == ("garbage", "HTTP 500")
    assert "a valid Conversation then got HTTP 500, where it accepted the positive control" in (
        alive.message
    )


async def test_a_hung_bot_stops_the_probe_at_the_case_that_hung_it(
    servers: Servers, factory: TokenFactory
) -> None:
    is_good = good(factory)
    hung = False

    async def behave(header: str, _: int) -> web.StreamResponse:
        nonlocal hung
        hung = hung or "none" in json.dumps(_header(header))
        if hung:
            await asyncio.sleep(1)  # past the probe's 0.5 s
        return web.json_response(WORKFLOW) if is_good(header) else web.Response(status=403)

    got = await scripted(servers, factory, behave)
    assert list(got) == [*NAMES[: NAMES.index("alg-none") + 1], "alive"]
    none = got["alg-none"]
    assert isinstance(none, Finding) and none.severity is Severity.WARNING  # no answer: a warning
    (alive,) = got["alive"]
    assert isinstance(alive, Finding) and alive.where == "alg-none"


def _header(authorization: str) -> dict[str, Any]:
    try:
        return dict(jwt.get_unverified_header(authorization.removeprefix("Bearer ")))
    except jwt.PyJWTError:
        return {}


async def test_a_refused_control_makes_refusals_inconclusive(
    servers: Servers, factory: TokenFactory
) -> None:
    async def behave(header: str, count: int) -> web.StreamResponse:
        return web.Response(status=403)

    got = await scripted(servers, factory, behave)
    valid = got["valid"]
    assert isinstance(valid, Finding) and valid.severity is Severity.ERROR
    assert valid.message.startswith("positive control refused: ")
    assert "OpenID metadata" in valid.message and APP in valid.message
    assert got["alive"] == []  # it still answers
    assert {got[n].severity for n in NAMES[1:]} == {Severity.WARNING}


async def test_an_unreachable_bot_or_a_bad_url_stops_the_probe(factory: TokenFactory) -> None:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(ProbeError, match="cannot connect"):
            await probe_auth_calling(
                f"http://127.0.0.1:{free_port()}/", factory, http=http, timeout=2
            )
        with pytest.raises(ProbeError, match="calling address must be an http"):
            await probe_auth_calling("file:///etc/passwd", factory, http=http)


# --- probe: auth-calling, the scenario ---------------------------------------------------------------


async def test_the_scenario_through_a_running_botemu(servers: Servers) -> None:
    (scenario,) = load_scenarios(SCENARIO)
    assert (scenario.kind, scenario.probe) == ("probe", "auth-calling")
    good_config, _, good = await servers.bot(None)
    weak_config, _, weak = await servers.bot("accept-none")
    results = []
    for config, url in ((good_config, good), (weak_config, weak)):
        target = Target(bot_url=url, emulator=config.base_url)  # the registered bot's app id
        async with Runner(target, servers.store, timeout=5.0) as runner:
            results.append(await runner.run(scenario))
    passed, failed = results
    assert passed.passed and passed.error is None, passed.failures
    assert [f.where for f in passed.findings] == NAMES
    (transcript,) = passed.transcript_ids
    summary = servers.store.call(transcript)
    assert summary is not None and summary.kind == "call" and summary.passed is True
    assert not failed.passed and failed.error is None
    (failure,) = failed.failures
    assert failure.rule == "EXP-FINDINGS"
    assert failure.message.startswith("expected no error finding, got ")
    assert failure.message.endswith(": AUTH-CALL-ALG-NONE, AUTH-CALL-ALG-NONE-UNKNOWN-KID")


async def test_the_scenario_with_an_in_process_botemu(servers: Servers, tmp_path: Path) -> None:
    (scenario,) = load_scenarios(SCENARIO)
    port = free_port()
    url = f"http://127.0.0.1:{port}/api/calls"
    # A messaging bot in the target makes the runner start its botemu at once, so the calling
    # bot can be given that botemu's OpenID metadata before the probe.
    target = Target(bot_url=url, app_id=APP, certs=tmp_path / "certs",
                    messaging_bot="http://127.0.0.1:1/api/messages")  # fmt: skip
    with TranscriptStore(tmp_path / "runner.db") as store:
        async with Runner(target, store, timeout=5.0) as runner:
            assert runner.emulator_config is not None
            await servers.serve(make_weak_calling_bot(settings(runner.emulator_config), None), port)
            result = await runner.run(scenario)
        assert result.passed, result.failures
        assert {f.severity for f in result.findings} == {Severity.INFO}
        async with Runner(Target(messaging_bot=url), store) as runner:
            result = await runner.run(scenario)
    assert result.error == (
        "this scenario is a probe (auth-calling), and no calling bot was given (--bot URL)"
    )


# --- botemu probe auth --calling -------------------------------------------------------------------


async def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main`` runs its own event loop, so it runs in a thread beside the test's servers."""
    code = await asyncio.to_thread(main, ["probe", "auth", "--calling", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_cli_through_a_running_botemu_exits_0(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    config, _, url = await servers.bot(None)
    # No --app-id: the bot registered with this calling endpoint.
    code, out, err = await run_cli(["--bot", url, "--emulator", config.base_url], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"Calling auth probe of {url} (app id {APP}) from {config.base_url}"
    assert [line.split()[:2] for line in lines[1:-1]] == [[n, "pass"] for n in NAMES]
    assert lines[-1] == f"{url}: passed: 16 of 16 cases passed, 0 errors, 0 warnings"


async def test_cli_json_exits_1_on_an_error(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    config, _, url = await servers.bot("none-without-key")
    argv = ["--bot", url, "--app-id", APP, "--emulator", config.base_url, "--json"]
    code, out, err = await run_cli(argv, capsys)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert (report["passed"], report["errors"], report["warnings"]) == (False, 1, 0)
    assert (report["app_id"], report["emulator"], report["calling"]) == (APP, config.base_url, True)
    assert servers.store.call(report["call_id"]) is not None
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["where"]) for f in errors] == [
        ("AUTH-CALL-ALG-NONE-UNKNOWN-KID", "alg-none-unknown-kid")
    ]


async def test_cli_warnings_only_exit_0(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    config, _, url = await servers.bot("no-skew")
    code, out, _ = await run_cli(["--bot", url, "--emulator", config.base_url], capsys)
    assert code == 0
    assert out.splitlines()[-1].endswith(": passed: 15 of 16 cases passed, 0 errors, 1 warning")


@pytest.mark.slow
async def test_cli_as_a_subprocess(servers: Servers) -> None:
    config, _, url = await servers.bot(None)
    argv = ["probe", "auth", "--calling", "--bot", url, "--emulator", config.base_url, "--json"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "emulator", *argv, "--certs", str(config.certs_dir),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    report = json.loads(out)
    assert (report["passed"], report["calling"], report["app_id"]) == (True, True, APP)


async def test_cli_starts_a_botemu_when_none_answers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers: Servers,
) -> None:
    monkeypatch.chdir(tmp_path)  # the in-process botemu keeps its keys in ./certs
    monkeypatch.setenv("BOTEMU_DB", str(tmp_path / "cli.db"))
    config = ServiceConfig(port=free_port())
    url = await servers.serve(make_weak_calling_bot(settings(config), None), free_port())
    argv = ["--bot", f"{url}/api/calls", "--app-id", APP, "--emulator", config.base_url]
    code, out, err = await run_cli(argv, capsys)
    assert (code, err) == (0, ""), out
    assert out.splitlines()[-1].endswith(": passed: 16 of 16 cases passed, 0 errors, 0 warnings")
    assert (tmp_path / "certs" / "signing-keys").is_dir()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--bot", "ftp://bot/"], "calling address must be an http(s) URL",
                     id="bad-bot-url"),
        pytest.param(["--bot", "http://127.0.0.1:1/", "--emulator", "http://127.0.0.1:{closed}"],
                     "to start one here, give --app-id\n", id="no-emulator-no-app-id"),
        pytest.param(["--bot", "http://127.0.0.1:1/x", "--emulator", "{running}"],
                     "no bot is registered with the calling endpoint", id="no-app-id"),
        pytest.param(["--bot", "{bot}", "--emulator", "{running}", "--app-id", APP],
                     "cannot connect", id="bot-unreachable"),
        pytest.param(["--bot", "https://127.0.0.1:1/", "--emulator", "{running}", "--app-id", APP,
                      "--certs", "{missing}"], "missing/control-secret: no control secret",
                     id="no-certs"),  # the botemu's directory: its secret, the client certificate
    ],
)  # fmt: skip
async def test_cli_usage_errors_exit_2_with_one_line(
    servers: Servers,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    argv: list[str],
    message: str,
) -> None:
    bot = f"http://127.0.0.1:{free_port()}/api/calls"
    config = await servers.emulator(
        (BotRegistration(APP, "", calling_endpoint=bot), BotRegistration("other", ""))
    )
    values = {"closed": free_port(), "running": config.base_url, "bot": bot,
              "missing": tmp_path / "missing"}  # fmt: skip
    code, out, err = await run_cli([a.format(**values) for a in argv], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("botemu probe auth: ") and err.count("\n") == 1, err
    assert message in err
