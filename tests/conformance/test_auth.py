"""emulator/conformance/auth.py, ``POST /_botemu/probe/auth`` and ``botemu probe auth``.

A real botemu runs in-process on a free port, with the reference echo bot (examples/echo_bot.py,
which must pass every case) or one of the deliberately weak bots of tests/bots/weak_bots.py (each
must fail exactly the cases its flaw lets through) registered and running beside it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from emulator.cli import main
from emulator.config import BotRegistration, Profile, ServiceConfig
from emulator.conformance.auth import CASES, NO_ENDORSEMENTS, RULES, TokenFactory, probe_auth
from emulator.conformance.tls import ProbeError
from emulator.connector.sender import TokenKind
from emulator.findings import Finding, Severity
from emulator.identity.keys import KeyStore
from emulator.identity.tokens import Expectation, TokenError, validate
from tests.bots.weak_bots import PROBE_ERRORS, WeakSettings, make_weak_bot
from tests.support import LoopbackServers, free_port, load_module, post_control

ROOT = Path(__file__).resolve().parents[2]
APP = "11111111-2222-3333-4444-555555555555"
PASSWORD = "s3cret"
NAMES = [c.name for c in CASES]
ACCEPTED = [c.name for c in CASES if c.expect_accept]
BAD = {c.name for c in CASES if not c.expect_accept}
RUN = BAD - {"endorsement"}
"""The bad cases run when botemu publishes no endorsements (the default): all but one."""
ENDORSED = ("botemu", "msteams")
CASE_RULES = [r for r in RULES.ids() if r != "AUTH-ANONYMOUS"]
"""One rule per case; AUTH-ANONYMOUS is the probe's verdict on an anonymous bot
(test_auth_anonymous.py)."""


@functools.cache
def echo_bot() -> ModuleType:
    return load_module(ROOT / "examples" / "echo_bot.py", "echo_bot_auth")


class Servers(LoopbackServers):
    """A botemu with the test bot registered, and the bot beside it."""

    async def emulator(
        self,
        bot_url: str,
        profile: Profile = Profile.V31,
        endorsements: tuple[str, ...] = (),
    ) -> ServiceConfig:
        config = ServiceConfig(
            port=free_port(),
            profile=profile,
            certs_dir=self.tmp_path / "certs",
            bots=(BotRegistration(APP, PASSWORD, bot_url),),
            endorsements=endorsements,
        )
        return await self.serve_emulator(config)

    async def bot(
        self,
        make: Callable[[ServiceConfig], web.Application],
        endorsements: tuple[str, ...] = (),
    ) -> ServiceConfig:
        """A bot on a free port and a botemu with it registered (the bot knows the botemu's
        settings before either starts), its keys endorsed for ``endorsements``."""
        bot_port = free_port()
        url = f"http://127.0.0.1:{bot_port}/api/messages"
        config = await self.emulator(url, endorsements=endorsements)
        await self.serve(make(config), bot_port)
        return config


@pytest.fixture
async def servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Servers]:
    # The CLI finds the botemu's control secret in ./certs: run it where the botemu's are.
    monkeypatch.chdir(tmp_path)
    s = Servers(tmp_path)
    try:
        yield s
    finally:
        await s.close()


def echo_app(config: ServiceConfig) -> web.Application:
    p, echo = config.placeholders(), echo_bot()
    settings = echo.Settings(
        app_id=APP, app_password=PASSWORD, token_url=p.token_url,
        connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
        connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
        emulator_issuer=p.emulator_issuer, profile=config.profile.value,
        legacy_audience=p.legacy_audience,
    )  # fmt: skip
    app: web.Application = echo.make_app(settings)
    return app


def weak_app(flaw: str | None) -> Callable[[ServiceConfig], web.Application]:
    def make(config: ServiceConfig) -> web.Application:
        p = config.placeholders()
        legacy = p.legacy_audience if config.profile is Profile.V30 else None
        settings = WeakSettings(
            APP, p.openid_metadata_url, p.connector_issuer, p.idp_openid_url, p.emulator_issuer,
            emulator_audience=legacy,
        )  # fmt: skip
        return make_weak_bot(settings, flaw)

    return make


def bot_url(config: ServiceConfig) -> str:
    endpoint = config.bots[0].endpoint
    assert endpoint is not None
    return endpoint


async def post_probe(config: ServiceConfig, body: dict[str, Any]) -> tuple[int, Any]:
    return await post_control(config, "/_botemu/probe/auth", body)


async def run_probe(config: ServiceConfig) -> list[Finding]:
    status, report = await post_probe(config, {"bot": bot_url(config), "app_id": APP})
    assert status == 200, report
    return [
        Finding(f["rule"], Severity(f["severity"]), f["where"], f["message"], f.get("evidence"))
        for f in report["findings"]
    ]


def by_severity(findings: list[Finding], severity: Severity) -> set[str]:
    return {f.rule for f in findings if f.severity is severity}


def rules_of(names: set[str]) -> set[str]:
    return {c.rule for c in CASES if c.name in names}


async def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``main`` runs its own event loop, so it runs in a thread beside the test's servers."""
    code = await asyncio.to_thread(main, ["probe", "auth", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- the rules and the tokens -------------------------------------------------------------------


def test_one_rule_per_case_with_its_spec_source() -> None:
    assert [c.rule for c in CASES] == CASE_RULES
    assert len(set(NAMES)) == len(NAMES) == 43
    assert all(r.source.startswith("spec Authentication, ") for r in RULES)
    assert [c.name for c in CASES if c.control] == ["valid", "emulator-valid", "emulator-v2-valid"]
    assert ACCEPTED == [
        "valid", "expired-within-skew",
        "emulator-valid", "emulator-expired-within-skew",
        "emulator-v2-valid", "emulator-v2-expired-within-skew",
    ]  # fmt: skip
    assert [c.name for c in CASES if c.skip is not None] == ["endorsement"]


CONNECTOR_CASES = [
    "issuer", "audience", "expired", "expired-within-skew", "not-yet-valid", "tampered",
    "unknown-key", "unknown-kid", "forged-signature", "alg-none", "hs256-public-key",
]  # fmt: skip
"""The connector path's cases that the emulator path repeats for each token version."""


def test_the_emulator_path_has_the_connector_cases_for_both_token_versions() -> None:
    for prefix, version, app_id_cases in (
        ("emulator", "1.0", ["no-appid", "wrong-appid"]),
        ("emulator-v2", "2.0", ["wrong-azp"]),
    ):
        cases = [c for c in CASES if c.version == version]
        assert [c.name for c in cases] == [
            f"{prefix}-{n}" for n in ["valid", *app_id_cases, *CONNECTOR_CASES]
        ]
        assert {c.path for c in cases} == {TokenKind.EMULATOR}
        assert [c.rule for c in cases] == [f"AUTH-{c.name.upper()}" for c in cases]
        lane = f"emulator-path (ver {version})"
        assert {c.lane for c in cases} == {lane}
        assert all(RULES[c.rule].summary for c in cases)
    v2 = [r for r in RULES if r.id.startswith("AUTH-EMULATOR-V2-")]
    assert len(v2) == 13 and all("ver 2.0: the app id is in azp" in r.source for r in v2)


NOW = 1_750_000_000.0


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory) -> TokenFactory:
    config = ServiceConfig(certs_dir=tmp_path_factory.mktemp("certs"))
    keys = KeyStore(config.certs_dir, clock=lambda: NOW)
    return TokenFactory(keys, config.placeholders(), config.profile, APP, clock=lambda: NOW)


def check(f: TokenFactory, authorization: str | None, kind: TokenKind) -> str:
    """botemu's own validator on a case's header: "ok" or the reason it refuses (botemu's
    validator knows nothing of endorsements)."""
    p = f.placeholders
    expect = (
        Expectation((p.connector_issuer,), (APP,))
        if kind is TokenKind.CONNECTOR
        else Expectation((p.emulator_issuer,), (APP,), appid=APP)
    )
    scheme, _, token = (authorization or "").partition(" ")
    if scheme != "Bearer":
        return "not bearer"
    try:
        claims = validate(token, f.keys, expect, now=NOW)
    except TokenError as e:
        return e.reason
    if kind is TokenKind.EMULATOR:  # which claim carried the app id
        return "ok (azp)" if claims.get("ver") == "2.0" and "appid" not in claims else "ok (appid)"
    return "ok"


REASONS = {
    "valid": "ok",
    "no-header": "not bearer",
    "scheme": "not bearer",
    "malformed": "malformed",
    "issuer": "issuer",
    "audience": "audience",
    "expired": "expired",
    "expired-within-skew": "ok",
    "not-yet-valid": "not-yet-valid",
    "tampered": "signature",
    "unknown-key": "unknown-kid",
    "unknown-kid": "unknown-kid",
    "forged-signature": "signature",
    "alg-none": "algorithm",
    "hs256-public-key": "algorithm",
    "endorsement": "ok",
    "emulator-valid": "ok (appid)",
    "emulator-no-appid": "appid",
    "emulator-wrong-appid": "appid",
    "emulator-v2-valid": "ok (azp)",
    "emulator-v2-wrong-azp": "appid",
    **{
        f"{prefix}-{name}": reason
        for prefix, good in (("emulator", "ok (appid)"), ("emulator-v2", "ok (azp)"))
        for name, reason in {
            "issuer": "issuer",
            "audience": "audience",
            "expired": "expired",
            "expired-within-skew": good,
            "not-yet-valid": "not-yet-valid",
            "tampered": "signature",
            "unknown-key": "unknown-kid",
            "unknown-kid": "unknown-kid",
            "forged-signature": "signature",
            "alg-none": "algorithm",
            "hs256-public-key": "algorithm",
        }.items()
    },
}


def test_each_token_breaks_exactly_the_rule_of_its_case(factory: TokenFactory) -> None:
    assert {c.name: check(factory, c.build(factory), c.path) for c in CASES} == REASONS


def test_the_attack_tokens_are_what_they_claim(factory: TokenFactory) -> None:
    import base64
    import hashlib
    import hmac

    import jwt
    from cryptography.hazmat.primitives import serialization

    current = factory.keys.current()
    none = factory.alg_none()
    assert none.endswith(".") and jwt.get_unverified_header(none)["alg"] == "none"
    hs = factory.hs256_public_key()
    pem = current.public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input, _, signature = hs.rpartition(".")
    mac = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64encode(mac).rstrip(b"=").decode() == signature
    good, tampered = factory.token(TokenKind.CONNECTOR), factory.tampered()
    assert good.split(".")[::2] == tampered.split(".")[::2]  # same header and signature
    claims = jwt.decode(tampered, options={"verify_signature": False})
    assert claims["exp"] == int(NOW) + 3600 + 86400
    assert claims["serviceurl"] == factory.placeholders.base_url
    embedded = jwt.get_unverified_header(factory.unknown_key())["jwk"]
    assert embedded["kid"] not in {k.kid for k in factory.keys.published()}
    forged = jwt.get_unverified_header(factory.forged_signature())
    assert (forged["kid"], forged["x5t"]) == (current.kid, current.x5t)


def test_emulator_tokens_carry_the_legacy_audience_in_v30(tmp_path: Path) -> None:
    config = ServiceConfig(certs_dir=tmp_path, profile=Profile.V30)
    p = config.placeholders()
    f = TokenFactory(KeyStore(tmp_path), p, Profile.V30, APP, clock=lambda: NOW)
    assert f.claims(TokenKind.EMULATOR)["aud"] == p.legacy_audience
    assert f.claims(TokenKind.EMULATOR, version="2.0")["aud"] == p.legacy_audience
    assert f.claims(TokenKind.CONNECTOR)["aud"] == APP
    # In v3.0 the connector's audience is the emulator path's: the wrong one is neither.
    assert p.connector_audience == p.legacy_audience
    assert f.emulator_wrong_audience not in (p.legacy_audience, APP)


def test_version_2_tokens_carry_the_app_id_in_azp(factory: TokenFactory) -> None:
    v1 = factory.claims(TokenKind.EMULATOR)
    v2 = factory.claims(TokenKind.EMULATOR, version="2.0")
    assert (v1["ver"], v1["appid"], "azp" in v1) == ("1.0", APP, False)
    assert (v2["ver"], v2["azp"], "appid" in v2) == ("2.0", APP, False)
    assert factory.emulator_wrong_audience == factory.placeholders.connector_audience  # v3.1
    wrong = next(c for c in CASES if c.name == "emulator-v2-wrong-azp").build(factory)
    import jwt

    assert wrong is not None
    claims = jwt.decode(wrong.removeprefix("Bearer "), options={"verify_signature": False})
    assert (claims["ver"], claims["azp"], "appid" in claims) == ("2.0", factory.other_app_id, False)


def test_the_endorsement_case_picks_channels_by_the_published_endorsements(tmp_path: Path) -> None:
    config = ServiceConfig(certs_dir=tmp_path)

    def made(*endorsements: str) -> TokenFactory:
        keys = KeyStore(tmp_path, endorsements=endorsements)
        return TokenFactory(keys, config.placeholders(), config.profile, APP, clock=lambda: NOW)

    case = next(c for c in CASES if c.name == "endorsement")
    assert case.skip is not None and case.channel is not None
    none = made()
    assert (none.endorsements, none.channel) == ((), "webchat")
    assert case.skip(none) == NO_ENDORSEMENTS
    both = made("msteams", "webchat")
    assert (both.channel, case.skip(both)) == ("webchat", None)
    assert case.channel(both) == "botemu-unendorsed"
    # Keys endorsed for other channels only: the good cases come from an endorsed channel.
    teams = made("msteams", "botemu-unendorsed", "botemu-unendorsed1")
    assert (teams.channel, case.channel(teams)) == ("msteams", "botemu-unendorsed2")


# --- the echo bot and the weak bots, through POST /_botemu/probe/auth ----------------------------


@pytest.mark.parametrize("profile", [Profile.V31, Profile.V30], ids=["v3.1", "v3.0"])
async def test_the_echo_bot_passes_every_case(servers: Servers, profile: Profile) -> None:
    bot_port = free_port()
    config = await servers.emulator(f"http://127.0.0.1:{bot_port}/api/messages", profile)
    await servers.serve(echo_app(config), bot_port)
    status, report = await post_probe(config, {"bot": bot_url(config), "app_id": APP})
    assert status == 200, report
    assert (report["bot"], report["app_id"]) == (bot_url(config), APP)
    findings = report["findings"]
    assert [f["where"] for f in findings] == NAMES
    assert [f["rule"] for f in findings] == CASE_RULES
    assert {f["severity"] for f in findings} == {"info"}, findings
    assert findings[1]["message"] == "refused a call without an Authorization header (HTTP 403)"
    endorsement = findings[NAMES.index("endorsement")]
    assert endorsement["message"] == f"skipped: {NO_ENDORSEMENTS}"
    # The accepted messages were answered through botemu's connector, in the probe's conversation.
    assert await replies(config, report["conversation_id"]) == [
        f"echo: botemu auth probe: {name}" for name in ACCEPTED
    ]


async def replies(config: ServiceConfig, conversation_id: str) -> list[str]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"{config.base_url}/_botemu/conversations/{conversation_id}/activities") as got,
    ):
        activities = (await got.json())["activities"]
    return [a["text"] for a in activities if a["from"].get("role") == "bot"]


