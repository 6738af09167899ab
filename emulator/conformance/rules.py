"""The rules of the conformance probes: what a bot must refuse (or accept) on the messaging
path (``AUTH_RULES``), on the calling path (``AUTH_CALLING_RULES``) and in TLS (``TLS_RULES``).

Data only, so that ``botemu rules`` and the log view list them without loading the probes."""

from __future__ import annotations

from emulator.findings import RuleRegistry, Severity

AUTH_RULES = RuleRegistry("Auth probe (connector and emulator to bot)")
_C = "spec Authentication, Connector to bot"
_E = "spec Authentication, Local test emulator to bot"
_r = AUTH_RULES.add
_r("AUTH-VALID-ACCEPTED", Severity.ERROR, f"{_C} 4",
   "The bot accepts a valid connector token (the positive control: when it is refused, the "
   "other connector cases prove nothing).")  # fmt: skip
_r("AUTH-NO-HEADER", Severity.ERROR, f"{_C} 4.1, 5",
   "The bot refuses a call without an Authorization header with 403.")  # fmt: skip
_r("AUTH-ANONYMOUS", Severity.WARNING, f"{_C} 4.1; docs/sdk.md (anonymous bots)",
   "A bot registered without an app id that accepts a call without an Authorization header runs "
   "anonymously: fine for local work, never in production. The probe reports this one warning "
   "instead of running the token cases, which prove nothing against such a bot.")  # fmt: skip
_r("AUTH-SCHEME", Severity.ERROR, f"{_C} 4.1, 5",
   "The bot refuses a token sent with a scheme other than Bearer with 403.")  # fmt: skip
_r("AUTH-MALFORMED", Severity.ERROR, f"{_C} 4.2, 5",
   "The bot refuses a token that is not a JWT with 403 (and does not crash).")  # fmt: skip
_r("AUTH-ISSUER", Severity.ERROR, f"{_C} 4.3, 5",
   "The bot refuses a token whose iss is not the connector issuer with 403.")  # fmt: skip
_r("AUTH-AUDIENCE", Severity.ERROR, f"{_C} 4.4, 5",
   "The bot refuses a token whose aud is not its app id with 403.")  # fmt: skip
_r("AUTH-EXPIRED", Severity.ERROR, f"{_C} 4.5, 5",
   "The bot refuses a token expired longer ago than the 5-minute clock skew with 403.")  # fmt: skip
_r("AUTH-EXPIRED-WITHIN-SKEW", Severity.ERROR, f"{_C} 4.5; Limits (clock skew)",
   "The bot accepts a token that expired less than 5 minutes ago (the allowed clock skew).")  # fmt: skip
_r("AUTH-NOT-YET-VALID", Severity.ERROR, f"{_C} 4.2, 4.5, 5 (RFC 7519 nbf)",
   "The bot refuses a token whose nbf is further ahead than the clock skew with 403.")  # fmt: skip
_r("AUTH-TAMPERED", Severity.ERROR, f"{_C} 4.6, 5",
   "The bot refuses a token whose payload was changed after it was signed with 403.")  # fmt: skip
_r("AUTH-UNKNOWN-KEY", Severity.ERROR, f"{_C} 4.6, 5",
   "The bot refuses a token signed by a key that is not in the key document (even when the "
   "token carries the key itself) with 403.")  # fmt: skip
_r("AUTH-UNKNOWN-KID", Severity.ERROR, f"{_C} 4.6, 5; field notes (a kid not in the key set fails)",
   "The bot refuses a token whose kid is not in the key document with 403, without trying the "
   "other keys.")  # fmt: skip
_r("AUTH-FORGED-SIGNATURE", Severity.ERROR, f"{_C} 4.6, 5",
   "The bot refuses a token that names a published kid but is signed by another key with "
   "403.")  # fmt: skip
_r("AUTH-ALG-NONE", Severity.ERROR, f"{_C} 4.6, 5; field notes (RS256 only)",
   "The bot refuses an unsigned token (alg none) with 403.")  # fmt: skip
_r("AUTH-HS256-PUBLIC-KEY", Severity.ERROR, f"{_C} 4.6, 5; field notes (RS256 only)",
   "The bot refuses an HS256 token keyed with the published RSA public key with 403.")  # fmt: skip
_r("AUTH-ENDORSEMENT", Severity.ERROR,
   f"{_C} 4.6, 5; field notes (a key's endorsements must list the activity's channelId)",
   "When the published keys carry endorsements, the bot refuses a valid token on an activity "
   "whose channelId its signing key is not endorsed for with 403 (skipped when botemu publishes "
   "no endorsements).")  # fmt: skip


