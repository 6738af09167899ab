"""Skill manifests (spec A): read one from a file or URL and validate it (``validate.py``).

``botemu manifest validate FILE...`` is the command line (``cli.py``); docs/manifests.md is the
reference.
"""

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