@pytest.mark.parametrize(
    "endorsed", [ENDORSED, ("msteams",)], ids=["botemu-endorsed", "other-channels-only"]
)
async def test_the_echo_bot_refuses_a_channel_the_key_is_not_endorsed_for(
    servers: Servers, endorsed: tuple[str, ...]
) -> None:
    """With endorsements published, the endorsement case runs (the echo bot refuses it) and every
    other case still passes: their activities come from an endorsed channel."""
    bot_port = free_port()
    url = f"http://127.0.0.1:{bot_port}/api/messages"
    config = await servers.emulator(url, endorsements=endorsed)
    await servers.serve(echo_app(config), bot_port)
    findings = await run_probe(config)
    assert [f.where for f in findings] == NAMES
    assert {f.severity for f in findings} == {Severity.INFO}, findings
    endorsement = findings[NAMES.index("endorsement")]
    assert endorsement.rule == "AUTH-ENDORSEMENT"
    assert endorsement.message == (
        "refused a valid token on an activity whose channelId its signing key is not endorsed "
        "for (HTTP 403)"
    )


@pytest.mark.parametrize(
    ("flaw", "failing"),
    [
        pytest.param(flaw, rules, id=flaw or "correct")
        for flaw, rules in PROBE_ERRORS.items()
        if flaw != "answers-401"  # warnings only: its own test
    ],
)
async def test_each_weak_bot_fails_exactly_its_cases(
    servers: Servers, flaw: str | None, failing: set[str]
) -> None:
    config = await servers.bot(weak_app(flaw))
    findings = await run_probe(config)
    assert [f.where for f in findings] == NAMES
    assert by_severity(findings, Severity.ERROR) == failing
    assert by_severity(findings, Severity.WARNING) == set()
    for f in findings:
        if f.severity is Severity.ERROR and flaw == "crashes":
            assert f.message.startswith("crashed on ") and f.evidence == "HTTP 500"
        elif f.severity is Severity.ERROR and flaw == "no-skew":
            assert "the spec allows 5 minutes of clock skew" in f.message
        elif f.severity is Severity.ERROR:
            assert f.message.startswith("accepted a bad token (security hole): ")
            assert f.evidence == "HTTP 200"


