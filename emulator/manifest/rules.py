"""The skill manifest's rules (``RULES``: what ``validate_manifest`` checks beyond the schema's
keywords) and the schema version botemu knows (``SCHEMA_VERSION``, ``SCHEMA_ID``,
``SCHEMA_PATH``: the schema shipped in the package)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from emulator.findings import RuleRegistry, Severity

SCHEMA_VERSION = "2.1.preview-1"
SCHEMA_FILE = f"skill-manifest-{SCHEMA_VERSION}.json"
SCHEMA_ID = f"https://schemas.platform.example/schemas/skills/{SCHEMA_FILE}"
"""The ``$id`` of the shipped schema. A manifest's ``$schema`` is known when it is this URI, any
URI whose last path segment is ``SCHEMA_FILE`` (the platform's own copy, whatever its host), or an
https URL whose path ends with ``PUBLISHED_PATH`` (the published location, whatever its host)."""
PUBLISHED_PATH = f"/v{SCHEMA_VERSION}/skill-manifest.json"
"""How the path of the schema's published location ends: ``.../v2.1.preview-1/skill-manifest.json``."""
SCHEMA_PATH = Path(str(resources.files("emulator.manifest").joinpath(SCHEMA_FILE)))
MAX_DEPTH = 64
"""Deeper documents are not validated (MF-DEPTH): the checks recurse."""

ERROR, WARNING = Severity.ERROR, Severity.WARNING
RULES = RuleRegistry(f"Skill manifest ({SCHEMA_VERSION})")
_r = RULES.add
# fmt: off
MF_PAYLOAD_SCHEMA = _r("MF-PAYLOAD-SCHEMA", ERROR,
    "spec A, Activity definitions (value, resultValue), top level (definitions); field notes",
    "value, resultValue and every entry of definitions are valid draft-07 JSON Schemas.")
MF_REF_UNRESOLVED = _r("MF-REF-UNRESOLVED", ERROR, "spec A, top level (definitions)",
    "A $ref into the manifest (#/definitions/...) resolves to a schema.")
MF_ENDPOINT_NAME_UNIQUE = _r("MF-ENDPOINT-NAME-UNIQUE", WARNING, "spec A, endpoint (name)",
    "Endpoint names are unique.")
MF_ENDPOINT_HTTPS = _r("MF-ENDPOINT-HTTPS", WARNING,
    "spec A, endpoint (endpointUrl); spec Authentication, Transport",
    "endpointUrl is an https URL: all connections use HTTPS.")
MF_CULTURE_NAME = _r("MF-CULTURE-NAME", WARNING,
    "spec A, dispatchModels (languages), languageModel (name); field notes (Skill manifest)",
    "The keys of dispatchModels.languages and each languageModel's name are culture names: "
    "lowercase ISO 639 language, hyphen, uppercase ISO 3166 region (en-US). The published schema "
    "does not say so: a warning, an error with --strict.")
MF_SCHEMA_VERSION = _r("MF-SCHEMA-VERSION", WARNING, "spec A, top level ($schema); Versioning 1",
    f"$schema names the {SCHEMA_VERSION} schema, the version botemu knows.")
MF_ACTIVITY_NAME_COLLISION = _r("MF-ACTIVITY-NAME-COLLISION", WARNING,
    "spec A, top level (activities, activitiesSent)",
    "No name is used both in activities and in activitiesSent.")
MF_DEPTH = _r("MF-DEPTH", ERROR, "botemu limit (docs/manifests.md)",
    f"A manifest is nested at most {MAX_DEPTH} levels deep (deeper ones are not validated).")
# fmt: on
STRICT_RULES = frozenset({MF_CULTURE_NAME.id})
"""Rules that are warnings by default and errors with ``strict=True`` (``--strict``): the letter
of the spec where the published schema and real manifests are looser (field notes)."""