def _emulator_rules(version: str) -> None:
    """The rules of the emulator path's cases for tokens of ``version``, in case order."""
    rule = "AUTH-EMULATOR" if version == "1.0" else "AUTH-EMULATOR-V2"
    claim = "appid" if version == "1.0" else "azp"
    notes = "" if version == "1.0" else "; field notes (ver 2.0: the app id is in azp)"
    token = f"an emulator-path token (ver {version})"
    _r(f"{rule}-VALID", Severity.ERROR, f"{_E} 1-7{notes}",
       f"The bot accepts a valid emulator-path token of ver {version}, its app id in {claim} (the "
       "positive control of that path and version).")  # fmt: skip
    if version == "1.0":
        _r(f"{rule}-NO-APPID", Severity.ERROR, f"{_E} 5",
           f"The bot refuses {token} without an appid claim with 403.")  # fmt: skip
        _r(f"{rule}-WRONG-APPID", Severity.ERROR, f"{_E} 5",
           f"The bot refuses {token} whose appid is not its app id with 403.")  # fmt: skip
    else:
        _r(f"{rule}-WRONG-AZP", Severity.ERROR, f"{_E} 5{notes}",
           f"The bot refuses {token} whose azp is not its app id with 403.")  # fmt: skip
    _emulator_claim_rules(rule, token, notes)
    _emulator_signature_rules(rule, token, notes)


def _emulator_claim_rules(rule: str, token: str, notes: str) -> None:
    """The issuer, audience and lifetime rules of one emulator-path token version."""
    _r(f"{rule}-ISSUER", Severity.ERROR, f"{_E} 3{notes}",
       f"The bot refuses {token} whose iss is not the emulator issuer with 403.")  # fmt: skip
    _r(f"{rule}-AUDIENCE", Severity.ERROR, f"{_E} 4; Versioning{notes}",
       f"The bot refuses {token} whose aud is not the profile's emulator audience (its app id "
       "in v3.1) with 403.")  # fmt: skip
    _r(f"{rule}-EXPIRED", Severity.ERROR, f"{_E} 6{notes}",
       f"The bot refuses {token} expired longer ago than the 5-minute clock skew with "
       "403.")  # fmt: skip
    _r(f"{rule}-EXPIRED-WITHIN-SKEW", Severity.ERROR, f"{_E} 6; Limits (clock skew){notes}",
       f"The bot accepts {token} that expired less than 5 minutes ago.")  # fmt: skip
    _r(f"{rule}-NOT-YET-VALID", Severity.ERROR, f"{_E} 2, 6 (RFC 7519 nbf){notes}",
       f"The bot refuses {token} whose nbf is further ahead than the clock skew with "
       "403.")  # fmt: skip


def _emulator_signature_rules(rule: str, token: str, notes: str) -> None:
    """The signature rules of one emulator-path token version."""
    _r(f"{rule}-TAMPERED", Severity.ERROR, f"{_E} 7{notes}",
       f"The bot refuses {token} whose payload was changed after it was signed with "
       "403.")  # fmt: skip
    _r(f"{rule}-UNKNOWN-KEY", Severity.ERROR, f"{_E} 7{notes}",
       f"The bot refuses {token} signed by a key that is not in the key document (even when "
       "the token carries the key itself) with 403.")  # fmt: skip
    _r(f"{rule}-UNKNOWN-KID", Severity.ERROR,
       f"{_E} 7; field notes (a kid not in the key set fails){notes}",
       f"The bot refuses {token} whose kid is not in the key document with 403, without "
       "trying the other keys.")  # fmt: skip
    _r(f"{rule}-FORGED-SIGNATURE", Severity.ERROR, f"{_E} 7{notes}",
       f"The bot refuses {token} that names a published kid but is signed by another key "
       "with 403.")  # fmt: skip
    _r(f"{rule}-ALG-NONE", Severity.ERROR, f"{_E} 7; field notes (RS256 only){notes}",
       f"The bot refuses {token} that is unsigned (alg none) with 403.")  # fmt: skip
    _r(f"{rule}-HS256-PUBLIC-KEY", Severity.ERROR, f"{_E} 7; field notes (RS256 only){notes}",
       f"The bot refuses {token} signed HS256 with the published RSA public key as the "
       "secret with 403.")  # fmt: skip


VERSIONS = ("1.0", "2.0")
"""The emulator-path token versions (field notes: ``ver`` 1.0 puts the app id in ``appid``,
2.0 in ``azp``); the probe runs the emulator path's cases for each."""
for _version in VERSIONS:
    _emulator_rules(_version)


# --- the calling path -------------------------------------------------------------------------

AUTH_CALLING_RULES = RuleRegistry("Auth probe (calling platform to bot)")
_F = "field notes, Calling: HTTP"
_rc = AUTH_CALLING_RULES.add
_rc("AUTH-CALL-VALID-ACCEPTED", Severity.ERROR, f"{_C} 4; {_F}",
   "The bot accepts a Conversation with a valid calling token and answers it with a Workflow "
   "(the positive control: when it is refused, the other cases prove nothing).")  # fmt: skip
_rc("AUTH-CALL-NO-HEADER", Severity.ERROR, f"{_C} 4.1, 5; {_F}",
   "The bot refuses a calling request without an Authorization header with 403.")  # fmt: skip
_rc("AUTH-CALL-SCHEME", Severity.ERROR, f"{_C} 4.1, 5; {_F}",
   "The bot refuses a calling token sent with a scheme other than Bearer with 403.")  # fmt: skip