@pytest.mark.parametrize(
    ("flaw", "failing"),
    [
        pytest.param(None, set(), id="correct"),
        pytest.param("ignore-endorsements", {"AUTH-ENDORSEMENT"}, id="ignore-endorsements"),
        pytest.param("crashes", rules_of(BAD), id="crashes"),
    ],
)
async def test_with_endorsements_published_a_bot_ignoring_them_fails_exactly_that_case(
    servers: Servers, flaw: str | None, failing: set[str]
) -> None:
    config = await servers.bot(weak_app(flaw), endorsements=ENDORSED)
    findings = await run_probe(config)
    assert [f.where for f in findings] == NAMES
    assert by_severity(findings, Severity.ERROR) == failing
    assert by_severity(findings, Severity.WARNING) == set()
    assert not any(f.message.startswith("skipped: ") for f in findings)


async def test_a_bot_answering_401_gets_warnings_only(servers: Servers) -> None:
    config = await servers.bot(weak_app("answers-401"))
    findings = await run_probe(config)
    assert by_severity(findings, Severity.ERROR) == set()
    assert by_severity(findings, Severity.WARNING) == rules_of(RUN)
    audience = next(f for f in findings if f.where == "audience")
    assert audience.message.endswith("with HTTP 401; the spec says 403")


