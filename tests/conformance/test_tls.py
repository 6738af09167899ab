"""emulator/conformance/tls.py and ``botemu probe tls`` against small bots over real loopback TLS.

The bots are here, built on ``server_ssl_context``:

strict      requires a client certificate chained to the CA and not revoked by its CRL, and
            answers 403 to a wrong CN
no-crl      strict, but never loads the CRL, so it accepts the revoked certificate
lax         the certificate is optional (checked when sent) and the CN is never looked at
open        never asks for a client certificate
stranger    trusts a different CA for clients, so it refuses even the platform
not-found   strict TLS, but answers 404 to everything
slow-cn     strict TLS, but hangs on a wrong CN instead of refusing it

and the reference IVR bot (``examples/ivr_bot.py``), with and without ``ca.crl.pem`` beside its
certificates.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import shutil
import socket
import ssl
from pathlib import Path
from types import ModuleType

import pytest
import trustme
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from emulator.certs import PLATFORM_CN, CertPaths, ensure_certs, server_ssl_context
from emulator.cli.probe import register
from emulator.conformance.tls import RULES, ProbeError, probe_tls
from emulator.findings import Finding, Severity
from tests.support import load_module

ROOT = Path(__file__).resolve().parent.parent.parent

CASES = ["valid", "no-cert", "expired", "not-yet-valid", "unknown-ca", "wrong-cn", "revoked"]
WORKFLOW = {"id": "w1", "actions": [{"action": "answer", "operationId": "a1"}]}


def peer_cn(request: web.Request) -> str | None:
    cert = request.get_extra_info("peercert") or {}
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


def make_bot(kind: str, paths: CertPaths) -> tuple[web.Application, ssl.SSLContext]:
    async def calls(request: web.Request) -> web.Response:
        await request.read()
        if kind == "not-found":
            return web.Response(status=404)
        if kind in ("strict", "no-crl", "slow-cn") and peer_cn(request) != PLATFORM_CN:
            if kind == "slow-cn":
                await asyncio.sleep(30)
            return web.Response(status=403, text="wrong client certificate")
        return web.json_response(WORKFLOW)

    app = web.Application()
    app.router.add_post("/api/calls", calls)
    ctx = server_ssl_context(
        paths, require_client_cert=kind != "lax", check_revocation=kind != "no-crl"
    )
    if kind == "open":
        ctx.verify_mode = ssl.CERT_NONE
    if kind == "stranger":
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        trustme.CA().configure_trust(ctx)
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_cert_chain(str(paths.bot_cert), str(paths.bot_key))
    return app, ctx


@pytest.fixture
def paths(tmp_path: Path) -> CertPaths:
    return ensure_certs(tmp_path / "certs")


async def start(kind: str, paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer) -> str:
    app, ctx = make_bot(kind, paths)
    server = await aiohttp_server(app, ssl=ctx)
    return f"https://127.0.0.1:{server.port}/api/calls"


def verdicts(findings: list[Finding]) -> dict[str, Severity]:
    return {f.where: f.severity for f in findings}


def test_every_rule_is_registered_with_its_spec_source() -> None:
    assert RULES.ids() == [
        "TLS-VALID-ACCEPTED",
        "TLS-NO-CERT",
        "TLS-EXPIRED",
        "TLS-NOT-YET-VALID",
        "TLS-UNKNOWN-CA",
        "TLS-WRONG-CN",
        "TLS-REVOKED",
    ]
    assert all(r.source.startswith("spec Authentication, Calling platform to bot 2") for r in RULES)


async def test_a_strict_bot_passes_every_case(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("strict", paths, tmp_path, aiohttp_server)
    seen: list[Finding] = []
    findings = await probe_tls(url, paths, timeout=5, on_finding=seen.append)
    assert seen == findings
    assert [f.where for f in findings] == CASES
    assert verdicts(findings) == dict.fromkeys(CASES, Severity.INFO)
    assert [f.rule for f in findings] == RULES.ids()
    assert findings[0].message.startswith("accepted a call with the platform's certificate")
    by_case = {f.where: f for f in findings}
    assert "(HTTP 403)" in by_case["wrong-cn"].message
    assert by_case["expired"].message.startswith("refused a call with an expired certificate")
    revoked = by_case["revoked"]
    assert revoked.rule == "TLS-REVOKED"
    assert revoked.message.startswith("refused a call with a revoked certificate (serial ")
    assert "listed in ca.crl.pem" in revoked.message


@pytest.mark.parametrize(
    ("kind", "failing"),
    [
        pytest.param("lax", {"no-cert", "wrong-cn"}, id="lax"),
        pytest.param("open", set(CASES[1:]), id="open"),
        pytest.param("no-crl", {"revoked"}, id="no-crl"),
    ],
)
async def test_the_probe_fails_exactly_on_the_cases_a_bot_lets_through(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer, kind: str, failing: set[str]
) -> None:
    url = await start(kind, paths, tmp_path, aiohttp_server)
    findings = await probe_tls(url, paths, timeout=5)
    assert {f.where for f in findings if f.severity is Severity.ERROR} == failing
    assert {f.where for f in findings if f.severity is Severity.INFO} == set(CASES) - failing
    for f in findings:
        if f.severity is Severity.ERROR:
            assert f.message.startswith("the bot accepted a call with")
            assert f.evidence == "HTTP 200"


async def test_a_bot_that_ignores_the_crl_fails_tls_revoked(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("no-crl", paths, tmp_path, aiohttp_server)
    findings = await probe_tls(url, paths, timeout=5)
    failed = [f for f in findings if f.severity is Severity.ERROR]
    assert [(f.where, f.rule) for f in failed] == [("revoked", "TLS-REVOKED")]
    assert failed[0].message.startswith("the bot accepted a call with a revoked certificate")
    assert failed[0].evidence == "HTTP 200"


def load_ivr_bot() -> ModuleType:
    return load_module(ROOT / "examples" / "ivr_bot.py", "ivr_bot_tls_probe")


async def serve_ivr_bot(aiohttp_server: AiohttpServer, cert_dir: Path, tmp_path: Path) -> str:
    ivr = load_ivr_bot()
    app = ivr.make_app(platform_cn=PLATFORM_CN, voicemail_dir=tmp_path / "vm")
    server = await aiohttp_server(app, ssl=ivr.tls_context(cert_dir))
    return f"https://127.0.0.1:{server.port}{ivr.CALLS_PATH}"


async def test_the_reference_ivr_bot_loads_the_crl_and_passes(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await serve_ivr_bot(aiohttp_server, paths.dir, tmp_path)
    findings = await probe_tls(url, paths, timeout=5)
    assert verdicts(findings) == dict.fromkeys(CASES, Severity.INFO)
    assert findings[-1].message.startswith("refused a call with a revoked certificate")


async def test_the_reference_ivr_bot_without_the_crl_fails_tls_revoked(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    bare = tmp_path / "bare"  # the bot's files, without ca.crl.pem
    bare.mkdir()
    for path in (paths.ca, paths.bot_cert, paths.bot_key):
        shutil.copy(path, bare / path.name)
    url = await serve_ivr_bot(aiohttp_server, bare, tmp_path)
    findings = await probe_tls(url, paths, timeout=5)
    assert {f.where: f.rule for f in findings if f.severity is Severity.ERROR} == {
        "revoked": "TLS-REVOKED"
    }


async def test_without_the_revoked_certificate_the_case_is_a_warning(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("strict", paths, tmp_path, aiohttp_server)
    paths.revoked_key.unlink()  # a directory from before revocation was probed
    findings = await probe_tls(url, paths, timeout=5)
    assert verdicts(findings) == {
        **dict.fromkeys(CASES, Severity.INFO),
        "revoked": Severity.WARNING,
    }
    revoked = findings[-1]
    assert revoked.rule == "TLS-REVOKED"
    assert revoked.message.startswith("not probed: no platform-revoked.key in ")
    assert "'botemu certs --dir" in revoked.message


async def test_a_crl_that_does_not_list_the_certificate_makes_the_case_a_warning(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("strict", paths, tmp_path, aiohttp_server)
    paths.crl.write_bytes(ensure_certs(tmp_path / "other").crl.read_bytes())
    findings = await probe_tls(url, paths, timeout=5)
    assert verdicts(findings)["revoked"] is Severity.WARNING
    assert "ca.crl.pem does not list platform-revoked.pem" in findings[-1].message


async def test_a_bot_that_refuses_the_platform_makes_the_rest_inconclusive(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("stranger", paths, tmp_path, aiohttp_server)
    findings = await probe_tls(url, paths, timeout=5)
    control, *others = findings
    assert (control.rule, control.severity) == ("TLS-VALID-ACCEPTED", Severity.ERROR)
    assert "cannot judge the other cases" in control.message
    assert all(f.severity is Severity.WARNING and "inconclusive" in f.message for f in others)


async def test_other_statuses_are_warnings(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("not-found", paths, tmp_path, aiohttp_server)
    findings = await probe_tls(url, paths, timeout=5)
    assert verdicts(findings) == {
        "valid": Severity.WARNING,
        "no-cert": Severity.INFO,
        "expired": Severity.INFO,
        "not-yet-valid": Severity.INFO,
        "unknown-ca": Severity.INFO,
        "wrong-cn": Severity.WARNING,
        "revoked": Severity.INFO,
    }
    assert findings[0].evidence == "HTTP 404"


async def test_a_bot_that_hangs_gets_a_warning(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("slow-cn", paths, tmp_path, aiohttp_server)
    findings = await probe_tls(url, paths, timeout=1)
    assert verdicts(findings)["wrong-cn"] is Severity.WARNING
    assert {f.where: f for f in findings}["wrong-cn"].message.endswith("within 1 s")


async def test_a_bot_certificate_from_another_ca_stops_the_probe(
    paths: CertPaths, tmp_path: Path, aiohttp_server: AiohttpServer
) -> None:
    url = await start("strict", paths, tmp_path, aiohttp_server)
    other = tmp_path / "other.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    with pytest.raises(ProbeError, match=r"does not verify against .*other\.pem"):
        await probe_tls(url, paths, timeout=5, ca_file=other)
    # ... and the right one, named explicitly, works
    findings = await probe_tls(url, paths, timeout=5, ca_file=paths.ca)
    assert verdicts(findings) == dict.fromkeys(CASES, Severity.INFO)


async def test_a_bot_that_does_not_speak_http_gets_warnings(paths: CertPaths) -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(garbage, "127.0.0.1", 0, ssl=server_ssl_context(paths))
    try:
        port = server.sockets[0].getsockname()[1]
        findings = await probe_tls(f"https://127.0.0.1:{port}/", paths, timeout=5)
    finally:
        server.close()
        await server.wait_closed()
    assert verdicts(findings) == {
        "valid": Severity.WARNING,
        "no-cert": Severity.INFO,
        "expired": Severity.INFO,
        "not-yet-valid": Severity.INFO,
        "unknown-ca": Severity.INFO,
        "wrong-cn": Severity.WARNING,
        "revoked": Severity.INFO,
    }
    assert findings[0].evidence == "an invalid HTTP response (Bad status line)"
    assert all("\n" not in f.message for f in findings)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        pytest.param("http://127.0.0.1:1/api/calls", "must be an https URL", id="http"),
        pytest.param("https:///api/calls", "must be an https URL", id="no-host"),
    ],
)
async def test_a_non_https_address_is_refused(paths: CertPaths, url: str, message: str) -> None:
    with pytest.raises(ProbeError, match=message):
        await probe_tls(url, paths)


# --- botemu probe tls ---------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The handler runs its own event loop, so it runs in a thread beside the test's servers."""
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers())
    args = parser.parse_args(["probe", "tls", *argv])
    out = io.StringIO()
    code: int = await asyncio.to_thread(args.handler, args, out)
    return code, out.getvalue(), capsys.readouterr().err


