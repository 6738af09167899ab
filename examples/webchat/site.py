#!/usr/bin/env python3
"""A site that hosts Web Chat, on an origin of its own, talking to botemu's Direct Line.

It serves ``index.html`` (beside this file), Web Chat's bundle (``botframework-webchat``'s
``dist/webchat.js``, from npm) and ``POST /token``: a Direct Line token for a new conversation,
asked of Direct Line with the bot's secret (which never reaches the page) for one user and
this site's origin (``trustedOrigins``). docs/directline.md::

    npm install botframework-webchat@4.18.1
    python examples/webchat/site.py --port 8000 \\
        --domain http://127.0.0.1:9070/v3/directline --secret "$SECRET" \\
        --bundle node_modules/botframework-webchat/dist/webchat.js

then open http://127.0.0.1:8000/. ``$SECRET`` is the bot's secret from ``botemu config --json``
(``directline.secrets``). ``?bot=NAME`` picks another secret given as ``--secret NAME=SECRET``.
"""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Mapping
from pathlib import Path

import aiohttp
from aiohttp import web

PAGE = Path(__file__).resolve().parent / "index.html"


def make_site(domain: str, bots: Mapping[str, str], bundle: Path, origin: str) -> web.Application:
    """The site: ``bots`` maps a name (``""`` for the default) to its bot's secret; ``origin``
    is the site's own, the only one its tokens are good from."""

    async def page(request: web.Request) -> web.FileResponse:
        return web.FileResponse(PAGE)

    async def script(request: web.Request) -> web.FileResponse:
        return web.FileResponse(bundle, headers={"Content-Type": "text/javascript"})

    async def token(request: web.Request) -> web.Response:
        secret = bots.get(request.query.get("bot", ""))
        if secret is None:
            raise web.HTTPNotFound(text="no such bot")
        user = {"id": f"dl_{secrets.token_hex(6)}", "name": request.query.get("name", "Ada")}
        body = {"user": user, "trustedOrigins": [origin]}
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{domain}/tokens/generate", json=body,
                      headers={"Authorization": f"Bearer {secret}"}) as answer,
        ):  # fmt: skip
            if answer.status != 200:
                raise web.HTTPBadGateway(text=f"Direct Line answered {answer.status}")
            generated = await answer.json()
        return web.json_response({"token": generated["token"], "domain": domain})

    app = web.Application()
    app.add_routes([web.get("/", page), web.get("/webchat.js", script), web.post("/token", token)])
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--domain", default="http://127.0.0.1:9070/v3/directline")
    parser.add_argument("--secret", action="append", required=True,
                        help="the bot's secret, or NAME=SECRET for ?bot=NAME")  # fmt: skip
    parser.add_argument("--bundle", type=Path,
                        default=Path("node_modules/botframework-webchat/dist/webchat.js"))  # fmt: skip
    args = parser.parse_args()
    bots = dict(s.split("=", 1) if "=" in s else ("", s) for s in args.secret)
    origin = f"http://127.0.0.1:{args.port}"
    web.run_app(make_site(args.domain, bots, args.bundle, origin), host="127.0.0.1",
                port=args.port)  # fmt: skip


if __name__ == "__main__":
    main()
