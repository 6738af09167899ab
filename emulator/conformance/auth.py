"""The auth probe: does a messaging bot refuse every token the platform would never send?

Spec (Authentication, Connector to bot 4-6, and Local test emulator to bot 1-7): the bot accepts
a call only with a Bearer JWT from the right issuer, for its app id, unexpired (5 minutes of skew)
and signed by a published key, and on the emulator path with its app id in ``appid``; on any
failure it answers 403, and no switch turns this off. The probe posts one ``message`` activity per
case, each with one Authorization header built by a ``TokenFactory`` from botemu's own keys:

========================  ===================================================================
``valid``                 a good connector token: the positive control, must be accepted
``no-header``             no Authorization header
``scheme``                the good token under ``Basic`` instead of ``Bearer``
``malformed``             three dot-separated parts whose header is not JSON
``issuer``                ``iss`` a foreign issuer
``audience``              ``aud`` the connector's audience instead of the bot's app id
``expired``               expired 6 minutes ago, beyond the 5-minute skew
``expired-within-skew``   expired 4 minutes ago, within the skew: must be accepted
``not-yet-valid``         ``nbf`` 6 minutes ahead
``tampered``              ``exp`` changed after signing, the old signature kept
``unknown-key``           signed by a key that is not published (its JWK embedded in the header)
``unknown-kid``           signed by the published key under a ``kid`` that is not published
``forged-signature``      the published ``kid``, signed by another key
``alg-none``              ``alg: none`` and no signature
``hs256-public-key``      HS256 keyed with the published public key (PEM)
``endorsement``           a good token on an activity from a channel its key is not endorsed
                          for (skipped, as an info finding, when botemu publishes no
                          endorsements)
``emulator-valid``        a good emulator-path token (``ver`` 1.0, ``appid``): the positive
                          control of that path
``emulator-no-appid``     an emulator-path token without ``appid``
``emulator-wrong-appid``  an emulator-path token whose ``appid`` is another app's
``emulator-<case>``       the cases ``issuer`` to ``hs256-public-key`` above, on ``ver`` 1.0
                          emulator-path tokens
``emulator-v2-valid``     a good ``ver`` 2.0 emulator-path token (``azp``): its own control
``emulator-v2-wrong-azp`` a ``ver`` 2.0 token whose ``azp`` is another app's
``emulator-v2-<case>``    the same cases on ``ver`` 2.0 tokens
========================  ===================================================================

Verdicts (``Finding.where`` is the case name): a bad token answered 403 passes (info); 2xx is an
error (a security hole), 5xx an error (a crash on bad input), any other status a warning (the spec
says 403; real SDKs answer 401 or 500, field notes), and no answer a warning. A token that must be
accepted passes with 2xx and is an error otherwise. When a path's positive control is not
accepted, the refusals on that path prove nothing and are warnings; each token version of the
emulator path has its own control. A bad URL, or a bot that cannot be reached for the first case,
raises ``ProbeError``.

The bot answers an accepted ``message`` by replying through the connector, so the probe runs
inside a running botemu (``POST /_botemu/probe/auth``), which puts each activity in a
conversation (``stage``) before it is sent.

The rules and the table of cases are in ``auth_cases``; the tokens in ``tokens`` (``TokenFactory``:
each bad token is built for a token path, ``TokenKind``). The calling probe (``auth_calling``)
shares the machinery of ``probing``: ``Case``, ``send``, ``run_cases`` and the verdicts
(``judge_control``, ``judge``). Every name this module had is still importable from it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import aiohttp

from emulator.conformance.auth_cases import CASES, NO_ENDORSEMENTS
from emulator.conformance.probing import (
    MAX_ANSWER,
    SKIPPED,
    After,
    Attempt,
    Attempter,
    Case,
    Judge,
    ProbeError,
    bearer,
    check_url,
    judge,
    judge_control,
    run_cases,
    send,
    skipped,
)
from emulator.conformance.rules import AUTH_RULES as RULES
from emulator.conformance.rules import VERSIONS
from emulator.conformance.tokens import (
    FOREIGN_ISSUER,
    MARGIN,
    OTHER_APP_IDS,
    PROBE_AUDIENCES,
    SKEW,
    UNENDORSED_CHANNEL,
    TokenFactory,
)
from emulator.findings import Finding, Severity
from emulator.jsonutil import JSONObject, dumps

__all__ = [
    "CASES",
    "FOREIGN_ISSUER",
    "MARGIN",
    "MAX_ANSWER",
    "NO_ENDORSEMENTS",
    "OTHER_APP_IDS",
    "PROBE_AUDIENCES",
    "PROBE_USER",
    "RULES",
    "SKEW",
    "SKIPPED",
    "UNENDORSED_CHANNEL",
    "VERSIONS",
    "After",
    "Attempt",
    "Attempter",
    "Case",
    "Judge",
    "ProbeError",
    "Stage",
    "TokenFactory",
    "anonymous_finding",
    "bearer",
    "check_url",
    "judge",
    "judge_control",
    "probe_auth",
    "run_cases",
    "send",
    "skipped",
]

PROBE_USER: JSONObject = {"id": "botemu-auth-probe", "name": "botemu auth probe", "role": "user"}

Stage = Callable[[JSONObject], JSONObject]
"""Takes an activity about to be sent and returns it as it goes out (botemu stores it in a
conversation and gives it its id, so that the bot's reply to it is accepted)."""


async def probe_auth(
    bot_url: str,
    factory: TokenFactory,
    *,
    http: aiohttp.ClientSession,
    timeout: float = 10.0,
    on_finding: Callable[[Finding], None] | None = None,
    stage: Stage | None = None,
    anonymous: bool = False,
) -> list[Finding]:
    """Run every case against ``bot_url`` and return one finding per case, in order.

    ``anonymous``: botemu knows the bot as anonymous (registered without an app id). Such a bot
    is first sent the ``no-header`` case alone; when it accepts it (2xx), the probe ends with one
    ``AUTH-ANONYMOUS`` warning (``anonymous_finding``) instead of one error per case.

    The bot's app id and the ``serviceUrl`` come from ``factory``; ``timeout`` bounds each case;
    ``on_finding`` sees each finding as soon as it is judged; ``stage`` sees each activity before
    it is sent. Raises ``ProbeError`` for a bad URL or a bot that cannot be reached at all.
    """
    check_url(bot_url)
    conversation = f"botemu-auth-probe-{uuid.uuid4().hex[:12]}"

    async def attempt(case: Case) -> Attempt:
        activity = _activity(case, factory, conversation)
        if stage is not None:
            activity = stage(activity)
        activity["channelId"] = (case.channel or _channel)(factory)  # staging sets botemu's
        headers = {"Content-Type": "application/json"}
        return await send(http, bot_url, dumps(activity), headers, case.build(factory), timeout)

    def control(case: Case, attempt: Attempt) -> Finding:
        if attempt.status is not None and attempt.status >= 500:
            hint = "did its reply through botemu's connector fail?"
        elif case.version == "2.0":
            hint = ("does it take ver 2.0 tokens, whose app id is in azp (field notes)? Is it "
                    "configured with this botemu's settings (botemu config)?")  # fmt: skip
        else:
            hint = "is it configured with this botemu's settings (botemu config)?"
        return judge_control(case, attempt, hint)

    def skip(case: Case) -> str | None:
        return None if case.skip is None else case.skip(factory)

    if anonymous:
        found = await _anonymous(bot_url, attempt)
        if found is not None:
            if on_finding is not None:
                on_finding(found)
            return [found]
    return await run_cases(bot_url, CASES, attempt, control, on_finding=on_finding, skip=skip)


async def _anonymous(bot_url: str, attempt: Attempter) -> Finding | None:
    """The ``AUTH-ANONYMOUS`` finding when the bot accepts a call without a token, else None."""
    case = next(c for c in CASES if c.name == "no-header")
    got = await attempt(case)
    if got.unreachable:
        raise ProbeError(bot_url, f"cannot connect: {got.detail}")
    return anonymous_finding(got.detail) if got.accepted else None


def anonymous_finding(detail: str) -> Finding:
    """The one finding of a bot that runs anonymously (it accepted a call without a token)."""
    return Finding("AUTH-ANONYMOUS", Severity.WARNING, "no-header",
                   f"runs anonymously (a call without an Authorization header: {detail}): fine "
                   "for local work, never in production")  # fmt: skip


def _channel(factory: TokenFactory) -> str:
    return factory.channel


def _activity(case: Case, factory: TokenFactory, conversation: str) -> JSONObject:
    return {
        "type": "message",
        "id": f"probe-{uuid.uuid4().hex}",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(factory.clock())),
        "channelId": factory.channel,
        "serviceUrl": factory.service_url,
        "from": dict(PROBE_USER),
        "recipient": {"id": factory.app_id, "role": "bot"},
        "conversation": {"id": conversation},
        "text": f"botemu auth probe: {case.name}",
    }
