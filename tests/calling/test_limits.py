"""The limits that bound the work of one message (docs/calling-http.md, "Limits"), one test per
attack a bot (or a file given to ``botemu lint``) can make.

The memory attacks run in a subprocess: a small Python program that measures its own child (the
attack) with ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``, so the peak is that of the
attack alone, whatever other tests of this process spawned. The attack runs under an address
space limit, so a regression fails the test with a MemoryError instead of taking the machine.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from emulator.calling.caller import CallerScript
from emulator.calling.delivery import RetryPolicy
from emulator.calling.engine import FAILURE_REASON_MAX, failure_reason
from emulator.calling.events import EndReason
from emulator.calling.rules import FINDINGS_PER_RULE, MAX_ACTIONS, RuleContext, validate_workflow
from emulator.calling.session import DEFAULT_DEADLINE, CallSettings, place_call
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSON
from emulator.transcripts.store import TranscriptStore
from tests.calling.test_session import ServerFactory

ROOT = Path(__file__).resolve().parents[2]
PEAK_MB = 400
"""The most a bounded attack may take: a call or a lint starts at about 60-100 MB."""
ATTACK_TIMEOUT = 120

MEASURE = r"""
import json, resource, subprocess, sys
GIB = 1024 ** 3

def bounded():  # an address-space limit: a regression fails with MemoryError, not the machine
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))

done = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=bounded)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
print(json.dumps({"rc": done.returncode, "peak_mb": peak, "out": done.stdout,
                  "err": done.stderr[-4000:]}))
"""

CALL_ATTACK = r"""
import asyncio, contextlib, io, json, sys, tempfile, threading, time
from pathlib import Path
from aiohttp import web
from emulator.cli import main
from emulator.transcripts.store import TranscriptStore

kind, with_callback = sys.argv[1], sys.argv[2] == "callback"
bot = {"results": []}

def workflow(port):
    links = f',"links":{{"callback":"http://127.0.0.1:{port}/cb"}}' if with_callback else ""
    if kind == "zeros":  # a 1 MiB Workflow of 0s: every item is the wrong type
        tail = links + "}"
        head = '{"actions":['
        count = (1024 * 1024 - len(head) - len(tail) - 2) // 2
        return (head + "0," * count + "0]" + tail).encode()
    prompt = {"value": "Thanks for calling."}  # "prompts": 9,000 valid prompts in one action
    play = {"operationId": "p", "action": "playPrompt", "prompts": [prompt] * 9000}
    body = {"actions": [{"operationId": "a", "action": "answer"}, play]}
    return (json.dumps(body)[:-1] + links + "}").encode()

async def calls(request):
    await request.read()
    return web.Response(body=bot["workflow"], content_type="application/json")

async def callback(request):
    bot["results"].append(await request.read())
    more = kind == "prompts"  # such Workflows until the platform's limit (50)
    return web.Response(body=bot["workflow"] if more else b"", content_type="application/json")

def serve(ready):
    async def run():
        app = web.Application()
        app.router.add_post("/api/calls", calls)
        app.router.add_post("/cb", callback)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        bot["port"] = runner.addresses[0][1]
        bot["workflow"] = workflow(bot["port"])
        ready.set()
        await asyncio.Event().wait()
    asyncio.run(run())

ready = threading.Event()
threading.Thread(target=serve, args=(ready,), daemon=True).start()
ready.wait()
with tempfile.TemporaryDirectory() as tmp:
    db = Path(tmp) / "t.db"
    started = time.monotonic()
    ladder = io.StringIO()
    with contextlib.redirect_stdout(ladder), contextlib.redirect_stderr(io.StringIO()):
        code = main(["call", "--bot", f"http://127.0.0.1:{bot['port']}/api/calls", "--no-token",
                     "--attempts", "1", "--db", str(db)])
    seconds = time.monotonic() - started
    with TranscriptStore(db) as store:
        [call] = store.calls()
        findings = [[e.payload["rule"], e.payload["where"], e.payload["message"]]
                    for e in store.events(call.id) if e.kind == "finding"]
reasons = [json.loads(r)["operationOutcome"].get("failureReason", "") for r in bot["results"]]
print(json.dumps({"end": call.end_reason, "seconds": seconds, "workflows": call.workflows,
                  "bytes": len(bot["workflow"]), "code": code, "ladder": len(ladder.getvalue()),
                  "findings": findings, "reasons": reasons}))
