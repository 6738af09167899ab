"""The auth probe's cases: the rules (``RULES``) and the table of tokens a messaging bot must
refuse or accept (``CASES``), one ``Case`` each, for the connector path and for each token version
of the emulator path (``VERSIONS``). The module docstring of ``auth`` lists them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from emulator.conformance.probing import Case, bearer
from emulator.conformance.tokens import FOREIGN_ISSUER, MARGIN, SKEW, TokenFactory
from emulator.connector.sender import TokenKind
from emulator.findings import RuleRegistry, Severity

RULES = RuleRegistry("Auth probe (connector and emulator to bot)")
_C = "spec Authentication, Connector to bot"
_E = "spec Authentication, Local test emulator to bot"
_r = RULES.add
_r("AUTH-VALID-ACCEPTED", Severity.ERROR, f"{_C} 4",
   "The bot accepts a valid connector token (the positive control: when it is refused, the "
   "other connector cases prove nothing).")  # fmt: skip
_r("AUTH-NO-HEADER", Severity.ERROR, f"{_C} 4.1, 5",
   "The bot refuses a call without an Authorization header with 403.")  # fmt: skip
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

_CON, _EMU = TokenKind.CONNECTOR, TokenKind.EMULATOR
_BEYOND, _WITHIN = SKEW + MARGIN, SKEW - MARGIN
NO_ENDORSEMENTS = (
    "botemu publishes no endorsements on its signing keys, so there is no channel a bot must "
    "refuse (botemu serve --endorse CHANNEL publishes some)"
)
CASES: tuple[Case, ...] = (
    Case("valid", "AUTH-VALID-ACCEPTED", _CON, "a valid connector token",
         lambda f: bearer(f.token(_CON)), expect_accept=True, control=True),
    Case("no-header", "AUTH-NO-HEADER", _CON, "a call without an Authorization header",
         lambda f: None),
    Case("scheme", "AUTH-SCHEME", _CON, "a valid token under the Basic scheme",
         lambda f: f"Basic {f.token(_CON)}"),
    Case("malformed", "AUTH-MALFORMED", _CON, "a token whose header is not JSON",
         lambda f: bearer(f.malformed())),
    Case("issuer", "AUTH-ISSUER", _CON, f"a token from the foreign issuer {FOREIGN_ISSUER}",
         lambda f: bearer(f.token(_CON, iss=FOREIGN_ISSUER))),
    Case("audience", "AUTH-AUDIENCE", _CON, "a token for the connector's audience instead of the bot's app id",
         lambda f: bearer(f.token(_CON, aud=f.wrong_audience))),
    Case("expired", "AUTH-EXPIRED", _CON,
         f"a token expired {_BEYOND // 60} minutes ago (beyond the {SKEW // 60}-minute skew)",
         lambda f: bearer(f.expired(_BEYOND))),
    Case("expired-within-skew", "AUTH-EXPIRED-WITHIN-SKEW", _CON,
         f"a token expired {_WITHIN // 60} minutes ago (within the {SKEW // 60}-minute skew)",
         lambda f: bearer(f.expired(_WITHIN)), expect_accept=True),
    Case("not-yet-valid", "AUTH-NOT-YET-VALID", _CON,
         f"a token valid only {_BEYOND // 60} minutes from now (nbf)",
         lambda f: bearer(f.not_yet_valid(_BEYOND))),
    Case("tampered", "AUTH-TAMPERED", _CON, "a token whose exp was changed after signing",
         lambda f: bearer(f.tampered())),
    Case("unknown-key", "AUTH-UNKNOWN-KEY", _CON,
         "a token signed by an unpublished key (its JWK in the header)",
         lambda f: bearer(f.unknown_key())),
    Case("unknown-kid", "AUTH-UNKNOWN-KID", _CON,
         "a token with an unpublished kid (signed by the published key)",
         lambda f: bearer(f.unknown_kid())),
    Case("forged-signature", "AUTH-FORGED-SIGNATURE", _CON,
         "a token naming the published kid but signed by another key",
         lambda f: bearer(f.forged_signature())),
    Case("alg-none", "AUTH-ALG-NONE", _CON, "an unsigned token (alg none)",
         lambda f: bearer(f.alg_none())),
    Case("hs256-public-key", "AUTH-HS256-PUBLIC-KEY", _CON,
         "an HS256 token keyed with the published public key",
         lambda f: bearer(f.hs256_public_key())),
    Case("endorsement", "AUTH-ENDORSEMENT", _CON,
         "a valid token on an activity whose channelId its signing key is not endorsed for",
         lambda f: bearer(f.token(_CON)), channel=lambda f: f.unendorsed_channel,
         skip=lambda f: None if f.endorsements else NO_ENDORSEMENTS),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _EmulatorPath:
    """The emulator path with tokens of one ``version``: how its cases are named and worded."""

    version: str

    @property
    def token(self) -> str:
        return f"an emulator-path token (ver {self.version})"

    def case(
        self,
        suffix: str,
        presents: str,
        build: Callable[[TokenFactory], str | None],
        *,
        expect_accept: bool = False,
        control: bool = False,
    ) -> Case:
        name = "emulator" if self.version == "1.0" else "emulator-v2"
        return Case(f"{name}-{suffix}", f"AUTH-{name.upper()}-{suffix.upper()}", _EMU, presents,
                    build, expect_accept, control, version=self.version)  # fmt: skip


def _emulator_cases(version: str) -> tuple[Case, ...]:
    """The emulator path's cases for tokens of ``version`` (field notes: ``ver`` 1.0 carries the
    app id in ``appid``, 2.0 in ``azp``): the positive control, the app id cases, then the issuer,
    audience, lifetime and signature cases of the connector path."""
    path = _EmulatorPath(version)
    return (*_emulator_app_id_cases(path), *_emulator_claim_cases(path),
            *_emulator_signature_cases(path))  # fmt: skip


def _emulator_app_id_cases(path: _EmulatorPath) -> tuple[Case, ...]:
    """The positive control, then the cases of the claim that names the app id."""
    v, case, token = path.version, path.case, path.token
    valid = case("valid", f"a valid {token.removeprefix('an ')}",
                 lambda f: bearer(f.token(_EMU, version=v)), expect_accept=True, control=True)  # fmt: skip
    if v == "1.0":
        return (
            valid,
            case("no-appid", f"{token} without appid",
                 lambda f: bearer(f.without(_EMU, "appid", version=v))),
            case("wrong-appid", f"{token} with another app's appid",
                 lambda f: bearer(f.token(_EMU, version=v, appid=f.other_app_id))),
        )  # fmt: skip
    return (
        valid,
        case("wrong-azp", f"{token} with another app's azp",
             lambda f: bearer(f.token(_EMU, version=v, azp=f.other_app_id))),
    )  # fmt: skip


def _emulator_claim_cases(path: _EmulatorPath) -> tuple[Case, ...]:
    """The issuer, audience and lifetime cases."""
    v, case, token = path.version, path.case, path.token
    return (
        case("issuer", f"{token} from the foreign issuer {FOREIGN_ISSUER}",
             lambda f: bearer(f.token(_EMU, version=v, iss=FOREIGN_ISSUER))),
        case("audience", f"{token} for an audience that is not the bot's",
             lambda f: bearer(f.token(_EMU, version=v, aud=f.emulator_wrong_audience))),
        case("expired",
             f"{token} expired {_BEYOND // 60} minutes ago (beyond the {SKEW // 60}-minute skew)",
             lambda f: bearer(f.expired(_BEYOND, _EMU, version=v))),
        case("expired-within-skew",
             f"{token} expired {_WITHIN // 60} minutes ago (within the {SKEW // 60}-minute skew)",
             lambda f: bearer(f.expired(_WITHIN, _EMU, version=v)), expect_accept=True),
        case("not-yet-valid", f"{token} valid only {_BEYOND // 60} minutes from now (nbf)",
             lambda f: bearer(f.not_yet_valid(_BEYOND, _EMU, version=v))),
    )  # fmt: skip


def _emulator_signature_cases(path: _EmulatorPath) -> tuple[Case, ...]:
    """The cases of tokens whose signature or key is not botemu's."""
    v, case, token = path.version, path.case, path.token
    return (
        case("tampered", f"{token} whose exp was changed after signing",
             lambda f: bearer(f.tampered(_EMU, version=v))),
        case("unknown-key", f"{token} signed by an unpublished key (its JWK in the header)",
             lambda f: bearer(f.unknown_key(_EMU, version=v))),
        case("unknown-kid", f"{token} with an unpublished kid (signed by the published key)",
             lambda f: bearer(f.unknown_kid(_EMU, version=v))),
        case("forged-signature", f"{token} naming the published kid but signed by another key",
             lambda f: bearer(f.forged_signature(_EMU, version=v))),
        case("alg-none", f"{token} that is unsigned (alg none)",
             lambda f: bearer(f.alg_none(_EMU, version=v))),
        case("hs256-public-key", f"{token} signed HS256 with the published public key",
             lambda f: bearer(f.hs256_public_key(_EMU, version=v))),
    )  # fmt: skip


CASES += tuple(c for v in VERSIONS for c in _emulator_cases(v))