async def test_the_route_needs_a_registered_bot_it_can_reach(servers: Servers) -> None:
    config = await servers.emulator(f"http://127.0.0.1:{free_port()}/api/messages")
    cases = [
        ({}, 400, "give app_id or bot"),
        ({"app_id": "nobody"}, 404, "no bot is registered with app id nobody"),
        ({"bot": "http://127.0.0.1:1/elsewhere"}, 404, "no bot is registered at http://"),
        ({"app_id": APP, "timeout": 0}, 400, "timeout is a number of seconds"),
        ({"app_id": APP, "bot": "ftp://x/"}, 400, "must be an http(s) URL"),
        ({"app_id": APP}, 502, "cannot connect"),
    ]
    for body, status, message in cases:
        got, text = await post_probe(config, body)
        assert (got, message in text) == (status, True), (body, text)


# --- probe_auth's verdicts, against a bot that answers what it is told ---------------------------


def scripted_app(answers: dict[str, int], slow: frozenset[str] = frozenset()) -> web.Application:
    """Answers each case (named in the message text) with a set status; 403 for the rest, and
    200 for the cases a correct bot accepts unless told otherwise."""

    async def messages(request: web.Request) -> web.Response:
        case = (await request.json())["text"].removeprefix("botemu auth probe: ")
        if case in slow:
            await asyncio.sleep(1)  # past the probe's 0.5 s
        default = 200 if case in ACCEPTED else 403
        return web.Response(status=answers.get(case, default))

    app = web.Application()
    app.router.add_post("/api/messages", messages)
    return app


