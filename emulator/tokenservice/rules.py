"""What botemu reports about a bot's sign-in (docs/oauth.md, Findings).

``SIGNIN-NO-CONNECTION``: an OAuth card names no ``connectionName``: no channel can start the
sign-in (nor exchange a token) for it. ``SIGNIN-CODE-IGNORED``: the channel gave the bot the magic
code (``signin/verifyState``) and the bot never redeemed it (``GetToken?code=``) within
``CODE_WAIT`` seconds: the person signed in for nothing. ``SIGNIN-OTHER-APP``: a bot asked the
token service about a sign-in that names another bot (its ``state``'s ``msAppId``).
"""

from __future__ import annotations

from emulator.findings import Finding, RuleRegistry, Severity

TOKENSERVICE_RULES = RuleRegistry("Sign-in (user token service)")
NO_CONNECTION = TOKENSERVICE_RULES.add(
    "SIGNIN-NO-CONNECTION",
    Severity.ERROR,
    "field notes (Messaging: the user token service); the SDKs' OAuthCard",
    "An OAuth card names the OAuth connection (connectionName) the sign-in is for.",
)
CODE_IGNORED = TOKENSERVICE_RULES.add(
    "SIGNIN-CODE-IGNORED",
    Severity.ERROR,
    "field notes (Messaging: the user token service); the SDKs' OAuthPrompt",
    "A bot that asked a person to sign in redeems the code the channel gives it "
    "(signin/verifyState, or a typed magic code) with GetToken.",
)
OTHER_APP = TOKENSERVICE_RULES.add(
    "SIGNIN-OTHER-APP",
    Severity.ERROR,
    "spec Authentication (a bot speaks for its own app id)",
    "A bot asks the token service only about its own sign-ins (the state's msAppId is its app id).",
)
CODE_WAIT = 10.0
"""Seconds the bot has to redeem a code the channel gave it."""


def no_connection(activity_id: str) -> Finding:
    return Finding(NO_CONNECTION.id, NO_CONNECTION.severity, f"activity {activity_id}",
                   "the OAuth card names no connectionName: the channel cannot start a sign-in "
                   "for it; give the card the bot's OAuth connection")  # fmt: skip


def code_ignored(conversation_id: str) -> Finding:
    return Finding(CODE_IGNORED.id, CODE_IGNORED.severity, f"conversation {conversation_id}",
                   f"the channel gave the bot the sign-in's magic code (signin/verifyState) and "
                   f"the bot did not redeem it with GetToken within {CODE_WAIT:g} s: handle the "
                   "verifyState invoke (or the tokens/response event) in the sign-in prompt")  # fmt: skip


def other_app(caller: str, named: str) -> Finding:
    return Finding(OTHER_APP.id, OTHER_APP.severity, "token service",
                   f"the bot {caller!r} asked about a sign-in whose state names the bot "
                   f"{named!r}: a bot asks only about its own")  # fmt: skip
