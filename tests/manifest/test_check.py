"""emulator/manifest/check.py, ``POST /_botemu/manifest/check`` and ``botemu manifest check``.

A real botemu runs in-process on a free port with the skill's platformAppId registered, and the
example skill (examples/skill/skill.py, which must pass against its own manifest) or a broken
variant of it (tests/bots/broken_skill.py, which must fail exactly the promise it breaks) runs on
another free port. The manifest is examples/skill/manifest.json with its endpointUrl pointed at
that port.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp import web
from jsonschema import Draft7Validator  # type: ignore[import-untyped]

from emulator.cli.manifest_check import add_check_parser
from emulator.config import BotRegistration, ServiceConfig
from emulator.findings import Finding, Severity
from emulator.manifest.check import DEFAULT_CONSUMER, RULES
from emulator.manifest.validate import load_manifest, position_of
from tests.bots.broken_skill import make_broken_skill, skill
from tests.support import LoopbackServers, free_port, post_control

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "examples" / "skill" / "manifest.json"
DOCUMENT: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))
SKILL = DOCUMENT["endpoints"][0]["platformAppId"]
PASSWORD = "skill-s3cret"
CONSUMER = "c0c0c0c0-1111-4222-8333-444444444444"


def settings(config: ServiceConfig, callers: tuple[str, ...] = (CONSUMER,)) -> Any:
    p = config.placeholders()
    return skill.Settings(
        app_id=SKILL, app_password=PASSWORD, token_url=p.token_url,
        connector_scope=p.connector_scope, openid_metadata_url=p.openid_metadata_url,
        connector_issuer=p.connector_issuer, idp_openid_url=p.idp_openid_url,
        emulator_issuer=p.emulator_issuer, allowed_callers=callers,
    )  # fmt: skip


def manifest_at(url: str) -> dict[str, Any]:
    document = copy.deepcopy(DOCUMENT)
    document["endpoints"][0]["endpointUrl"] = url
    return document


class Servers(LoopbackServers):
    """A botemu with the skill registered, and the skill beside it."""

    async def emulator(self, *bots: BotRegistration) -> ServiceConfig:
        config = ServiceConfig(port=free_port(), certs_dir=self.tmp_path / "certs", bots=bots)
        return await self.serve_emulator(config)

    async def skill(
        self, make: Callable[[ServiceConfig], web.Application] | None = None
    ) -> tuple[ServiceConfig, str]:
        """A botemu with the skill registered, and the skill (``make``; default the example)
        running beside it; (the botemu's config, the skill's URL)."""
        port = free_port()
        url = f"http://127.0.0.1:{port}/api/messages"
        config = await self.emulator(BotRegistration(SKILL, PASSWORD, url))
        await self.serve((make or (lambda c: skill.make_app(settings(c))))(config), port)
        return config, url


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    s = Servers(tmp_path)
    try:
        yield s
    finally:
        await s.close()


async def post_check(config: ServiceConfig, body: dict[str, Any]) -> tuple[int, Any]:
    return await post_control(config, "/_botemu/manifest/check", body)


async def check(config: ServiceConfig, url: str, **extra: Any) -> list[Finding]:
    body = {"manifest": manifest_at(url), "consumer": CONSUMER, "wait": 2, **extra}
    status, report = await post_check(config, body)
    assert status == 200, report
    return [
        Finding(f["rule"], Severity(f["severity"]), f["where"], f["message"], f.get("evidence"))
        for f in report["findings"]
    ]


def errors(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.rule, f.where) for f in findings if f.severity is Severity.ERROR]


# --- the example skill and its broken variants ---------------------------------------------------


async def test_the_example_skill_passes_its_own_manifest(servers: Servers) -> None:
    config, url = await servers.skill()
    findings = await check(config, url)
    assert [f for f in findings if f.severity is not Severity.INFO] == []
    passes = {(f.rule, f.where) for f in findings}
    assert passes == {
        ("SKILL-REACHABLE", "endpoints/default"),
        ("SKILL-ACCEPTS", "activities/bookFlight"),
        ("SKILL-EOC-RESULT", "activities/bookFlight/resultValue"),
        ("SKILL-SENT-DECLARED", "activities/bookFlight"),
        ("SKILL-ACCEPTS", "activities/getWeather"),
        ("SKILL-INVOKE-RESULT", "activities/getWeather/resultValue"),
        ("SKILL-ACCEPTS", "activities/message"),
        ("SKILL-SENT-DECLARED", "activities/message"),
    }


async def test_the_broken_skill_fails_exactly_the_result_value_it_violates(
    servers: Servers,
) -> None:
    config, url = await servers.skill(lambda c: make_broken_skill(settings(c)))
    findings = await check(config, url)
    assert errors(findings) == [
        ("SKILL-INVOKE-RESULT", "activities/getWeather/resultValue: $.temperature")
    ]
    (bad,) = [f for f in findings if f.severity is Severity.ERROR]
    assert "is not of type 'number'" in bad.message
    assert bad.evidence is not None and "°C" in bad.evidence
    assert not [f for f in findings if f.severity is Severity.WARNING]


async def test_an_undeclared_trace_fails_sent_declared(servers: Servers) -> None:
    config, url = await servers.skill(lambda c: make_broken_skill(settings(c), "undeclared-trace"))
    findings = await check(config, url)
    assert errors(findings) == [("SKILL-SENT-DECLARED", "activities/message")]
    (bad,) = [f for f in findings if f.severity is Severity.ERROR]
    assert bad.message == "the skill sent trace 'debug': activitiesSent does not declare it"


class WrongBooking(skill.Skill):  # type: ignore[misc, name-defined]
    """Ends bookFlight with a price whose amount is text and without a bookingReference."""

    def book_flight(self, request: Any) -> dict[str, Any]:
        booking: dict[str, Any] = super().book_flight(request)
        booking["price"]["amount"] = "cheap"
        del booking["bookingReference"]
        return booking


async def test_an_end_of_conversation_value_is_checked_at_each_path(servers: Servers) -> None:
    config, url = await servers.skill(lambda c: skill.make_app(settings(c), WrongBooking()))
    findings = await check(config, url)
    assert errors(findings) == [
        ("SKILL-EOC-RESULT", "activities/bookFlight/resultValue: $.bookingReference"),
        ("SKILL-EOC-RESULT", "activities/bookFlight/resultValue: $.price.amount"),
    ]


class Progress(skill.Skill):  # type: ignore[misc, name-defined]
    """Also sends an event ``progress`` before replying to a message, its percent as text."""

    def handle(self, activity: Any) -> Any:
        answer = super().handle(activity)
        if activity.get("type") != "message":
            return answer
        event = {**skill.reply(activity, ""), "type": "event", "name": "progress",
                 "value": {"percent": "half"}}  # fmt: skip
        return skill.Answer(answer.status, answer.body, (event, *answer.sends))


async def test_a_sent_value_is_checked_against_activities_sent(servers: Servers) -> None:
    config, url = await servers.skill(lambda c: skill.make_app(settings(c), Progress()))
    document = manifest_at(url)
    document["activitiesSent"]["progress"] = {
        "type": "event",
        "name": "progress",
        "value": {"type": "object", "properties": {"percent": {"type": "integer"}}},
    }
    status, report = await post_check(config, {"manifest": document, "consumer": CONSUMER})
    assert status == 200
    bad = [(f["rule"], f["where"]) for f in report["findings"] if f["severity"] == "error"]
    assert bad == [
        ("SKILL-SENT-VALUE", "activities/message/activitiesSent/progress/value: $.percent")
    ]


async def test_a_result_that_never_comes_is_a_warning(servers: Servers) -> None:
    class Silent(skill.Skill):  # type: ignore[misc, name-defined]
        def handle(self, activity: Any) -> Any:
            return skill.Answer()  # accepts everything, answers nothing

    config, url = await servers.skill(lambda c: skill.make_app(settings(c), Silent()))
    findings = await check(config, url, wait=0.3)
    assert errors(findings) == [("SKILL-INVOKE-RESULT", "activities/getWeather/resultValue: $")]
    warned = [(f.rule, f.where) for f in findings if f.severity is Severity.WARNING]
    assert warned == [("SKILL-EOC-RESULT", "activities/bookFlight/resultValue")]


# --- what botemu sends ---------------------------------------------------------------------------


def recording_app(seen: list[tuple[dict[str, Any], dict[str, Any]]]) -> web.Application:
    """A skill that accepts everything and remembers (token claims, activity)."""

    async def messages(request: web.Request) -> web.Response:
        token = request.headers["Authorization"].removeprefix("Bearer ")
        claims = jwt.decode(token, options={"verify_signature": False})
        seen.append((claims, await request.json()))
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/api/messages", messages)
    return app


async def test_each_activity_goes_as_a_skill_consumer_would_send_it(servers: Servers) -> None:
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    config, url = await servers.skill(lambda c: recording_app(seen))
    findings = await check(config, url, wait=0.1)
    p = config.placeholders()
    assert [a["type"] for _, a in seen] == ["event", "invoke", "message"]
    for claims, activity in seen:
        assert claims["iss"] == p.emulator_issuer
        assert (claims["aud"], claims["appid"], claims["ver"]) == (SKILL, CONSUMER, "1.0")
        assert activity["serviceUrl"] == p.base_url
        assert activity["recipient"]["id"] == SKILL
    (_, event), (_, invoke), (_, message) = seen
    assert event["name"] == "bookFlight" and invoke["name"] == "getWeather"
    definitions = DOCUMENT["definitions"]
    for activity, schema in ((event, "bookingRequest"), (invoke, "weatherRequest")):
        root = {**definitions[schema], "definitions": definitions}
        Draft7Validator(root, format_checker=Draft7Validator.FORMAT_CHECKER).validate(
            activity["value"]
        )
    assert isinstance(message["text"], str) and message["text"]
    assert len({a["conversation"]["id"] for _, a in seen}) == 3  # one conversation each
    # The invoke got an empty 200: its declared result is missing.
    assert errors(findings) == [("SKILL-INVOKE-RESULT", "activities/getWeather/resultValue: $")]


async def test_the_samples_follow_the_seed(servers: Servers) -> None:
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    config, url = await servers.skill(lambda c: recording_app(seen))
    for seed in (7, 7, 8):
        await check(config, url, wait=0, seed=seed)
    values = [a.get("value", a.get("text")) for _, a in seen]
    assert values[0:3] == values[3:6]
    assert values[0:3] != values[6:9]


async def test_a_value_schema_without_samples_is_a_warning_and_not_sent(servers: Servers) -> None:
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    config, url = await servers.skill(lambda c: recording_app(seen))
    document = manifest_at(url)
    document["activities"]["bookFlight"]["value"] = {"type": "string", "minLength": 5,
                                                     "maxLength": 2}  # fmt: skip
    status, report = await post_check(config, {"manifest": document, "wait": 0})
    assert status == 200
    (sample,) = [f for f in report["findings"] if f["rule"] == "SKILL-SAMPLE"]
    assert (sample["severity"], sample["where"]) == ("warning", "activities/bookFlight/value")
    assert [a["type"] for _, a in seen] == ["invoke", "message"]


# --- when the check cannot pass or cannot run ------------------------------------------------------


async def test_an_unreachable_skill_fails_reachable_once(servers: Servers) -> None:
    url = f"http://127.0.0.1:{free_port()}/api/messages"
    config = await servers.emulator(BotRegistration(SKILL, PASSWORD, url))
    findings = await check(config, url)
    assert errors(findings) == [("SKILL-REACHABLE", "endpoints/default")]
    assert findings[0].message.startswith(f"cannot reach the skill at {url}: connection failed")


async def test_a_skill_that_refuses_the_consumer_fails_accepts(servers: Servers) -> None:
    config, url = await servers.skill(lambda c: skill.make_app(settings(c, callers=("nobody",))))
    findings = await check(config, url)
    assert errors(findings) == [
        ("SKILL-ACCEPTS", "activities/bookFlight"),
        ("SKILL-ACCEPTS", "activities/getWeather"),
        ("SKILL-ACCEPTS", "activities/message"),
    ]
    assert findings[-1].evidence is not None and findings[-1].evidence.startswith("HTTP 403")


async def test_the_route_needs_a_registered_skill_and_good_input(servers: Servers) -> None:
    config = await servers.emulator()
    url = "http://127.0.0.1:1/api/messages"
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({}, 400, "manifest is required"),
        ({"manifest": manifest_at(url)}, 404,
         f"the skill's platformAppId {SKILL} is not registered with this botemu"),
        ({"manifest": manifest_at(url), "endpoint": "other"}, 400,
         "the manifest has no endpoint named 'other' (it has: default)"),
        ({"manifest": {"endpoints": []}}, 400, "the manifest has no endpoints"),
        ({"manifest": manifest_at(url), "seed": True}, 400, "seed is an integer"),
        ({"manifest": manifest_at(url), "wait": -1}, 400, "wait is a number of seconds"),
    ]  # fmt: skip
    for body, status, message in cases:
        got, text = await post_check(config, body)
        assert (got, message in text) == (status, True), (body, text)


async def test_a_manifest_without_activities_checks_nothing_and_fails(servers: Servers) -> None:
    config, url = await servers.skill()
    document = manifest_at(url)
    del document["activities"]
    status, report = await post_check(config, {"manifest": document})
    assert status == 200
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == [
        ("SKILL-ACTIVITIES", "error")
    ]


def test_every_rule_has_a_source_in_the_manifest_spec() -> None:
    assert RULES.ids() == [
        "SKILL-ACTIVITIES", "SKILL-REACHABLE", "SKILL-ACCEPTS", "SKILL-INVOKE-RESULT",
        "SKILL-EOC-RESULT", "SKILL-SENT-DECLARED", "SKILL-SENT-VALUE", "SKILL-SAMPLE",
    ]  # fmt: skip
    assert all(r.source.startswith("spec A. Skill manifest") for r in RULES)


# --- botemu manifest check --------------------------------------------------------------------------


def run_cli(argv: list[str]) -> int:
    """``botemu manifest check ARGV`` (the parser add_check_parser builds, as botemu wires it)."""
    parser = argparse.ArgumentParser(prog="botemu manifest")
    add_check_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["check", *argv])
    code: int = args.handler(args, sys.stdout)
    return code


async def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The command runs its own event loop, so it runs in a thread beside the test's servers."""
    code = await asyncio.to_thread(run_cli, argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_cli_starts_a_botemu_and_the_example_skill_passes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers: Servers,
) -> None:
    monkeypatch.chdir(tmp_path)  # the in-process botemu keeps its keys in ./certs
    monkeypatch.setenv("BOTEMU_DB", str(tmp_path / "cli.db"))
    config = ServiceConfig(port=free_port())
    port = free_port()
    url = await servers.serve(skill.make_app(settings(config, ("*",))), port) + "/api/messages"
    argv = [str(MANIFEST), "--skill-url", url, "--app-password", PASSWORD,
            "--emulator", config.base_url, "--certs", str(config.certs_dir), "--wait", "2"]  # fmt: skip
    code, out, err = await cli(argv, capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        f"Skill check of {MANIFEST}: endpoint default at {url} (app id {SKILL}) from "
        f"{config.base_url}, seed 0"
    )
    assert [line.split() for line in lines[-4:-1]] == [
        ["bookFlight", "(event)", "pass"],
        ["getWeather", "(invoke)", "pass"],
        ["message", "(message)", "pass"],
    ]
    assert lines[2].split()[:2] == ["endpoints/default", "pass"]
    assert lines[-1] == f"{MANIFEST}: passed: 3 of 3 activities passed, 0 errors, 1 warning"