async def scripted(
    servers: Servers,
    factory: TokenFactory,
    answers: dict[str, int],
    slow: frozenset[str] = frozenset(),
) -> dict[str, Finding]:
    port = free_port()
    base = await servers.serve(scripted_app(answers, slow), port)
    async with aiohttp.ClientSession() as http:
        seen: list[Finding] = []
        findings = await probe_auth(
            f"{base}/api/messages", factory, http=http, timeout=0.5, on_finding=seen.append
        )
    assert seen == findings
    return {f.where: f for f in findings}


async def test_statuses_other_than_403_are_warnings_and_5xx_errors(
    servers: Servers, factory: TokenFactory
) -> None:
    got = await scripted(
        servers,
        factory,
        {"scheme": 400, "issuer": 302, "audience": 503},
        slow=frozenset({"malformed"}),
    )
    assert (got["scheme"].severity, got["scheme"].message) == (
        Severity.WARNING,
        "refused a valid token under the Basic scheme with HTTP 400; the spec says 403",
    )
    assert got["issuer"].severity is Severity.WARNING
    assert "answered a token from the foreign issuer" in got["issuer"].message
    assert (got["audience"].severity, got["audience"].evidence) == (Severity.ERROR, "HTTP 503")
    assert got["malformed"].severity is Severity.WARNING
    assert got["malformed"].message.endswith("no answer within 0.5 s")
    assert got["expired"].severity is Severity.INFO and got["expired"].evidence is None


