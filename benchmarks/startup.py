"""Benchmark of botemu's start-up: whole processes, beside ``python -c pass`` in the same run.

Times ``botemu --version``, ``botemu lint FILE`` (a small valid Workflow), ``botemu rules`` and
``botemu call --help`` (which loads what places a call) as separate processes (``python -m
emulator ...``), each run ``--runs`` times, alternating with the baseline ``python -c pass`` so
that both see the same machine load; prints the medians, the ratio to the baseline, and the
peak memory of one run of each.

Asserts nothing about time. Run: ``python benchmarks/startup.py [--runs 15]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKFLOW = {
    "actions": [
        {"operationId": "1", "action": "answer"},
        {"operationId": "2", "action": "playPrompt", "prompts": [{"value": "Hello."}]},
        {"operationId": "3", "action": "hangup"},
    ],
    "links": {"callback": "https://bot.example/callback"},
}


GOALS = {"botemu --version": 0.15, "botemu lint FILE": 0.25}
"""Start-up goals in seconds (docs/architecture.md): an editor runs lint on every save."""


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def peak_mib(argv: list[str]) -> float:
    """The peak resident size of one run, from a child of a fresh child (so nothing else counts)."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                          check=False)  # fmt: skip
    return int(done.stdout.strip() or 0) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workflow = Path(tmp) / "welcome.json"
        workflow.write_text(json.dumps(WORKFLOW), encoding="utf-8")
        botemu = [sys.executable, "-m", "emulator"]
        commands = {
            "botemu --version": [*botemu, "--version"],
            "botemu lint FILE": [*botemu, "lint", str(workflow)],
            "botemu rules": [*botemu, "rules"],
            "botemu call --help": [*botemu, "call", "--help"],  # loads what places a call
        }
        baseline_argv = [sys.executable, "-c", "pass"]
        baseline: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                baseline.append(timed(baseline_argv))
                times[name].append(timed(argv))
        base = statistics.median(baseline)
        print(f"botemu start-up benchmark ({args.runs} runs each, medians; "
              f"python -c pass: {base * 1000:.0f} ms, {peak_mib(baseline_argv):.0f} MiB)")  # fmt: skip
        for name, argv in commands.items():
            median = statistics.median(times[name])
            goal = GOALS.get(name)
            verdict = "" if goal is None else (
                f"  goal < {goal:.2f} s: {'met' if median < goal else 'NOT met'}"
            )
            print(f"  {name:18} {median * 1000:7.0f} ms  ({median / base:5.1f}x python -c pass)"
                  f"  peak {peak_mib(argv):5.0f} MiB{verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