"""


def measured(*argv: str) -> dict[str, object]:
    """Run ``argv`` as a measured child: its exit code, peak resident MB and output."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *argv],
        capture_output=True,
        text=True,
        timeout=ATTACK_TIMEOUT,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def call_attack(kind: str, callback: str) -> tuple[dict[str, object], float]:
    run = measured(sys.executable, "-c", CALL_ATTACK, kind, callback)
    assert run["rc"] == 0, run["err"]
    out = run["out"]
    assert isinstance(out, str)
    peak = run["peak_mb"]
    assert isinstance(peak, float)
    return json.loads(out), peak


def rules(findings: object) -> list[str]:
    assert isinstance(findings, list)
    return [f[0] for f in findings]


# --- a 1 MiB invalid Workflow ------------------------------------------------------------------


@pytest.mark.slow
def test_a_1mib_workflow_of_zeros_with_a_callback_gets_capped_findings_and_reason() -> None:
    result, peak = call_attack("zeros", "callback")
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    size = result["bytes"]
    assert isinstance(size, int) and 1024 * 1024 - 2 < size <= 1024 * 1024  # the response limit
    assert result["end"] == EndReason.NO_WORKFLOW.value  # it answered the outcome with nothing
    found = rules(result["findings"])
    assert found.count("WF-ACTIONS-LIMIT") == 1
    assert found.count("WF-TYPE") == FINDINGS_PER_RULE + 1  # twenty listed, one summary
    findings = result["findings"]
    assert isinstance(findings, list)
    summary = [f for f in findings if f[0] == "WF-TYPE"][-1]
    more = MAX_ACTIONS - FINDINGS_PER_RULE
    assert summary[1:] == ["$.actions[*]", f"and {more} more WF-TYPE at $.actions[*] (only the "
                                           f"first {FINDINGS_PER_RULE} findings of a rule are "
                                           "listed)"]  # fmt: skip
    assert len(findings) < 40
    reasons = result["reasons"]
    assert isinstance(reasons, list) and len(reasons) == 1
    reason = reasons[0]
    assert isinstance(reason, str)
    actions = re.match(r"WF-ACTIONS-LIMIT at \$\.actions: (\d+,\d{3}) actions", reason)
    assert actions is not None and int(actions.group(1).replace(",", "")) > 500_000
    assert len(reason) <= FAILURE_REASON_MAX


@pytest.mark.slow
def test_a_1mib_workflow_of_zeros_without_a_callback_ends_the_call_cleanly() -> None:
    result, peak = call_attack("zeros", "none")
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    assert result["end"] == EndReason.INVALID_WORKFLOW.value
    found = rules(result["findings"])
    assert "CALL-INVALID-NO-CALLBACK" in found
    assert found.count("WF-TYPE") == FINDINGS_PER_RULE + 1
    assert result["reasons"] == []


@pytest.mark.slow
def test_fifty_workflows_of_9000_prompts_are_refused_without_running() -> None:
    result, peak = call_attack("prompts", "callback")
    assert peak < PEAK_MB, f"peak {peak:.0f} MB"
    assert result["end"] == EndReason.WORKFLOW_LIMIT.value
    assert result["workflows"] == 50
    reasons = result["reasons"]
    assert isinstance(reasons, list) and len(reasons) == 50
    assert all(r.startswith("WF-PROMPTS-LIMIT at $.actions[1].prompts[100]") for r in reasons)
    noted = ("WF-CALLBACK-HTTPS", "CALL-WORKFLOWS-OVER-13")  # local http; past 13 Workflows
    found = [r for r in rules(result["findings"]) if r not in noted]
    assert found == ["WF-PROMPTS-LIMIT"] * 51 + ["CALL-WORKFLOW-LIMIT"]  # the 51st is not run
    seconds = result["seconds"]
    assert isinstance(seconds, float) and seconds < 30  # was 35 s and 3.4 GB


# --- botemu lint of a 16 MiB file ----------------------------------------------------------------


