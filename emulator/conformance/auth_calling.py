"""The calling auth probe: does a calling bot refuse every Bearer token the platform would never send?

Field notes (Calling: HTTP): besides the client certificate, real calling SDKs check a Bearer JWT
on every calling request, "with the same issuer, audience and 5-minute skew rules as messaging".
That is the connector path of spec section Authentication (Connector to bot 4-6): ``iss`` the
connector issuer, ``aud`` the bot's app id, RS256 with a ``kid`` from botemu's key document,
``nbf``/``exp`` with 5 minutes of skew, and no ``serviceurl`` (a call has no serviceUrl). The
probe posts a minimal Conversation per case, each with one Authorization header built by the
messaging probe's ``TokenFactory`` from botemu's keys (``TokenKind.CALLING``):

========================  ====================================================================
``valid``                 a good calling token: the positive control, must be accepted (2xx with
                          a Workflow)
``no-header``             no Authorization header
``scheme``                the good token under ``Basic`` instead of ``Bearer``
``issuer``                ``iss`` a foreign issuer
``audience``              ``aud`` the connector's audience instead of the bot's app id
``expired``               expired 6 minutes ago, beyond the 5-minute skew
``expired-within-skew``   expired 1 minute ago, within the skew: should be accepted (3.0.1
                          refused it); a refusal is a warning
``not-yet-valid``         ``nbf`` 6 minutes ahead
``tampered``              ``exp`` changed after signing, the old signature kept
``unknown-key``           signed by a key that is not published (its JWK embedded in the header)
``unknown-kid``           signed by the published key under a ``kid`` that is not published
``alg-none``              ``alg: none``, no signature, the published ``kid``
``alg-none-unknown-kid``  ``alg: none``, no signature, a ``kid`` that is not published (3.0.1
                          accepted it)
``hs256-public-key``      HS256 keyed with the published public key (PEM)
``malformed``             three dot-separated parts whose header is not JSON
``garbage``               ``Bearer not-a-jwt`` (botbuilder-calling 3.0.1 crashed on it)
========================  ====================================================================

The two tokens that are not JWTs come last: a bot that dies on one hides every later case.

Verdicts are the messaging probe's (``probing.judge``): 403 passes, 2xx is an error, 5xx an error,
another status a warning, no answer a warning; when ``valid`` is not accepted, refusals prove
nothing and are warnings. Two things are the calling path's own. A token that is not a JWT
(``garbage``, ``malformed``) that gets no answer at all is an error: the connection broke or hung
on it. And after each case the probe sends a good Conversation: when the bot no longer answers it
(or no longer accepts it, having accepted ``valid``), an ``AUTH-CALL-ALIVE`` error names the case
after which it stopped, and the probe ends there.

No connector is involved (a calling bot answers in its HTTP response), so the probe runs wherever
there is a key store whose keys the bot trusts: inside a running botemu (``POST
/_botemu/probe/auth`` with ``"calling": true``) or with a ``KeyStore`` of a certificates directory.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from ssl import SSLContext

import aiohttp

from emulator.calling.model import CallState, Conversation, ModalityType, Participant
from emulator.calling.tokens import MAX_APP_ID
from emulator.calling.wire import encode, parse_workflow
from emulator.certs import client_ssl_context, load_certs
from emulator.config import BotRegistration
from emulator.conformance.probing import (
    Attempt,
    Case,
    ProbeError,
    bearer,
    check_url,
    judge_control,
    run_cases,
    send,
)
from emulator.conformance.rules import AUTH_CALLING_RULES as RULES
from emulator.conformance.tokens import FOREIGN_ISSUER, MARGIN, SKEW, TokenFactory
from emulator.errors import BotemuError, WireError
from emulator.findings import Finding, Severity, has_errors
from emulator.identity.bearer import TokenKind
from emulator.transcripts.store import EventKind, TranscriptStore

ALIVE = RULES["AUTH-CALL-ALIVE"]

GARBAGE = "not-a-jwt"
WITHIN = 60
"""How long ago the ``expired-within-skew`` token expired (seconds, well within the skew)."""
PROBE_CALLER = "8:botemu-auth-probe"

_CALL = TokenKind.CALLING
_BEYOND = SKEW + MARGIN
CASES: tuple[Case, ...] = (
    Case("valid", "AUTH-CALL-VALID-ACCEPTED", _CALL, "a valid calling token",
         lambda f: bearer(f.token(_CALL)), expect_accept=True, control=True),
    Case("no-header", "AUTH-CALL-NO-HEADER", _CALL, "a call without an Authorization header",
         lambda f: None),
    Case("scheme", "AUTH-CALL-SCHEME", _CALL, "a valid token under the Basic scheme",
         lambda f: f"Basic {f.token(_CALL)}"),
    Case("issuer", "AUTH-CALL-ISSUER", _CALL, f"a token from the foreign issuer {FOREIGN_ISSUER}",
         lambda f: bearer(f.token(_CALL, iss=FOREIGN_ISSUER))),
    Case("audience", "AUTH-CALL-AUDIENCE", _CALL,
         "a token for the connector's audience instead of the bot's app id",
         lambda f: bearer(f.token(_CALL, aud=f.wrong_audience))),
    Case("expired", "AUTH-CALL-EXPIRED", _CALL,
         f"a token expired {_BEYOND // 60} minutes ago (beyond the {SKEW // 60}-minute skew)",
         lambda f: bearer(f.expired(_BEYOND, _CALL))),
    Case("expired-within-skew", "AUTH-CALL-EXPIRED-WITHIN-SKEW", _CALL,
         f"a token expired {WITHIN // 60} minute ago (within the {SKEW // 60}-minute skew)",
         lambda f: bearer(f.expired(WITHIN, _CALL)), expect_accept=True,
         refusal=Severity.WARNING),
    Case("not-yet-valid", "AUTH-CALL-NOT-YET-VALID", _CALL,
         f"a token valid only {_BEYOND // 60} minutes from now (nbf)",
         lambda f: bearer(f.not_yet_valid(_BEYOND, _CALL))),
    Case("tampered", "AUTH-CALL-TAMPERED", _CALL, "a token whose exp was changed after signing",
         lambda f: bearer(f.tampered(_CALL))),
    Case("unknown-key", "AUTH-CALL-UNKNOWN-KEY", _CALL,
         "a token signed by an unpublished key (its JWK in the header)",
         lambda f: bearer(f.unknown_key(_CALL))),
    Case("unknown-kid", "AUTH-CALL-UNKNOWN-KID", _CALL,
         "a token with an unpublished kid (signed by the published key)",
         lambda f: bearer(f.unknown_kid(_CALL))),
    Case("alg-none", "AUTH-CALL-ALG-NONE", _CALL,
         "an unsigned token (alg none) naming the published kid",
         lambda f: bearer(f.alg_none(_CALL))),
    Case("alg-none-unknown-kid", "AUTH-CALL-ALG-NONE-UNKNOWN-KID", _CALL,
         "an unsigned token (alg none) whose kid is not published",
         lambda f: bearer(f.alg_none(_CALL, kid=f.unpublished_kid()))),
    Case("hs256-public-key", "AUTH-CALL-HS256-PUBLIC-KEY", _CALL,
         "an HS256 token keyed with the published public key",
         lambda f: bearer(f.hs256_public_key(_CALL))),
    Case("malformed", "AUTH-CALL-MALFORMED", _CALL, "a token whose header is not JSON",
         lambda f: bearer(f.malformed(_CALL)), no_answer=Severity.ERROR),
    Case("garbage", "AUTH-CALL-GARBAGE", _CALL, f"a token that is not a JWT (Bearer {GARBAGE})",
         lambda f: bearer(GARBAGE), no_answer=Severity.ERROR),
)  # fmt: skip
REQUESTS = 2 * len(CASES)
"""The most requests one probe sends: each case, then a good Conversation."""


class NoCallingBot(BotemuError):
    """No bot fits a probe request that names none clearly (the control route answers 404)."""


def conversation(app_id: str) -> bytes:
    """A minimal Conversation (a new call id each time) from the probe's caller to ``app_id``."""
    return encode(
        Conversation(
            id=f"botemu-auth-probe-{uuid.uuid4().hex[:12]}",
            participants=(
                Participant(identity=PROBE_CALLER, display_name="auth probe", originator=True),
                Participant(identity=f"28:{app_id}", originator=False),
            ),
            presented_modality_types=(ModalityType.AUDIO,),
            call_state=CallState.INCOMING,
            is_multiparty=False,
        )
    )


