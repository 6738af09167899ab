"""The auth probe's cases (its rules are ``rules.AUTH_RULES``): the table of tokens a messaging bot must
refuse or accept (``CASES``), one ``Case`` each, for the connector path and for each token version
of the emulator path (``VERSIONS``). The module docstring of ``auth`` lists them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from emulator.conformance.probing import Case, bearer
from emulator.conformance.rules import VERSIONS
from emulator.conformance.tokens import FOREIGN_ISSUER, MARGIN, SKEW, TokenFactory
from emulator.connector.sender import TokenKind

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
