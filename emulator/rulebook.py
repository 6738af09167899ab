"""Every rule botemu checks, gathered from each area's registry: what ``botemu rules`` lists,
what ``docs/rules.md`` is rendered from, and how the log view and reports explain a rule id.

It sits above the areas that own rules (calling, connector, conformance, manifest, scenario) and
below everything that shows them (the log view, the runner, the command line).
"""

from __future__ import annotations

from collections.abc import Sequence

from emulator.calling.exchange_rules import EXCHANGE_RULES
from emulator.calling.rules import RULES
from emulator.conformance.rules import AUTH_CALLING_RULES, AUTH_RULES, TLS_RULES
from emulator.connector.rules import CONNECTOR_RULES
from emulator.explore.rules import RULES as EXPLORE_RULES
from emulator.findings import Rule, RuleRegistry
from emulator.manifest.check_rules import RULES as SKILL_CHECK_RULES
from emulator.manifest.rules import RULES as MANIFEST_RULES
from emulator.scenario.rules import RULES as EXPECTATION_RULES
from emulator.tokenservice.rules import TOKENSERVICE_RULES

REGISTRIES: tuple[RuleRegistry, ...] = (
    RULES,
    EXCHANGE_RULES,
    TLS_RULES,
    AUTH_RULES,
    AUTH_CALLING_RULES,
    CONNECTOR_RULES,
    TOKENSERVICE_RULES,
    MANIFEST_RULES,
    SKILL_CHECK_RULES,
    EXPECTATION_RULES,
    EXPLORE_RULES,
)


def rule_index() -> dict[str, Rule]:
    """Rule id -> rule, over every registry."""
    return {rule.id: rule for registry in REGISTRIES for rule in registry}


def rules_markdown(registries: Sequence[RuleRegistry] = REGISTRIES) -> str:
    """The text of docs/rules.md."""
    lines = [
        "# Rules",
        "",
        "Every check botemu makes produces findings that name one of these rules. Severity "
        "`error` means the platform refuses (for a Workflow: it answers with the validation "
        "outcome and runs nothing); `warning` means it is accepted but deviates from the spec or "
        'from what the real platform and SDKs do. "spec" is `platform-spec.md`; "field notes" '
        "are the notes on how the real platform behaved.",
        "",
        "This file is generated: `botemu rules --markdown > docs/rules.md`.",
    ]
    for registry in registries:
        lines += [
            "",
            f"## {registry.area}",
            "",
            "| rule | severity | source | rule says |",
            "|---|---|---|---|",
        ]
        for rule in registry:
            lines.append(
                f"| `{rule.id}` | {rule.severity.value} | {rule.source} | {rule.summary} |"
            )
    return "\n".join(lines) + "\n"
