"""The connector's own rules: what botemu reports about a conversation beyond the token checks.

``CONN-ANONYMOUS-BOT``: a bot registered without an app id (as every SDK template starts) is
served the way the platform's own emulator serves it, with no token either way; the real
connector would refuse it, so each of its conversations carries one warning saying so, and how to
test with credentials.
"""

from __future__ import annotations

from emulator.findings import Finding, RuleRegistry, Severity

CONNECTOR_RULES = RuleRegistry("Connector (messaging)")
ANONYMOUS_BOT = CONNECTOR_RULES.add(
    "CONN-ANONYMOUS-BOT",
    Severity.WARNING,
    "spec Authentication, Bot to connector 3 and Connector to bot 4-6",
    "A bot registered without an app id (an SDK template's default) is served with no token "
    "either way; the real connector would refuse it.",
)


def anonymous_bot_finding(app_id: str) -> Finding:
    """The warning every conversation of the anonymous bot ``app_id`` carries."""
    return Finding(
        ANONYMOUS_BOT.id,
        ANONYMOUS_BOT.severity,
        "conversation",
        f"{app_id} is registered without an app id: botemu sends it no token and takes its "
        "requests without one, as the platform's own emulator does, but the real connector "
        "refuses them. To test with credentials, register the bot with an app id and password "
        "(botemu serve --app-id ID --app-password PW) and give the bot the same.",
    )