async def test_cli_json_reports_the_broken_skill_and_exits_1(
    capsys: pytest.CaptureFixture[str], servers: Servers
) -> None:
    config, url = await servers.skill(lambda c: make_broken_skill(settings(c, ("*",))))
    argv = [
        str(MANIFEST),
        "--skill-url",
        url,
        "--emulator",
        config.base_url,
        "--certs",
        str(config.certs_dir),
        "--json",
    ]
    code, out, err = await cli(argv, capsys)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert (report["passed"], report["errors"], report["skill"]) == (False, 1, url)
    assert (report["app_id"], report["consumer"]) == (SKILL, DEFAULT_CONSUMER)
    (error,) = [f for f in report["findings"] if f["severity"] == "error"]
    assert (error["rule"], error["where"]) == (
        "SKILL-INVOKE-RESULT",
        "activities/getWeather/resultValue: $.temperature",
    )


async def test_cli_human_output_shows_the_failure_inline(
    capsys: pytest.CaptureFixture[str], servers: Servers
) -> None:
    config, url = await servers.skill(lambda c: make_broken_skill(settings(c, ("*",))))
    argv = [
        str(MANIFEST),
        "--skill-url",
        url,
        "--emulator",
        config.base_url,
        "--certs",
        str(config.certs_dir),
    ]
    code, out, _ = await cli(argv, capsys)
    assert code == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["getWeather"])
    assert lines[at].split() == ["getWeather", "(invoke)", "FAIL"]
    assert (
        lines[at + 1]
        .strip()
        .startswith(
            "error: activities/getWeather/resultValue: $.temperature: the invoke response body "
            "does not match: "
        )
    )
    assert lines[-1] == f"{MANIFEST}: FAILED: 2 of 3 activities passed, 1 error, 1 warning"