_rc("AUTH-CALL-ISSUER", Severity.ERROR, f"{_C} 4.3, 5; {_F}",
   "The bot refuses a calling token whose iss is not the connector issuer with 403.")  # fmt: skip
_rc("AUTH-CALL-AUDIENCE", Severity.ERROR, f"{_C} 4.4, 5; {_F}",
   "The bot refuses a calling token whose aud is not its app id with 403.")  # fmt: skip
_rc("AUTH-CALL-EXPIRED", Severity.ERROR, f"{_C} 4.5, 5; {_F}",
   "The bot refuses a calling token expired longer ago than the 5-minute clock skew with "
   "403.")  # fmt: skip
_rc("AUTH-CALL-EXPIRED-WITHIN-SKEW", Severity.WARNING, f"{_C} 4.5; Limits (clock skew); {_F}",
   "The bot accepts a calling token that expired 1 minute ago, within the 5-minute skew "
   "(botbuilder-calling 3.0.1 refused it: a warning; a 5xx is an error).")  # fmt: skip
_rc("AUTH-CALL-NOT-YET-VALID", Severity.ERROR, f"{_C} 4.2, 4.5, 5 (RFC 7519 nbf); {_F}",
   "The bot refuses a calling token whose nbf is further ahead than the clock skew with "
   "403.")  # fmt: skip
_rc("AUTH-CALL-TAMPERED", Severity.ERROR, f"{_C} 4.6, 5; {_F}",
   "The bot refuses a calling token whose payload was changed after it was signed with "
   "403.")  # fmt: skip
_rc("AUTH-CALL-UNKNOWN-KEY", Severity.ERROR, f"{_C} 4.6, 5; {_F}",
   "The bot refuses a calling token signed by a key that is not in the key document (even when "
   "the token carries the key itself) with 403.")  # fmt: skip
_rc("AUTH-CALL-UNKNOWN-KID", Severity.ERROR, f"{_C} 4.6, 5; {_F}",
   "The bot refuses a calling token whose kid is not in the key document with 403, without "
   "trying the other keys.")  # fmt: skip
_rc("AUTH-CALL-ALG-NONE", Severity.ERROR, f"{_C} 4.6, 5; {_F}",
   "The bot refuses an unsigned calling token (alg none) naming a published kid with "
   "403.")  # fmt: skip
_rc("AUTH-CALL-ALG-NONE-UNKNOWN-KID", Severity.ERROR, f"{_C} 4.6, 5; {_F}",
   "The bot refuses an unsigned calling token (alg none) whose kid is not in the key document "
   "with 403 (botbuilder-calling 3.0.1 accepted it).")  # fmt: skip
_rc("AUTH-CALL-HS256-PUBLIC-KEY", Severity.ERROR, f"{_C} 4.6, 5; {_F}",
   "The bot refuses an HS256 calling token keyed with the published RSA public key with "
   "403.")  # fmt: skip
_rc("AUTH-CALL-MALFORMED", Severity.ERROR, f"{_C} 4.2, 5; {_F}",
   "The bot refuses a calling token whose header is not JSON with 403, and keeps its "
   "connection.")  # fmt: skip
_rc("AUTH-CALL-GARBAGE", Severity.ERROR, f"{_C} 4.2, 5; {_F}",
   "The bot refuses `Bearer not-a-jwt` with 403, and keeps its connection (botbuilder-calling "
   "3.0.1 crashed on it).")  # fmt: skip
_rc("AUTH-CALL-ALIVE", Severity.ERROR, f"{_C} 5; {_F}",
   "The bot still answers a valid Conversation after each case: a bad token must not stop it "
   "(botbuilder-calling 3.0.1 crashed on `Bearer not-a-jwt`).")  # fmt: skip

# --- TLS ----------------------------------------------------------------------------------------

TLS_RULES = RuleRegistry("TLS probe (calling platform to bot)")
_SOURCE = "spec Authentication, Calling platform to bot 2"
_rt = TLS_RULES.add
_rt(
    "TLS-VALID-ACCEPTED",
    Severity.ERROR,
    _SOURCE,
    "The bot accepts the platform's own client certificate (the positive control: when it is "
    "refused, the other cases prove nothing).",
)
_rt("TLS-NO-CERT", Severity.ERROR, _SOURCE, "The bot refuses a call without a client certificate.")
_rt("TLS-EXPIRED", Severity.ERROR, _SOURCE, "The bot refuses an expired client certificate.")
_rt(
    "TLS-NOT-YET-VALID",
    Severity.ERROR,
    _SOURCE,
    "The bot refuses a client certificate whose validity has not started.",
)
_rt(
    "TLS-UNKNOWN-CA",
    Severity.ERROR,
    _SOURCE,
    "The bot refuses a client certificate that does not chain to the platform's CA.",
)
_rt(
    "TLS-WRONG-CN",
    Severity.ERROR,
    _SOURCE + " (common name)",
    "The bot refuses a client certificate whose common name is not the platform's.",
)
_rt(
    "TLS-REVOKED",
    Severity.ERROR,
    _SOURCE,
    "The bot refuses a client certificate that the platform CA's CRL lists as revoked (right "
    "name, good dates).",
)
