"""Audio of a call: offline speech synthesis (eSpeak NG through a ctypes binding, with a fallback
of voice-like tones when it cannot load), a cache of synthesized speech in memory and on disk,
DTMF tones, beeps and placeholders, and the one-timeline track of a stored call (``botemu
transcript audio``).

It may import the transcript store (``emulator.transcripts``) and the infrastructure below it
(``emulator.files``, ``emulator.errors``, ``emulator.jsonutil``), never the calling platform: a
call's events are read from the JSON payloads the store keeps. ``calling`` may import it.
"""