async def test_a_refused_positive_control_makes_its_path_inconclusive(
    servers: Servers, factory: TokenFactory
) -> None:
    got = await scripted(
        servers, factory, {"valid": 403, "expired-within-skew": 403, "alg-none": 200}
    )
    valid = got["valid"]
    assert (valid.severity, valid.evidence) == (Severity.ERROR, "HTTP 403")
    assert valid.message.startswith("positive control refused: ")
    assert "botemu config" in valid.message
    assert got["expired"].severity is Severity.WARNING
    assert got["expired"].message.endswith("inconclusive")
    assert got["expired-within-skew"].severity is Severity.WARNING
    assert got["alg-none"].severity is Severity.ERROR  # accepting a bad token proves itself
    # The emulator path has its own control, which passed.
    assert {got[n].severity for n in NAMES if n.startswith("emulator-")} == {Severity.INFO}


async def test_each_token_version_of_the_emulator_path_has_its_own_control(
    servers: Servers, factory: TokenFactory
) -> None:
    """A bot that does not take ver 2.0 tokens: the 2.0 control fails (naming azp), the 2.0
    refusals prove nothing, and the connector and ver 1.0 cases are judged as usual."""
    v2 = [n for n in NAMES if n.startswith("emulator-v2-")]
    got = await scripted(servers, factory, {n: 403 for n in v2} | {"emulator-v2-alg-none": 200})
    valid = got["emulator-v2-valid"]
    assert (valid.rule, valid.severity) == ("AUTH-EMULATOR-V2-VALID", Severity.ERROR)
    assert valid.message.startswith(
        "positive control refused: the bot did not accept a valid emulator-path token (ver 2.0) "
        "(HTTP 403), so the probe cannot judge the other emulator-path (ver 2.0) cases; "
        "does it take ver 2.0 tokens, whose app id is in azp"
    )
    wrong = got["emulator-v2-wrong-azp"]
    assert (wrong.rule, wrong.severity) == ("AUTH-EMULATOR-V2-WRONG-AZP", Severity.WARNING)
    assert wrong.message.endswith(
        "but the valid emulator-path (ver 2.0) token was refused too: inconclusive"
    )
    assert got["emulator-v2-expired-within-skew"].severity is Severity.WARNING
    assert got["emulator-v2-alg-none"].severity is Severity.ERROR
    others = {got[n].severity for n in NAMES if n not in v2}
    assert others == {Severity.INFO}