def headers() -> dict[str, str]:
    """The headers of every calling request; each Conversation is a new call, so both ids are
    new."""
    return {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-Platform-Chain-ID": str(uuid.uuid4()),
        "X-Platform-Message-ID": str(uuid.uuid4()),
    }


async def probe_auth_calling(
    bot_url: str,
    factory: TokenFactory,
    *,
    http: aiohttp.ClientSession,
    timeout: float = 10.0,
    ssl: SSLContext | None = None,
    on_finding: Callable[[Finding], None] | None = None,
) -> list[Finding]:
    """Run every case against the calling bot at ``bot_url``; one finding per case, in order,
    then an ``AUTH-CALL-ALIVE`` error if the bot stopped answering (the probe ends there).

    The app id (``aud``) and the keys come from ``factory``; ``timeout`` bounds each request;
    ``ssl`` is the client side of an https bot (the platform's certificate); ``on_finding`` sees
    each finding as soon as it is judged. Raises ``ProbeError`` for a bad URL or a bot that
    cannot be reached at all.
    """
    check_url(bot_url, "calling address")
    probe = _CallingProbe(bot_url, factory, http, timeout, ssl)
    return await run_cases(bot_url, CASES, probe.attempt, probe.judge_valid,
                           on_finding=on_finding, after=probe.alive)  # fmt: skip


