"""Benchmark of speech synthesis and call tracks (emulator/audio/).

Prints:
- synthesis per prompt: cold (eSpeak NG, then resampling to 16 kHz: what a prompt costs the
  first time), from the memory cache, from the disk cache (a new synthesizer over the same
  directory, as the next process of a suite sees it), and the fallback tones beside them;
- the track of a call per minute of virtual time: a synthetic call of ``--minutes`` minutes (a
  menu, keys, a digits prompt, talk into a record and a beep, over and over) rendered with a cold
  cache and again with a warm one; and the same with the fallback, where every cost is the
  track's own (placing, mixing, writing).

Asserts nothing about time. Run: ``python benchmarks/audio.py [--prompts 20] [--minutes 10]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from emulator.audio.cache import AudioCache
from emulator.audio.espeak import Espeak, EspeakUnavailable
from emulator.audio.synth import Speech, Synthesizer, fallback
from emulator.audio.track import render_call
from emulator.transcripts.store import TranscriptStore

PROMPTS = (
    "For sales, press 1 or say sales. For support, press 2 or say support.",
    "Please enter your account number, then press the pound key.",
    "Please leave a message after the tone.",
    "Thank you. A representative will call you back within {n} business days.",
)


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:7.2f} ms, max {max(samples) * 1000:7.2f} ms"


def synthesis(count: int, directory: Path) -> None:
    texts = [
        PROMPTS[i % len(PROMPTS)].replace("{n}", str(i)) + f" Option {i}." for i in range(count)
    ]
    cold_synth = Synthesizer(AudioCache(directory))
    print(f"speech: {cold_synth.engine}; {count} distinct prompts of about 12 words")
    timings: dict[str, list[float]] = {"cold": [], "memory": [], "disk": [], "fallback": []}
    warm = Synthesizer(AudioCache(directory))
    for text in texts:
        speech = Speech(text)
        timings["cold"].append(_timed(functools.partial(cold_synth.speak, speech)))
        timings["memory"].append(_timed(functools.partial(cold_synth.speak, speech)))
        timings["disk"].append(_timed(functools.partial(warm.speak, speech)))
        timings["fallback"].append(_timed(functools.partial(fallback, speech)))
    seconds = statistics.median(len(cold_synth.speak(Speech(t))) / 16000 for t in texts)
    for name, samples in timings.items():
        print(f"  {name:8} {_ms(samples)} per prompt (median prompt {seconds:.1f} s of speech)")


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _call(store: TranscriptStore, minutes: float) -> str:
    """A stored call of about ``minutes`` minutes: menus, keys, a digits prompt, a record."""
    call = store.start(bot="bench")
    at, n = 0.0, 0
    while at < minutes * 60:
        ops = [f"m{n}", f"d{n}", f"r{n}"]
        actions = [{"operationId": ops[0], "action": "recognize", "playPrompt": {"prompts": [{"value": PROMPTS[0]}]}},
                   {"operationId": ops[1], "action": "recognize", "playPrompt": {"prompts": [{"value": PROMPTS[1]}]}},
                   {"operationId": ops[2], "action": "record", "playPrompt": {"prompts": [{"value": PROMPTS[2]}]}}]  # fmt: skip
        store.append(call, "http.response", {"body": json.dumps({"actions": actions})}, vtime=at)
        for op, text, length in (
            (ops[0], PROMPTS[0], 5.2),
            (ops[1], PROMPTS[1], 4.0),
            (ops[2], PROMPTS[2], 2.8),
        ):
            store.append(call, "platform", {"kind": "prompt played", "at": at, "end": at + length,
                         "operation_id": op, "index": 0, "text": text}, vtime=at + length)  # fmt: skip
            at += length
            if op == ops[1]:
                times = [at + 0.25 * k for k in range(5)]
                store.append(call, "caller", {"kind": "caller pressed", "keys": "1234#", "times": times}, vtime=times[-1])  # fmt: skip
                at = times[-1] + 0.5
        store.append(call, "platform", {"kind": "beep played", "at": at}, vtime=at)
        store.append(call, "caller", {"kind": "caller spoke", "at": at + 0.5, "end": at + 8.5, "text": None}, vtime=at + 8.5)  # fmt: skip
        at += 10.0
        n += 1
    store.finish(call, reason="bot hung up")
    return call


def tracks(minutes: float, work: Path) -> None:
    with TranscriptStore(work / "bench.db") as store:
        call = _call(store, minutes)
        vtime = store.call(call).vtime or 0.0  # type: ignore[union-attr]
        cache = work / "track-cache"
        print(f"track of a {vtime / 60:.1f}-minute call ({vtime:.0f} s of virtual time):")
        for label, synth in (("cold cache", Synthesizer(AudioCache(cache))),
                             ("warm cache", Synthesizer(AudioCache(cache)))):  # fmt: skip
            took = _timed(lambda: render_call(store, call, work / "call.wav", synth))  # noqa: B023
            print(f"  {label:10} {took / (vtime / 60) * 1000:8.1f} ms per minute of call"
                  f"  ({vtime / took:5.0f}x real time)")  # fmt: skip
        fall = Synthesizer(AudioCache(None), espeak=False)
        took = _timed(lambda: render_call(store, call, work / "call.wav", fall))
        print(f"  {'fallback':10} {took / (vtime / 60) * 1000:8.1f} ms per minute of call"
              f"  ({vtime / took:5.0f}x real time)")  # fmt: skip
        size = (work / "call.wav").stat().st_size
        print(f"  WAV: {size / (vtime / 60) / 1024 / 1024:.2f} MiB per minute (16 kHz stereo)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--prompts", type=int, default=20, help="distinct prompts to synthesize")
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the call rendered")
    args = parser.parse_args(argv)
    try:
        Espeak.load()
    except EspeakUnavailable as e:
        print(f"eSpeak NG is unavailable ({e}): the figures are the fallback's")
    with tempfile.TemporaryDirectory() as tmp:
        synthesis(args.prompts, Path(tmp) / "cache")
        tracks(args.minutes, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