async def test_an_unreachable_bot_or_a_bad_url_stops_the_probe(factory: TokenFactory) -> None:
    async with aiohttp.ClientSession() as http:
        with pytest.raises(ProbeError, match="cannot connect"):
            await probe_auth(f"http://127.0.0.1:{free_port()}/", factory, http=http, timeout=2)
        with pytest.raises(ProbeError, match="must be an http"):
            await probe_auth("file:///etc/passwd", factory, http=http)


# --- botemu probe auth ----------------------------------------------------------------------------


async def test_cli_starts_a_botemu_for_the_echo_bot_and_exits_0(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers: Servers,
) -> None:
    monkeypatch.chdir(tmp_path)  # the in-process botemu keeps its keys in ./certs
    monkeypatch.setenv("BOTEMU_DB", str(tmp_path / "cli.db"))
    config = ServiceConfig(port=free_port(), bots=(BotRegistration(APP, PASSWORD, None),))
    bot_port = free_port()
    url = await servers.serve(echo_app(config), bot_port) + "/api/messages"
    argv = ["--bot", url, "--app-id", APP, "--app-password", PASSWORD]
    code, out, err = await run_cli([*argv, "--emulator", config.base_url], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"Auth probe of {url} (app id {APP}) from {config.base_url}"
    marks = [[n, "skip" if n == "endorsement" else "pass"] for n in NAMES]
    assert [line.split()[:2] for line in lines[1:-1]] == marks
    assert lines[-1] == f"{url}: passed: 42 of 43 cases passed, 0 errors, 0 warnings, 1 skipped"
    assert (tmp_path / "certs" / "signing-keys").is_dir()
    # --endorse: the botemu started here publishes endorsements, and the case runs. A new bot:
    # the first one keeps the keys it fetched (without endorsements) for 5 days.
    url = await servers.serve(echo_app(config), free_port()) + "/api/messages"
    argv = ["--bot", url, "--app-id", APP, "--app-password", PASSWORD]
    code, out, err = await run_cli(
        [*argv, "--emulator", config.base_url, "--endorse", "botemu", "--endorse", "msteams"],
        capsys,
    )
    assert (code, err) == (0, "")
    endorsement = next(line for line in out.splitlines() if line.split()[0] == "endorsement")
    assert endorsement.split()[1] == "pass" and "(HTTP 403)" in endorsement
    assert out.splitlines()[-1] == f"{url}: passed: 43 of 43 cases passed, 0 errors, 0 warnings"


async def test_cli_json_through_a_running_botemu_exits_1(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    config = await servers.bot(weak_app("skip-audience"))
    # No --app-id: the bot registered at the URL with the running botemu.
    argv = ["--bot", bot_url(config), "--emulator", config.base_url, "--json"]
    code, out, err = await run_cli(argv, capsys)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert (report["passed"], report["errors"], report["warnings"]) == (False, 3, 0)
    assert report["skipped"] == 1
    assert (report["app_id"], report["emulator"]) == (APP, config.base_url)
    assert [f["rule"] for f in report["findings"] if f["severity"] == "error"] == [
        "AUTH-AUDIENCE", "AUTH-EMULATOR-AUDIENCE", "AUTH-EMULATOR-V2-AUDIENCE"
    ]  # fmt: skip
    assert set(report["findings"][0]) == {"rule", "severity", "where", "message"}


async def test_cli_warnings_only_exit_0(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    config = await servers.bot(weak_app("answers-401"))
    argv = ["--bot", bot_url(config), "--app-id", APP, "--emulator", config.base_url]
    code, out, _ = await run_cli(argv, capsys)
    assert code == 0
    assert sum(" warn " in line for line in out.splitlines()) == len(RUN) == 36
    assert out.splitlines()[-1].endswith(
        ": passed: 6 of 43 cases passed, 0 errors, 36 warnings, 1 skipped"
    )


@pytest.mark.slow
async def test_cli_as_a_subprocess(servers: Servers) -> None:
    config = await servers.bot(weak_app(None))
    argv = ["probe", "auth", "--bot", bot_url(config), "--emulator", config.base_url, "--json"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "emulator", *argv, "--certs", str(config.certs_dir),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert json.loads(out)["passed"] is True


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--bot", "ftp://bot/"], "must be an http(s) URL", id="bad-bot-url"),
        pytest.param(
            ["--bot", "http://127.0.0.1:1/", "--emulator", "ftp://x"],
            "must be an http(s) URL with a host",
            id="bad-emulator-url",
        ),
        pytest.param(
            ["--bot", "http://127.0.0.1:1/", "--emulator", "http://127.0.0.1:{closed}"],
            "no botemu answers at http://127.0.0.1:",
            id="no-emulator-no-app-id",
        ),
        pytest.param(
            ["--bot", "http://127.0.0.1:1/", "--emulator", "{running}", "--app-id", "nobody"],
            "no bot is registered with app id nobody",
            id="not-registered",
        ),
        pytest.param(
            ["--bot", "{bot}", "--emulator", "{running}"],
            "cannot connect",
            id="bot-unreachable",
        ),
        pytest.param(
            ["--bot", "{bot}", "--emulator", "{running}", "--endorse", "botemu"],
            "publishes its own keys: give --endorse to it (botemu serve --endorse CHANNEL)",
            id="endorse-with-a-running-botemu",
        ),
        pytest.param(
            ["--bot", "{bot}", "--calling", "--endorse", "botemu", "--app-id", APP],
            "--endorse is for messaging bots",
            id="endorse-calling",
        ),
        pytest.param(
            [
                "--bot",
                "{bot}",
                "--emulator",
                "http://127.0.0.1:{closed}",
                "--app-id",
                APP,
                "--endorse",
                "two words",
            ],
            "'two words' cannot be an endorsed channel id",
            id="endorse-a-bad-channel",
        ),
    ],
)
async def test_cli_usage_errors_exit_2_with_one_line(
    servers: Servers, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    config = await servers.emulator(f"http://127.0.0.1:{free_port()}/api/messages")
    values = {"closed": free_port(), "running": config.base_url, "bot": bot_url(config)}
    code, out, err = await run_cli([a.format(**values) for a in argv], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("botemu probe auth: ") and err.count("\n") == 1, err
    assert message in err


def test_cli_timeout_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["probe", "auth", "--bot", "http://x/", "--timeout", "0"])
    assert info.value.code == 2
    assert "--timeout: must be more than 0" in capsys.readouterr().err