@dataclass
class _CallingProbe:
    """One run of the calling probe: how a case is sent, how its positive control is judged,
    and whether the bot still answers after each case."""

    bot_url: str
    factory: TokenFactory
    http: aiohttp.ClientSession
    timeout: float
    ssl: SSLContext | None
    control: Attempt | None = None
    """What the positive control got (None until it was sent)."""

    async def attempt(self, case: Case) -> Attempt:
        return await self.post(case.build(self.factory))

    async def post(self, authorization: str | None) -> Attempt:
        body = conversation(self.factory.app_id)
        return await send(self.http, self.bot_url, body, headers(), authorization, self.timeout,
                          ssl=self.ssl)  # fmt: skip

    def judge_valid(self, case: Case, got: Attempt) -> Finding:
        self.control = got
        hint = (
            f"does it check tokens against this botemu's OpenID metadata "
            f"({self.factory.placeholders.openid_metadata_url}) for app id {self.factory.app_id}?"
        )
        finding = judge_control(case, got, hint)
        if finding.severity is Severity.INFO:
            problem = _not_a_workflow(got.body)
            if problem is not None:
                return Finding(case.rule, Severity.WARNING, case.name,
                               f"accepted {case.presents} ({got.detail}), but the answer is not "
                               f"a Workflow: {problem}", problem)  # fmt: skip
        return finding

    async def alive(self, case: Case, got: Attempt) -> Finding | None:
        check = await self.post(bearer(self.factory.token(_CALL)))
        if check.status is None:
            why = f"no answer ({check.detail})"
        elif self.control is not None and self.control.accepted and not check.accepted:
            why = f"{check.detail}, where it accepted the positive control"
        else:
            return None
        return Finding(
            ALIVE.id,
            Severity.ERROR,
            case.name,
            f"the bot stopped answering after {case.presents}: a valid Conversation then got "
            f"{why}; the probe stopped here",
            check.detail,
        )


async def probe_recorded(
    store: TranscriptStore,
    bot_url: str,
    factory: TokenFactory,
    *,
    http: aiohttp.ClientSession,
    timeout: float = 10.0,
    ssl: SSLContext | None = None,
) -> tuple[str, list[Finding]]:
    """``probe_auth_calling`` with a transcript: (its id, the findings). The transcript (a call
    from ``PROBE_CALLER``) gets each finding as it is judged and the verdict at the end."""
    call_id = store.start(bot=bot_url, caller=PROBE_CALLER)
    store.append(call_id, EventKind.NOTE,
                 {"summary": f"calling auth probe of {bot_url} for app id {factory.app_id}"})  # fmt: skip

    def note(finding: Finding) -> None:
        store.append(call_id, EventKind.FINDING, {"summary": str(finding), **finding.to_json()})

    try:
        findings = await probe_auth_calling(bot_url, factory, http=http, timeout=timeout, ssl=ssl,
                                            on_finding=note)  # fmt: skip
    except ProbeError:
        store.finish(call_id, reason="the bot could not be reached", passed=False)
        raise
    store.finish(call_id, reason="auth probe finished", passed=not has_errors(findings))
    return call_id, findings


def _not_a_workflow(body: bytes) -> str | None:
    """Why an answer is not a Workflow (None when it reads as one)."""
    if not body.strip():
        return "an empty body"
    try:
        parse_workflow(body)
    except WireError as e:
        return str(e)
    return None


# --- where the probe goes ------------------------------------------------------------------------


def pick_bot(
    bots: Sequence[BotRegistration], app_id: str | None, url: str | None
) -> tuple[str, str]:
    """(app id, calling address) for a probe asked for ``app_id`` and/or ``url``.

    The app id need not be registered (it is only the tokens' audience); without one, that of the
    bot registered with ``url`` as its calling endpoint, or of the only registered bot. Without
    ``url``, the registered calling endpoint of the app id. Raises ``NoCallingBot`` when no
    registered bot fits, ``ProbeError`` (or ``BotemuError``) for input that cannot work."""
    if app_id is None and url is None:
        raise BotemuError("give app_id or bot (or both)")
    if app_id is not None and len(app_id) > MAX_APP_ID:
        raise BotemuError(f"app_id is over {MAX_APP_ID} characters")
    if app_id is None:
        registered = [b for b in bots if b.calling_endpoint == url] or (
            list(bots) if len(bots) == 1 else []
        )
        if not registered:
            raise NoCallingBot(
                f"no bot is registered with the calling endpoint {url}, and {len(bots)} bots "
                "are registered: give app_id (the audience of the calling tokens)"
            )
        app_id = registered[0].app_id
    if url is None:
        bot = next((b for b in bots if b.app_id == app_id), None)
        if bot is None or bot.calling_endpoint is None:
            raise NoCallingBot(f"no calling endpoint is registered for app id {app_id}: give bot")
        url = bot.calling_endpoint
    check_url(url, "calling address")
    return app_id, url


def client_ssl(url: str, certs: Path, ca: Path | None = None) -> SSLContext | None:
    """The platform's side of TLS for an https bot, as ``botemu call`` has it: the client
    certificate of ``certs`` (a directory written by ``botemu certs``), the bot verified against
    its ``ca.pem`` or ``ca``; None for an http bot. Raises ``CertError``."""
    if not url.lower().startswith("https:"):
        return None
    return client_ssl_context(load_certs(certs), ca_file=ca)