async def test_cli_strict_bot_exits_0(
    paths: CertPaths,
    tmp_path: Path,
    aiohttp_server: AiohttpServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = await start("strict", paths, tmp_path, aiohttp_server)
    code, out, err = await run_cli(["--bot", url, "--certs", str(paths.dir)], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"TLS probe of {url}"
    assert [line.split()[:2] for line in lines[1:8]] == [[case, "pass"] for case in CASES]
    assert lines[-1] == f"{url}: passed: 7 of 7 cases passed, 0 errors, 0 warnings"


async def test_cli_lax_bot_exits_1_with_json(
    paths: CertPaths,
    tmp_path: Path,
    aiohttp_server: AiohttpServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = await start("lax", paths, tmp_path, aiohttp_server)
    code, out, err = await run_cli(["--bot", url, "--certs", str(paths.dir), "--json"], capsys)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert (report["passed"], report["errors"], report["warnings"]) == (False, 2, 0)
    assert report["ca"] == str(paths.ca)
    errors = [f["rule"] for f in report["findings"] if f["severity"] == "error"]
    assert errors == ["TLS-NO-CERT", "TLS-WRONG-CN"]


async def test_cli_bot_ignoring_the_crl_exits_1_naming_tls_revoked(
    paths: CertPaths,
    tmp_path: Path,
    aiohttp_server: AiohttpServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = await start("no-crl", paths, tmp_path, aiohttp_server)
    code, out, err = await run_cli(["--bot", url, "--certs", str(paths.dir)], capsys)
    assert (code, err) == (1, "")
    failed = [line for line in out.splitlines() if " FAIL " in line]
    assert len(failed) == 1
    assert failed[0].split()[0] == "revoked"
    assert failed[0].endswith("[TLS-REVOKED]")


async def test_cli_human_output_marks_failures(
    paths: CertPaths,
    tmp_path: Path,
    aiohttp_server: AiohttpServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = await start("lax", paths, tmp_path, aiohttp_server)
    code, out, _ = await run_cli(["--bot", url, "--certs", str(paths.dir)], capsys)
    assert code == 1
    failed = [line.split()[0] for line in out.splitlines() if " FAIL " in line]
    assert failed == ["no-cert", "wrong-cn"]
    assert out.splitlines()[-1] == f"{url}: FAILED: 5 of 7 cases passed, 2 errors, 0 warnings"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["--bot", "http://127.0.0.1/"], "must be an https URL", id="http"),
        pytest.param(["--bot", "https://127.0.0.1:{port}/"], "cannot connect", id="unreachable"),
        pytest.param(
            ["--bot", "https://127.0.0.1:{port}/", "--certs", "{tmp}/none"],
            "no such directory; run 'botemu certs' first",
            id="no-certs",
        ),
        pytest.param(
            ["--bot", "https://127.0.0.1:{port}/", "--ca", "{tmp}/none.pem"],
            "none.pem: no such file",
            id="no-ca-file",
        ),
    ],
)
async def test_cli_usage_errors_exit_2_with_one_line(
    paths: CertPaths,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    argv = [a.format(port=closed_port(), tmp=tmp_path) for a in argv]
    if "--certs" not in argv:
        argv += ["--certs", str(paths.dir)]
    code, out, err = await run_cli([*argv, "--timeout", "5"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("botemu probe tls: ")
    assert err.count("\n") == 1
    assert message in err


def test_cli_timeout_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="botemu")
    register(parser.add_subparsers())
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["probe", "tls", "--bot", "https://x/", "--timeout", "0"])
    assert info.value.code == 2
    assert "--timeout: must be more than 0" in capsys.readouterr().err