async def test_cli_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], servers: Servers
) -> None:
    config = await servers.emulator()  # running, but the skill is not registered there
    code, _, err = await cli([str(tmp_path / "missing.json")], capsys)
    assert code == 2 and err.startswith("botemu manifest check: ")
    code, _, err = await cli(
        [str(MANIFEST), "--emulator", config.base_url, "--certs", str(config.certs_dir)], capsys
    )
    assert code == 2
    assert f"the skill's platformAppId {SKILL} is not registered with this botemu" in err
    code, _, err = await cli([str(MANIFEST), "--endpoint", "nope", "--emulator", config.base_url, "--certs", str(config.certs_dir)],
                             capsys)  # fmt: skip
    assert (code, err.strip()) == (
        2, "botemu manifest check: the manifest has no endpoint named 'nope' (it has: default)"
    )  # fmt: skip


async def test_cli_an_invalid_manifest_exits_1_unchecked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = copy.deepcopy(DOCUMENT)
    document["endpoints"][0]["platformAppId"] = "not-a-guid"
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    code, out, err = await cli([str(path), "--emulator", f"http://127.0.0.1:{free_port()}"],
                               capsys)  # fmt: skip
    assert (code, err) == (1, "")
    assert "/endpoints/0/platformAppId" in out
    assert out.splitlines()[-1] == f"{path}: invalid manifest (1 error): the skill was not checked"


