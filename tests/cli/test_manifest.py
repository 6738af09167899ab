"""``botemu manifest validate`` through a parser built here (as emulator/cli.py builds it), files,
standard input, and URLs served by a local aiohttp server."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.cli.manifest import add_manifest_parser, register
from emulator.manifest import ManifestError, load_manifest, schema

HERE = Path(__file__).parent.parent / "manifest" / "manifests"
FIVE = HERE / "five-errors.json"
TRAVEL = HERE / "travel-skill.json"
ServerFactory = Callable[[web.Application], Awaitable[TestServer]]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="botemu")
    sub = parser.add_subparsers()
    register(sub)
    args = parser.parse_args(argv)
    out = io.StringIO()
    code: int = args.handler(args, out)
    return code, out.getvalue(), capsys.readouterr().err


def test_a_valid_manifest_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["manifest", "validate", str(TRAVEL)], capsys)
    assert (code, out, err) == (0, f"{TRAVEL}: valid skill manifest, no findings\n", "")


def test_every_violation_is_a_line_with_file_line_column_pointer_and_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["manifest", "validate", str(FIVE)], capsys)
    assert code == 1
    assert out.splitlines() == [
        f"{FIVE}:5:3: error: /version: expected a string, got a number (2) [type]",
        f"{FIVE}:11:7: error: /endpoints/0/platformAppId: expected an application ID: 8-4-4-4-12 "
        "hexadecimal digits separated by hyphens, such as 2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6c, "
        "got a string ('2b5f3a8c-0d1e-4f6a-9b7c-1d2e3f4a5b6') [pattern]",
        f"{FIVE}:17:60: error: /dispatchModels/languages/en-US/0/url: expected an absolute URI "
        "(a scheme such as https:, no spaces), got a string ('models/five.lu') [format]",
        f"{FIVE}:22:5: error: /activities/book: an event activity needs 'name' [required]",
        f"{FIVE}:23:34: error: /activities/greet/name: a message activity has no name: the "
        "utterance travels in the text property of the message [additionalProperties]",
        f"{FIVE}: invalid skill manifest: 5 errors, 0 warnings",
    ]


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["manifest", "validate", str(HERE / "warnings-only.json")], capsys)
    assert code == 0
    assert out.splitlines()[-1].endswith("valid skill manifest: 0 errors, 4 warnings")
    assert ": warning: /endpoints/0/endpointUrl: endpointUrl is http, not https" in out


SHAPES = HERE / "published-shapes.json"
SHAPES_PLACES = [
    ("24:7", "/dispatchModels/languages/en-us"),
    ("26:11", "/dispatchModels/languages/en-us/0/name"),
    ("32:7", "/dispatchModels/languages/fr"),
    ("34:11", "/dispatchModels/languages/fr/0/name"),
    ("41:11", "/dispatchModels/languages/de-DE/0/name"),
]


def places(out: str) -> list[tuple[str, str, str, str]]:
    """(line:col, severity, pointer, rule) of each finding line."""
    found = []
    for line in out.splitlines()[:-1]:
        at, severity, where, rest = line.split(": ", 3)
        found.append((at.split(":", 1)[1], severity, where, rest.rsplit(" [", 1)[1].rstrip("]")))
    return found


def test_real_manifest_shapes_are_valid_with_culture_warnings_and_exit_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["manifest", "validate", str(SHAPES)], capsys)
    assert (code, err) == (0, "")
    assert places(out) == [(at, "warning", w, "MF-CULTURE-NAME") for at, w in SHAPES_PLACES]
    assert out.splitlines()[-1] == f"{SHAPES}: valid skill manifest: 0 errors, 5 warnings"


def test_strict_makes_culture_names_errors_at_the_same_places_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["manifest", "validate", "--strict", str(SHAPES)], capsys)
    assert (code, err) == (1, "")
    assert places(out) == [(at, "error", w, "MF-CULTURE-NAME") for at, w in SHAPES_PLACES]
    assert out.splitlines()[-1] == f"{SHAPES}: invalid skill manifest: 5 errors, 0 warnings"
    _, lax, _ = run(["manifest", "validate", str(SHAPES)], capsys)
    assert [line.replace(": warning: ", ": error: ") for line in lax.splitlines()[:-1]] == (
        out.splitlines()[:-1]
    )


def test_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["manifest", "validate", "--json", str(SHAPES)], capsys)
    (lax,) = json.loads(out)
    assert (code, lax["valid"], lax["errors"], lax["warnings"]) == (0, True, 0, 5)
    code, out, _ = run(["manifest", "validate", "--json", "--strict", str(SHAPES)], capsys)
    (strict,) = json.loads(out)
    assert (code, strict["valid"], strict["errors"], strict["warnings"]) == (1, False, 5, 0)
    assert [(f["line"], f["column"], f["severity"]) for f in strict["findings"]] == [
        (f["line"], f["column"], "error") for f in lax["findings"]
    ]


def test_strict_leaves_other_warnings_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["manifest", "validate", "--strict", str(HERE / "warnings-only.json")], capsys
    )
    assert code == 0
    assert out.splitlines()[-1].endswith("valid skill manifest: 0 errors, 4 warnings")
    code, _, _ = run(["manifest", "validate", "--strict", str(TRAVEL)], capsys)
    assert code == 0


def test_strict_an_unreadable_source_still_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["manifest", "validate", "--strict", str(SHAPES), str(HERE / "broken.json")], capsys
    )
    assert code == 2
    assert "error: /dispatchModels/languages/en-us:" in out and "broken.json" in err


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["manifest", "validate", "--json", str(FIVE), str(TRAVEL)], capsys)
    assert code == 1
    five, travel = json.loads(out)
    assert five["file"] == str(FIVE)
    assert (five["readable"], five["valid"], five["errors"], five["warnings"]) == (
        True,
        False,
        5,
        0,
    )
    assert five["findings"][0] == {
        "rule": "type",
        "severity": "error",
        "where": "/version",
        "message": "expected a string, got a number (2)",
        "evidence": "2",
        "line": 5,
        "column": 3,
    }
    assert [f["line"] for f in five["findings"]] == [5, 11, 17, 22, 23]
    assert travel == {
        "file": str(TRAVEL),
        "readable": True,
        "valid": True,
        "errors": 0,
        "warnings": 0,
        "findings": [],
    }


def test_an_unreadable_file_exits_2_and_the_others_are_still_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = HERE / "broken.json"
    code, out, err = run(["manifest", "validate", str(broken), str(TRAVEL)], capsys)
    assert code == 2
    message = "not valid JSON: a comma before '}' (JSON allows no trailing comma)"
    assert err == f"botemu manifest validate: {broken}:5:19: {message}\n"
    assert out == f"{TRAVEL}: valid skill manifest, no findings\n"
    code, out, _ = run(["manifest", "validate", "--json", str(broken)], capsys)
    assert code == 2
    assert json.loads(out) == [
        {
            "file": str(broken),
            "readable": False,
            "valid": False,
            "error": {"message": message, "line": 5, "column": 19},
        }
    ]


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["manifest", "validate", str(tmp_path / "nope.json")], capsys)
    assert (code, out) == (2, "")
    assert err.endswith("nope.json: no such file\n")


def test_json_that_is_not_an_object_is_invalid_not_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "list.json"
    path.write_text("[\n  {}\n]\n", encoding="utf-8")
    code, out, _ = run(["manifest", "validate", str(path)], capsys)
    assert code == 1
    assert out.splitlines()[0] == (
        f"{path}:1:1: error: (root): expected a skill manifest (an object), got an array [type]"
    )


def test_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO((HERE / "five-errors.yaml").read_bytes()))
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, _ = run(["manifest", "validate", "-"], capsys)
    assert code == 1
    assert (
        out.splitlines()[0]
        == "<stdin>:5:1: error: /version: expected a string, got a number (2) [type]"
    )


def test_manifest_alone_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["manifest"], capsys)
    assert code == 2
    assert "validate" in err


def test_schema_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["manifest", "schema"], capsys)
    assert code == 0
    assert json.loads(out) == schema()


def test_others_add_subcommands_to_manifest_before_or_after_register() -> None:
    for register_first in (True, False):
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        if register_first:
            commands = register(sub)
            assert add_manifest_parser(sub) is commands
        else:
            commands = add_manifest_parser(sub)
            assert register(sub) is commands
        commands.add_parser("check").set_defaults(handler="check")
        assert set(commands.choices) == {"validate", "schema", "check"}
        assert parser.parse_args(["manifest", "check"]).handler == "check"
        assert register(sub) is commands  # idempotent


# --- URLs ----------------------------------------------------------------------------------------


def skill_host() -> web.Application:
    travel = TRAVEL.read_bytes()

    async def manifest(request: web.Request) -> web.Response:
        return web.Response(body=travel, content_type="application/json")

    async def yaml_manifest(request: web.Request) -> web.Response:
        body = (HERE / "calendar-skill.yaml").read_bytes()
        return web.Response(body=body, content_type="application/yaml")

    async def five(request: web.Request) -> web.Response:
        return web.Response(body=FIVE.read_bytes(), content_type="application/json")

    async def huge(request: web.Request) -> web.Response:
        return web.Response(body=b" " * (1024 * 1024 + 1), content_type="application/json")

    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            for _ in range(40):
                await response.write(b" " * 65536)
        except (ConnectionResetError, ConnectionError):
            pass
        return response

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.Response(text="{}")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("ftp://files.example.com/manifest.json")

    app = web.Application()
    app.router.add_get("/manifest", manifest)
    app.router.add_get("/calendar", yaml_manifest)
    app.router.add_get("/five-errors.json", five)
    app.router.add_get("/huge", huge)
    app.router.add_get("/endless", endless)
    app.router.add_get("/slow", slow)
    app.router.add_get("/moved", moved)
    return app


async def run_in_thread(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """The CLI blocks (urllib); the server runs on this test's event loop."""
    return await asyncio.to_thread(run, argv, capsys)


