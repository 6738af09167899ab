"""Benchmark of the pure calling engine (no network).

Prints:
- actions executed per second (target: at least 50,000 on one core);
- a 10-minute call (about 600 s of virtual time, many Workflows) executed end to end: wall time
  (target: under 5 ms) and the ratio of virtual to wall time;
- a same-process baseline: json.loads + json.dumps of the same Workflows, the least work any
  platform does per message, and the engine's cost as a ratio of it (machines here are shared and
  noisy, so ratios are steadier than absolute figures).

With ``--against DIR`` (a ``git archive COMMIT emulator`` extracted into DIR) the same measures
run in turns on this build and on that one, each in a process of its own, ``--rounds`` times,
and both are printed with the ratio between them.

Asserts nothing about time. Run: ``python benchmarks/engine.py [--seconds 2] [--against DIR
[--rounds 5]]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from support import against_options

from emulator.calling.caller import CallerScript
from emulator.calling.engine import CallProgress, EngineConfig, run_workflow
from emulator.calling.model import Workflow
from emulator.calling.wire import read_workflow, workflow_to_json
from emulator.jsonutil import JSONObject

CALLBACK = {"callback": "https://localhost:8443/callback"}
MENU_PROMPT = "For sales press 1 or say sales. For support press 2 or say support."


def _menu(op: str) -> JSONObject:
    return {
        "operationId": op,
        "action": "recognize",
        "playPrompt": {"prompts": [{"value": MENU_PROMPT}]},
        "choices": [
            {"name": "sales", "speechVariation": ["sales"], "dtmfVariation": "1"},
            {"name": "support", "speechVariation": ["support"], "dtmfVariation": "2"},
        ],
    }


def ten_minute_call() -> tuple[list[Workflow], CallerScript]:
    """An IVR call of about ten minutes: a welcome, menus answered, timed out and re-prompted,
    account numbers collected, two long voicemails, then goodbye."""
    docs: list[JSONObject] = [
        {
            "actions": [
                {"operationId": "a", "action": "answer"},
                {
                    "operationId": "w",
                    "action": "playPrompt",
                    "prompts": [{"value": "Welcome to Contoso Bank. Calls are recorded."}],
                },
                _menu("m0"),
            ],
            "links": CALLBACK,
            "appState": '{"step":0}',
        },
    ]
    steps: list[object] = ["listen", {"press": "1"}]
    for i in range(1, 40):
        docs.append(
            {
                "actions": [
                    {
                        "operationId": f"n{i}",
                        "action": "playPrompt",
                        "prompts": [
                            {"value": "Please enter your account number followed by the pound key."}
                        ],
                    },
                    {
                        "operationId": f"d{i}",
                        "action": "recognize",
                        "collectDigits": {"maxNumberOfDtmfs": 10, "stopTones": ["#"]},
                    },
                ],
                "links": CALLBACK,
                "appState": json.dumps({"step": i}),
            }
        )
        steps.append({"press": "12345678#"} if i % 3 else {"silence": "6s"})
        docs.append({"actions": [_menu(f"m{i}")], "links": CALLBACK})
        steps.append({"say": "support"} if i % 2 else {"silence": "6s"})
    for i in range(2):
        docs.append(
            {
                "actions": [
                    {
                        "operationId": f"r{i}",
                        "action": "record",
                        "playPrompt": {"prompts": [{"value": "Leave a message after the tone."}]},
                        "maxDurationInSeconds": 120,
                        "stopTones": ["#"],
                        "recordingFormat": "wav",
                    }
                ],
                "links": CALLBACK,
            }
        )
        steps.append({"talk": {"for": "100s", "then": "#"}} if i else {"talk": "90s"})
    docs.append(
        {
            "actions": [
                {
                    "operationId": "bye",
                    "action": "playPrompt",
                    "prompts": [{"value": "Thank you for calling. Goodbye."}],
                },
                {"operationId": "h", "action": "hangup"},
            ]
        }
    )
    script = CallerScript.from_data(steps)
    return [read_workflow(d) for d in docs], script


def run_call(
    workflows: list[Workflow], caller: CallerScript, config: EngineConfig
) -> tuple[int, float]:
    """Run a whole call; (actions executed, virtual seconds)."""
    progress = CallProgress()
    actions = 0
    for workflow in workflows:
        run = run_workflow(workflow, caller, progress, config)
        actions += sum(1 for e in run.events if e.kind == "action completed")
        progress = run.progress
        if progress.ended is not None:
            break
    return actions, progress.now


def best_of(fn: Callable[[], object], seconds: float) -> tuple[float, int]:
    """Median wall time of one call of ``fn`` over repeated runs for about ``seconds``."""
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def measure(seconds: float) -> dict[str, float]:
    """The call's wall time, its baseline's, and the call's actions and virtual seconds."""
    config = EngineConfig(max_workflows=1000)
    workflows, caller = ten_minute_call()
    actions, virtual = run_call(workflows, caller, config)
    call_wall, _ = best_of(lambda: run_call(workflows, caller, config), seconds)
    raw = [json.dumps(workflow_to_json(w)) for w in workflows]

    def baseline() -> None:
        for text in raw:
            json.dumps(json.loads(text))

    base_wall, _ = best_of(baseline, seconds)
    return {"call": call_wall, "base": base_wall, "actions": actions, "virtual": virtual}


def compare(args: argparse.Namespace) -> None:
    from support import run_builds

    found = run_builds(Path(__file__), ["--seconds", str(args.seconds)], args.against,
                       args.rounds)  # fmt: skip
    print(f"botemu engine benchmark: {args.rounds} rounds of each build, in turns")
    medians = {}
    for name, runs in found.items():
        call = statistics.median(r["call"] for r in runs)
        ratio = statistics.median(r["call"] / r["base"] for r in runs)
        medians[name] = call
        each = ", ".join(f"{r['call'] / r['base']:.2f}" for r in runs)
        print(f"  {name}: 10-minute call {call * 1000:.3f} ms, {ratio:.2f}x its JSON baseline "
              f"(rounds: {each})")  # fmt: skip
    this, other = medians["this build"], medians[str(args.against)]
    print(f"  this build / {args.against}: {this / other:.2f} of its time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent on each measure")
    against_options(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.seconds)))
        return
    if args.against:
        compare(args)
        return
    config = EngineConfig(max_workflows=1000)
    workflows, caller = ten_minute_call()
    actions, virtual = run_call(workflows, caller, config)
    call_wall, runs = best_of(lambda: run_call(workflows, caller, config), args.seconds)

    raw = [json.dumps(workflow_to_json(w)) for w in workflows]

    def baseline() -> None:
        for text in raw:
            json.dumps(json.loads(text))

    base_wall, base_runs = best_of(baseline, args.seconds)

    print("botemu engine benchmark (pure engine, virtual time)")
    print(
        f"  10-minute call: {len(workflows)} workflows, {actions} actions, {virtual:.1f} s virtual"
    )
    print(f"  call executed in {call_wall * 1000:.3f} ms (median of {runs} runs; target < 5 ms)")
    print(f"  actions per second: {actions / call_wall:,.0f} (target >= 50,000)")
    print(f"  virtual / wall time: {virtual / call_wall:,.0f}x")
    print(
        f"  baseline, json.loads + json.dumps of the same workflows: {base_wall * 1000:.3f} ms "
        f"(median of {base_runs} runs)"
    )
    print(f"  engine cost / baseline cost: {call_wall / base_wall:.2f}")


if __name__ == "__main__":
    main()