def with_culture_warnings(tmp_path: Path, url: str | None = None) -> Path:
    """The example skill's manifest with language models written as published manifests write
    them: a lower-case key and a display name (MF-CULTURE-NAME, a warning unless --strict)."""
    document = manifest_at(url) if url else copy.deepcopy(DOCUMENT)
    document["dispatchModels"] = {"languages": {"en-us": [{
        "name": "Example skill LU (English)", "contentType": "application/lu",
        "url": "https://skill.example.com/models/example-en.lu",
    }]}}  # fmt: skip
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


async def test_cli_strict_culture_names_make_the_manifest_invalid_and_unchecked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = with_culture_warnings(tmp_path)
    emulator = f"http://127.0.0.1:{free_port()}"  # nothing answers: the skill is never contacted
    code, out, err = await cli([str(path), "--strict", "--emulator", emulator], capsys)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert [[*line.split(": ")[1:3], line.rsplit(" ", 1)[1]] for line in lines[:-1]] == [
        ["warning", "/endpoints/0/endpointUrl", "[MF-ENDPOINT-HTTPS]"],  # --strict leaves it
        ["error", "/dispatchModels/languages/en-us", "[MF-CULTURE-NAME]"],
        ["error", "/dispatchModels/languages/en-us/0/name", "[MF-CULTURE-NAME]"],
    ]
    manifest = load_manifest(path)
    assert [line.split(": ")[0] for line in lines[:-1]] == [
        "{}:{}:{}".format(path, *position_of(manifest, line.split(": ")[2]) or (0, 0))
        for line in lines[:-1]
    ]
    assert lines[-1] == f"{path}: invalid manifest (2 errors): the skill was not checked"
    code, out, _ = await cli([str(path), "--strict", "--json", "--emulator", emulator], capsys)
    report = json.loads(out)
    assert (code, report["valid"], report["errors"], report["warnings"]) == (1, False, 2, 1)


async def test_cli_culture_names_are_warnings_and_the_skill_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], servers: Servers
) -> None:
    config, url = await servers.skill(lambda c: skill.make_app(settings(c, ("*",))))
    path = with_culture_warnings(tmp_path, url)
    code, out, err = await cli(
        [str(path), "--emulator", config.base_url, "--certs", str(config.certs_dir), "--json"],
        capsys,
    )
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["valid"], report["passed"], report["errors"]) == (True, True, 0)
    warnings = [(f["rule"], f["where"]) for f in report["findings"] if f["severity"] == "warning"]
    assert ("MF-CULTURE-NAME", "/dispatchModels/languages/en-us") in warnings
    assert ("MF-CULTURE-NAME", "/dispatchModels/languages/en-us/0/name") in warnings
