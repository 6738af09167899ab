"""Skill manifests (spec A): read one from a file or URL, validate it, check a running skill.
May import connector, identity, calling, transcripts, certs and infrastructure; nothing above.

The infrastructure: ``config``, ``errors``, ``findings``, ``jsonutil``, ``jsonpos``, ``ids``,
``inputs``, ``patterns``, ``guard``, ``client``. Above it (never imported): ``service``,
``runner``, ``cli``, ``scenario``, ``logview``.

``source``    reading (``document``: the ``Manifest`` and its errors; ``fetch``: URLs; ``parse``:
              JSON and YAML text with positions)
``validate``  validation (``rules``, ``formats``, ``semantics``; ``explain`` and ``words``: the
              messages)
``samples``   sample values for draft-07 schemas (``sample_walk``, ``sample_build``,
              ``sample_text``)
``check``     ``botemu manifest check``: a running skill against its manifest (``check_verdicts``)

The command lines are ``emulator/cli/manifest.py`` (``botemu manifest validate``, ``schema``) and
``emulator/cli/manifest_check.py`` (``botemu manifest check``); docs/manifests.md is the
reference.

The names below are loaded on first use, so importing one submodule loads no other.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from emulator.manifest.validate import (
        RULES,
        SCHEMA_ID,
        SCHEMA_PATH,
        SCHEMA_VERSION,
        Manifest,
        ManifestError,
        NotAnObjectError,
        load_manifest,
        load_manifest_bytes,
        load_manifest_text,
        position_of,
        schema,
        validate_manifest,
    )

__all__ = [
    "RULES",
    "SCHEMA_ID",
    "SCHEMA_PATH",
    "SCHEMA_VERSION",
    "Manifest",
    "ManifestError",
    "NotAnObjectError",
    "load_manifest",
    "load_manifest_bytes",
    "load_manifest_text",
    "position_of",
    "schema",
    "validate_manifest",
]


def __getattr__(name: str) -> object:
    """The names of ``__all__``, imported from ``validate.py`` when first asked for."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("emulator.manifest.validate"), name)
    globals()[name] = value
    return value
