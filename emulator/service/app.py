"""The whole emulator as one aiohttp application: identity, connector, the control API, the
CA's revocation routes and the log view, behind the guard (``emulator.guard``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from emulator.config import Profile, ServiceConfig
from emulator.connector.auth import identity_verifier
from emulator.connector.models import ConnectorState
from emulator.connector.routes import AnonymousBots, setup_connector
from emulator.connector.sender import ActivitySender, BotTokens
from emulator.guard import protect
from emulator.httpio import platform_session
from emulator.identity.routes import IDENTITY, IdentityService, identity_routes
from emulator.identity.wellknown import PLATFORM_AUDIENCE
from emulator.logview import setup_logview
from emulator.pki_routes import pki_routes
from emulator.service.control import control_routes
from emulator.service.directline import setup_directline
from emulator.service.livechat import setup_livechat
from emulator.service.livephone import setup_livephone
from emulator.service.signin import setup_signin
from emulator.service.state import EMULATOR, Emulator
from emulator.transcripts.store import TranscriptStore


def make_app(
    config: ServiceConfig, store: TranscriptStore, *, clock: Callable[[], float] = time.time
) -> web.Application:
    """The whole emulator as one aiohttp application."""
    identity = IdentityService.from_config(config, clock=clock)
    identity.keys.current()  # generate (or load) the signing key before serving
    placeholders = config.placeholders()
    connector = ConnectorState(service_url=placeholders.base_url, clock=clock,
                               limits=config.limits)  # fmt: skip
    verifier = identity_verifier(  # tokens of either profile's token endpoint are accepted
        identity.keys,
        [config.placeholders(p) for p in Profile],
        registered=lambda a: config.bot(a) is not None,
        clock=clock,
        audiences=(PLATFORM_AUDIENCE,),  # tokens from the platform's hosts (identity/wellknown.py)
    )
    tokens = BotTokens(identity.keys, placeholders, config.profile, clock)
    app = web.Application(client_max_size=8 * 1024 * 1024)
    app[IDENTITY] = identity
    app[EMULATOR] = Emulator(config, identity, connector, store, tokens, clock)
    app.add_routes(identity_routes(identity))
    emulator = app[EMULATOR]  # the configuration may gain anonymous bots as it runs
    anonymous = AnonymousBots(
        lambda app_id: emulator.config.anonymous(app_id),
        lambda: emulator.config.only_anonymous(),
        lambda: any(b.anonymous for b in emulator.config.bots),
    )
    setup_connector(app, connector, verifier, store=store, anonymous=anonymous)
    app.add_routes(control_routes())
    app.add_routes(pki_routes(config.certs_dir))  # the CA's CRL and OCSP (certs.py)
    setup_logview(app, store)  # the log view: GET / and /_logview/
    setup_directline(app)  # Direct Line 3.0 under /v3/directline (channels/directline)
    setup_livechat(app)  # the log view's web chat (a Direct Line client): its socket, its token
    setup_livephone(app)  # the log view's phone: its socket (the chat's admission)
    setup_signin(app)  # the user token service and the sign-in page (tokenservice/)
    protect(
        app,
        port=config.port,
        bind_host=config.host,
        allow_hosts=config.allow_hosts,
        certs_dir=config.certs_dir,
        tls=config.tls,
    )  # Host, Origin, secret: emulator/guard.py
    app.cleanup_ctx.append(_http_client)
    return app


async def _http_client(app: web.Application) -> AsyncIterator[None]:
    emulator = app[EMULATOR]
    async with platform_session() as http:
        emulator.sender = ActivitySender(
            http, emulator.tokens, record=emulator.record, connector=emulator.connector
        )
        yield
        emulator.sender = None
