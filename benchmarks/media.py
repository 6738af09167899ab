"""Benchmark of recording encoding and prompt inspection (emulator/calling/media.py).

Prints, per format, the wall time to encode one second of audio (a recording half speech), the
real-time factor, and how far the decoded duration is from the requested one. Then the time to
inspect a 16 s WAV prompt and a 100 s WMA prompt (both just under 512 KB).

Asserts nothing about time. Run: ``python benchmarks/media.py [--seconds 60] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

from emulator.calling.media import decode_duration, encode_recording, inspect_prompt_media
from emulator.calling.model import RecordingFormat


def _best(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=60.0, help="recording length")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    args = parser.parse_args(argv)
    seconds: float = args.seconds
    speech = tuple((t, t + 0.5) for t in range(0, int(seconds), 1))  # half of it speech

    encode_recording(RecordingFormat.WAV, 0.1, ((0.0, 0.1),))  # build the syllable bank once
    print(f"encoding a {seconds:g} s recording (best of {args.repeat}):")
    for fmt in (RecordingFormat.WAV, RecordingFormat.WMA, RecordingFormat.MP3):
        took = _best(args.repeat, functools.partial(encode_recording, fmt, seconds, speech, seed=1))
        data = encode_recording(fmt, seconds, speech, seed=1)
        error_ms = (decode_duration(data) - seconds) * 1000
        print(
            f"  {fmt.value:4} {took / seconds * 1000:7.2f} ms per audio second"
            f"  ({seconds / took:6.0f}x real time)  {len(data) / seconds / 1024:6.1f} KB/s"
            f"  decoded duration error {error_ms:+.1f} ms"
        )

    wav = encode_recording(RecordingFormat.WAV, 16.0, ((1.0, 15.0),))
    wma = encode_recording(RecordingFormat.WMA, 100.0, ((1.0, 99.0),))
    for name, data in (("16 s WAV", wav), ("100 s WMA", wma)):
        took = _best(args.repeat, functools.partial(inspect_prompt_media, data))
        print(f"inspect {name} prompt ({len(data) // 1024} KB): {took * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
