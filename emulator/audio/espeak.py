"""A small ctypes binding of eSpeak NG's C API (``speak_lib.h``), over the library and voice data
that the ``espeakng-loader`` wheel ships, so synthesis works offline with nothing but pip.

Used calls: ``espeak_Initialize`` (``AUDIO_OUTPUT_SYNCHRONOUS``: ``espeak_Synth`` returns when the
text is spoken, having handed every chunk of samples to the callback), ``espeak_Info`` (the
version), ``espeak_SetSynthCallback``, ``espeak_SetVoiceByName`` (falling back to
``espeak_SetVoiceByProperties`` with the language and gender), ``espeak_SetParameter``
(``espeakRATE``) and ``espeak_Synth``. eSpeak keeps one global state, so one ``Espeak`` per
process does every synthesis under a lock. Its output is 16-bit mono at the rate
``espeak_Initialize`` returns (22,050 Hz).

``Espeak.load()`` raises ``EspeakUnavailable`` (one line) when the wheel is not installed, the
library will not load or eSpeak will not start; ``BOTEMU_ESPEAK=off`` makes it so on purpose.
"""

from __future__ import annotations

import array
import ctypes
import os
import threading
from typing import ClassVar, Final

ENV_SWITCH: Final = "BOTEMU_ESPEAK"
"""``off`` (or ``0``, ``no``): do not load eSpeak; synthesis falls back to tones."""

MAX_TEXT_CHARS: Final = 4000
"""The longest text handed to eSpeak; longer text is cut (a prompt is rarely a tenth of it)."""

_AUDIO_OUTPUT_SYNCHRONOUS: Final = 2
_INITIALIZE_DONT_EXIT: Final = 0x8000  # report errors instead of calling exit()
_CHARS_UTF8: Final = 1
_POS_CHARACTER: Final = 1
_RATE: Final = 1  # espeakRATE, words per minute (80-450)
_EE_OK: Final = 0
_SILENT: Final = 64  # |sample| below this at either end is trimmed (about -54 dBFS)

_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class EspeakUnavailable(Exception):
    """eSpeak NG cannot be used here; the message says why, in one line."""


class _VoiceSpec(ctypes.Structure):
    """``espeak_VOICE``: the fields ``espeak_SetVoiceByProperties`` reads."""

    _fields_ = (
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_char_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),  # 0 none, 1 male, 2 female
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    )