@pytest.mark.slow
def test_lint_of_a_16mib_workflow_of_zeros_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "zeros.json"
    head, tail = '{"actions":[', "]}"
    count = (16 * 1024 * 1024 - len(head) - len(tail) + 1) // 2
    path.write_text(head + ",".join(["0"] * count) + tail)
    assert path.stat().st_size <= 16 * 1024 * 1024  # under lint's own limit
    run = measured(sys.executable, "-m", "emulator", "lint", str(path))
    peak = run["peak_mb"]
    assert isinstance(peak, float) and peak < PEAK_MB, f"peak {peak:.0f} MB"
    assert run["rc"] == 1, run["err"]
    out = run["out"]
    assert isinstance(out, str)
    lines = out.splitlines()
    assert lines[:4] == [
        f"{path}:1:1: warning: $.links.callback: no callback: the platform runs these actions, "
        "then hangs up and posts nothing [WF-NO-CALLBACK]",
        f"{path}:1:2: error: $.actions: {count:,} actions; a Workflow has at most 50 (real "
        "Workflows have a handful): only the first 50 are checked [WF-ACTIONS-LIMIT]",
        f"{path}:1:2: error: $.actions[*]: and 30 more WF-TYPE at $.actions[*] (only the first 20 "
        "findings of a rule are listed) [WF-TYPE]",
        f"{path}:1:13: error: $.actions[0]: expected an action object, got a number [WF-TYPE]",
    ]
    assert lines[-2].startswith(f"{path}:1:51: error: $.actions[19]: expected an action object")
    assert lines[-1] == f"{path}: invalid Workflow: 22 errors, 1 warning"


# --- validation stops past its caps ----------------------------------------------------------------


def test_validation_lists_twenty_findings_of_a_rule_then_counts_the_rest() -> None:
    menu: JSON = {
        "operationId": "m",
        "action": "recognize",
        "collectDigits": {"stopTones": ["x"] * 5000},
    }
    findings = validate_workflow({"actions": [menu], "links": {"callback": "https://b/c"}})
    digits = [f for f in findings if f.rule == "WF-DTMF-DIGIT"]
    assert len(digits) == FINDINGS_PER_RULE + 1
    assert digits[-1].where == "$.actions[0].collectDigits.stopTones[*]"
    assert digits[-1].message.startswith("and 4,980 more WF-DTMF-DIGIT at ")


def test_validation_of_20000_dtmf_choices_is_not_quadratic() -> None:
    choices: list[JSON] = [
        {"name": f"c{i}", "dtmfVariation": list(f"{i:05d}")} for i in range(20000)
    ]
    choices.append({"name": "short", "dtmfVariation": "1"})
    menu: JSON = {"operationId": "m", "action": "recognize", "choices": choices}
    started = time.process_time()  # CPU: a loaded machine's waits are not the code's
    findings = validate_workflow({"actions": [menu], "links": {"callback": "https://b/c"}})
    assert time.process_time() - started < 15  # 1 s; the pairwise check took 52 s
    prefix = [f for f in findings if f.rule == "WF-DTMF-PREFIX"]
    assert len(prefix) == FINDINGS_PER_RULE + 1
    assert prefix[-1].message.startswith("and 9,980 more WF-DTMF-PREFIX")


def test_a_failure_reason_keeps_whole_findings_then_counts_the_rest() -> None:
    findings = [
        Finding("WF-TYPE", Severity.ERROR, f"$.actions[{i}]", "expected an action object, got a number")
        for i in range(500)
    ]  # fmt: skip
    reason = failure_reason(findings)
    assert len(reason) <= FAILURE_REASON_MAX
    kept = reason.count("WF-TYPE at")
    assert reason.endswith(f"; ... and {500 - kept} more findings (in botemu's transcript)")
    assert failure_reason(findings[:2]) == "; ".join(
        f"WF-TYPE at $.actions[{i}]: expected an action object, got a number" for i in range(2)
    )
    huge = failure_reason([Finding("WF-TYPE", Severity.ERROR, "$", "x" * 10000)])
    assert len(huge) <= FAILURE_REASON_MAX and huge.startswith("WF-TYPE at $: xxx")


def test_rule_context_is_unchanged_by_the_caps() -> None:
    small: JSON = {"actions": [0, 0], "links": {"callback": "https://b/c"}}
    assert [f.rule for f in validate_workflow(small, RuleContext())] == ["WF-TYPE", "WF-TYPE"]


# --- the call's deadline ----------------------------------------------------------------------------