async def test_a_manifest_from_a_url(
    aiohttp_server: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = await aiohttp_server(skill_host())
    url = str(server.make_url("/manifest"))
    code, out, _ = await run_in_thread(["manifest", "validate", url], capsys)
    assert (code, out) == (0, f"{url}: valid skill manifest, no findings\n")
    yaml_url = str(server.make_url("/calendar"))  # no suffix: the Content-Type says YAML
    manifest = await asyncio.to_thread(load_manifest, yaml_url)
    assert manifest.document["name"] == "Calendar skill"
    assert manifest.positions["/endpoints/1"] == (17, 5)


async def test_an_invalid_manifest_from_a_url_has_lines(
    aiohttp_server: ServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = await aiohttp_server(skill_host())
    url = str(server.make_url("/five-errors.json"))
    code, out, _ = await run_in_thread(["manifest", "validate", url], capsys)
    assert code == 1
    assert (
        out.splitlines()[0]
        == f"{url}:5:3: error: /version: expected a string, got a number (2) [type]"
    )


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param("/huge", "larger than 1 MiB (1048577 bytes)", id="content-length"),
        pytest.param("/endless", "larger than 1 MiB", id="chunked"),
        pytest.param("/missing", "HTTP 404 Not Found", id="not-found"),
        pytest.param(
            "/moved",
            "redirected to a URL that is not http(s): ftp://files.example.com/manifest.json",
            id="redirect",
        ),
    ],
)
async def test_urls_that_are_refused_exit_2(
    aiohttp_server: ServerFactory, capsys: pytest.CaptureFixture[str], path: str, message: str
) -> None:
    server = await aiohttp_server(skill_host())
    url = str(server.make_url(path))
    code, out, err = await run_in_thread(["manifest", "validate", url], capsys)
    assert (code, out) == (2, "")
    assert err == f"botemu manifest validate: {url}: {message}\n"


async def test_a_slow_url_times_out(aiohttp_server: ServerFactory) -> None:
    server = await aiohttp_server(skill_host())
    url = str(server.make_url("/slow"))
    with pytest.raises(ManifestError, match=r"no answer within 0\.2 s"):
        await asyncio.to_thread(load_manifest, url, timeout=0.2)


async def test_an_unreachable_url() -> None:
    with pytest.raises(ManifestError, match="cannot fetch"):
        await asyncio.to_thread(load_manifest, "http://127.0.0.1:9/manifest.json", timeout=2)