class Espeak:
    """The process's eSpeak NG, initialised for synchronous synthesis."""

    _instance: ClassVar[Espeak | None] = None
    _failure: ClassVar[str | None] = None
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, library: ctypes.CDLL, data_path: str) -> None:
        self._lib = library
        _declare(library)
        rate = library.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), _INITIALIZE_DONT_EXIT
        )
        if rate <= 0:
            raise EspeakUnavailable(f"eSpeak NG did not start (espeak_Initialize gave {rate})")
        self.rate: int = rate
        version = library.espeak_Info(None)
        self.version: str = f"eSpeak NG {version.decode(errors='replace') if version else '?'}"
        self._chunks: list[bytes] = []
        self._budget = 0
        self._callback = _CALLBACK(self._take)  # kept alive as long as eSpeak may call it
        library.espeak_SetSynthCallback(self._callback)

    @classmethod
    def load(cls) -> Espeak:
        """The process's eSpeak, started on first use; ``EspeakUnavailable`` if it cannot be."""
        with cls._lock:
            if cls._instance is not None:
                return cls._instance
            if os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "0", "no", "false"):
                raise EspeakUnavailable(f"eSpeak NG is switched off ({ENV_SWITCH}=off)")
            if cls._failure is None:
                try:
                    cls._instance = _start()
                    return cls._instance
                except EspeakUnavailable as e:
                    cls._failure = str(e)
            raise EspeakUnavailable(cls._failure)

    def synthesize(
        self, text: str, *, voice: str, female: bool, words_per_minute: int, max_seconds: float
    ) -> array.array[int]:
        """``text`` spoken by ``voice`` (an eSpeak voice name such as ``en-us+f3``; when it is
        unknown, the voice of its language and gender), as samples at ``self.rate``, trimmed of
        leading and trailing silence, at most ``max_seconds`` long."""
        data = _clean(text).encode("utf-8") + b"\0"
        with Espeak._lock:
            self._select(voice, female)
            self._lib.espeak_SetParameter(_RATE, max(80, min(450, words_per_minute)), 0)
            self._chunks, self._budget = [], round(max_seconds * self.rate)
            status = self._lib.espeak_Synth(
                data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None
            )
            raw, self._chunks = b"".join(self._chunks), []
        if status != _EE_OK:
            raise EspeakUnavailable(f"eSpeak NG could not speak (espeak_Synth gave {status})")
        samples = array.array("h", raw)
        return _trim(samples[: round(max_seconds * self.rate)])

    def _select(self, voice: str, female: bool) -> None:
        if self._lib.espeak_SetVoiceByName(voice.encode()) == _EE_OK:
            return
        spec = _VoiceSpec(languages=voice.split("+")[0].encode(), gender=2 if female else 1)
        self._lib.espeak_SetVoiceByProperties(ctypes.byref(spec))

    def _take(self, wav: ctypes._Pointer[ctypes.c_short], count: int, events: int) -> int:
        """eSpeak's callback: keep ``count`` samples; 1 (stop) once the budget is spent."""
        if wav and count > 0:
            self._chunks.append(ctypes.string_at(wav, 2 * count))
            self._budget -= count
        return 1 if self._budget <= 0 else 0


def _start() -> Espeak:
    try:
        import espeakng_loader  # type: ignore[import-untyped]
    except ImportError as e:
        raise EspeakUnavailable(
            f"the espeakng-loader package is not installed ({e}): pip install espeakng-loader"
        ) from e
    try:
        library = ctypes.CDLL(espeakng_loader.get_library_path())
        data_path = str(espeakng_loader.get_data_path())
    except (OSError, RuntimeError) as e:
        raise EspeakUnavailable(f"the eSpeak NG library would not load: {e}") from e
    return Espeak(library, data_path)


def _declare(lib: ctypes.CDLL) -> None:
    lib.espeak_Initialize.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int)
    lib.espeak_Initialize.restype = ctypes.c_int
    lib.espeak_Info.argtypes = (ctypes.c_void_p,)
    lib.espeak_Info.restype = ctypes.c_char_p
    lib.espeak_SetSynthCallback.argtypes = (_CALLBACK,)
    lib.espeak_SetSynthCallback.restype = None
    lib.espeak_SetVoiceByName.argtypes = (ctypes.c_char_p,)
    lib.espeak_SetVoiceByName.restype = ctypes.c_int
    lib.espeak_SetVoiceByProperties.argtypes = (ctypes.POINTER(_VoiceSpec),)
    lib.espeak_SetVoiceByProperties.restype = ctypes.c_int
    lib.espeak_SetParameter.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int)
    lib.espeak_SetParameter.restype = ctypes.c_int
    lib.espeak_Synth.argtypes = (
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
        ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
    )  # fmt: skip
    lib.espeak_Synth.restype = ctypes.c_int


def _clean(text: str) -> str:
    """Text eSpeak can take: no control characters (NUL would end it), at most
    ``MAX_TEXT_CHARS``, lone surrogates replaced."""
    text = "".join(c if c.isprintable() else " " for c in text[:MAX_TEXT_CHARS])
    return text.encode("utf-8", "replace").decode("utf-8")


def _trim(samples: array.array[int]) -> array.array[int]:
    start = next((i for i, s in enumerate(samples) if abs(s) >= _SILENT), len(samples))
    end = len(samples)
    while end > start and abs(samples[end - 1]) < _SILENT:
        end -= 1
    return samples[start:end]