def slow_media_bot(delay: float, files: int) -> web.Application:
    """A bot whose Workflow plays ``files`` prompt files, each served after ``delay`` seconds."""

    async def calls(request: web.Request) -> web.Response:
        await request.read()
        base = f"http://{request.host}"
        prompts = [{"fileUri": f"{base}/media/{i}.wav"} for i in range(files)]
        workflow = {
            "actions": [
                {"operationId": "a", "action": "answer"},
                {"operationId": "p", "action": "playPrompt", "prompts": prompts},
            ],
            "links": {"callback": f"{base}/api/calls"},
        }
        return web.json_response(workflow)

    async def media(request: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        return web.Response(body=b"not audio", content_type="audio/wav")

    app = web.Application()
    app.router.add_post("/api/calls", calls)
    app.router.add_get("/media/{name}", media)
    return app


async def test_twenty_slow_file_uris_end_the_call_at_its_deadline(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    server: TestServer = await aiohttp_server(slow_media_bot(0.2, 20))
    store = TranscriptStore(tmp_path / "t.db")
    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")), caller=CallerScript(), deadline=0.5
    )
    started = time.monotonic()
    report = await place_call(settings, store)
    assert time.monotonic() - started < 2.0  # 20 x 0.2 s without the deadline
    assert report.end_reason is EndReason.DEADLINE
    [deadline] = [f for f in report.findings if f.rule == "CALL-DEADLINE"]
    assert deadline.severity is Severity.ERROR and "deadline of 0.5s" in deadline.message
    call = store.call(report.call_id)
    assert call is not None and call.end_reason == EndReason.DEADLINE.value


async def test_the_deadline_is_300s_by_default_and_none_turns_it_off(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    assert CallSettings(bot_url="http://b").deadline == DEFAULT_DEADLINE == 300.0
    server: TestServer = await aiohttp_server(slow_media_bot(0.05, 3))
    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")), caller=CallerScript(), deadline=None
    )
    report = await place_call(settings, TranscriptStore(tmp_path / "t.db"))
    assert report.end_reason is not EndReason.DEADLINE
    assert "CALL-MEDIA-FORMAT" in [f.rule for f in report.findings]


def test_botemu_call_takes_deadline() -> None:
    from emulator.cli import build_parser

    args = build_parser().parse_args(["call", "--bot", "http://b/api", "--deadline", "2.5"])
    assert args.deadline == 2.5
    assert build_parser().parse_args(["call", "--bot", "http://b/api"]).deadline == 300.0


# --- the back-off cap ---------------------------------------------------------------------------------


def test_the_back_off_stops_doubling_at_30s() -> None:
    policy = RetryPolicy(attempts=20)
    delays = [policy.delay(n) for n in range(1, 20)]
    assert delays[:3] == [0.5, 1.0, 2.0] and max(delays) == 30.0 == policy.max_delay
    assert sum(delays) < 19 * 30
    assert RetryPolicy(max_delay=5).delay(10_000) == 5


async def test_twenty_attempts_at_a_failing_bot_take_bounded_virtual_time(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=503)

    app = web.Application()
    app.router.add_post("/api/calls", broken)
    server: TestServer = await aiohttp_server(app)
    settings = CallSettings(
        bot_url=str(server.make_url("/api/calls")), retry=RetryPolicy(attempts=20, timeout=5)
    )
    report = await place_call(settings, TranscriptStore(tmp_path / "t.db"))
    assert report.end_reason is EndReason.DELIVERY_FAILED
    assert report.vtime == pytest.approx(0.5 + 1 + 2 + 4 + 8 + 16 + 30 * 13)  # was 262,143 s


# --- every new rule has a test that names it -------------------------------------------------------


@pytest.mark.parametrize("rule", ["WF-ACTIONS-LIMIT", "WF-PROMPTS-LIMIT", "CALL-DEADLINE"])
def test_limit_rules_are_registered(rule: str) -> None:
    from emulator.calling.exchange_rules import EXCHANGE_RULES
    from emulator.calling.rules import RULES

    registered = {r.id: r for r in [*RULES, *EXCHANGE_RULES]}
    assert registered[rule].severity is Severity.ERROR
    assert "(docs/calling-http.md" in registered[rule].source


def test_prompts_past_the_limit_are_reported_once_across_actions() -> None:
    def play(n: int, count: int) -> JSON:
        return {"operationId": f"p{n}", "action": "playPrompt",
                "prompts": [{"value": "hi"}] * count}  # fmt: skip

    document: JSON = {
        "actions": [play(0, 60), play(1, 60), play(2, 5)],
        "links": {"callback": "https://b/c"},
    }
    findings = validate_workflow(document)
    assert [(f.rule, f.where) for f in findings] == [
        ("WF-PROMPTS-LIMIT", "$.actions[1].prompts[40]")
    ]
