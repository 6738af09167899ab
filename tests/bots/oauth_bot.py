"""A small anonymous bot that signs users in through the user token service, as OAuthPrompt does.

- ``login``: ``GET /api/usertoken/GetToken``; with no token, ``GetSignInResource`` with a
  TokenExchangeState and an OAuth card (its button carries the sign-in link, or, with
  ``no_link``, no link, as outside Teams); with a token, ``already: <name>``.
- an ``invoke`` ``signin/verifyState``: ``GetToken?code=<the magic code>``; the token is checked
  against botemu's published keys (RS256) and the bot says ``signed in as <name>``; a wrong
  code: ``try again``.
- a six-digit message: the same, as a typed magic code.
- ``logout``: ``SignOut``; ``who``: GetToken again (``nobody`` after a sign-out).

- an ``invoke`` ``signin/tokenExchange`` (single sign-on, ``msteams``): ``POST exchange`` with
  the token; taken: ``signed in as <name>`` and 200; refused by the service (or with
  ``refuse_sso``): 412, and the card stays.

Flaws on purpose (``make_bot(flaw=...)``): ``no_connection``: the OAuth card has no
connectionName; ``ignores_code``: the code (a verifyState invoke, answered 200, or a typed one) is not
redeemed.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import aiohttp
import jwt
from aiohttp import web

CONNECTION = "graph"


def make_bot(
    *, flaw: str | None = None, no_link: bool = False, refuse_sso: bool = False
) -> web.Application:
    app = web.Application()

    async def post(activity: dict[str, Any], reply: dict[str, Any]) -> None:
        base = activity["serviceUrl"].rstrip("/")
        url = f"{base}/v3/conversations/{activity['conversation']['id']}/activities"
        async with aiohttp.ClientSession() as http, http.post(url, json=reply) as response:
            assert response.status < 300, await response.text()

    async def token(activity: dict[str, Any], code: str | None = None) -> dict[str, Any] | None:
        base = activity["serviceUrl"].rstrip("/")
        params = {
            "userId": activity["from"]["id"],
            "connectionName": CONNECTION,
            "channelId": activity["channelId"],
        }
        if code:
            params["code"] = code
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{base}/api/usertoken/GetToken", params=params) as response,
        ):
            if response.status == 404:
                return None
            assert response.status == 200, await response.text()
            found: dict[str, Any] = await response.json()
            return found

    async def name_in(activity: dict[str, Any], issued: dict[str, Any]) -> str:
        """The user's name from the token, checked with botemu's published keys."""
        base = activity["serviceUrl"].rstrip("/")
        async with aiohttp.ClientSession() as http, http.get(f"{base}/_identity/keys") as response:
            keys = await response.json()
        kid = jwt.get_unverified_header(issued["token"])["kid"]
        key = jwt.PyJWK(next(k for k in keys["keys"] if k["kid"] == kid))
        claims = jwt.decode(
            issued["token"], key.key, algorithms=["RS256"], audience="api://botemu-resource"
        )
        return str(claims["name"])

    async def sign_in_card(activity: dict[str, Any]) -> dict[str, Any]:
        base = activity["serviceUrl"].rstrip("/")
        state = {
            "connectionName": CONNECTION,
            "msAppId": activity["recipient"]["id"],
            "conversation": {
                "conversation": activity["conversation"],
                "user": activity["from"],
                "bot": activity["recipient"],
                "channelId": activity["channelId"],
                "serviceUrl": base,
            },
        }
        raw = base64.b64encode(json.dumps(state).encode()).decode()
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{base}/api/botsignin/GetSignInResource", params={"state": raw}) as response,
        ):
            resource = await response.json()
        button: dict[str, Any] = {"type": "signin", "title": "Sign in"}
        if not no_link:
            button["value"] = resource["signInLink"]
        content: dict[str, Any] = {
            "text": "Please sign in",
            "buttons": [button],
            "tokenExchangeResource": resource["tokenExchangeResource"],
        }
        if flaw != "no_connection":
            content["connectionName"] = CONNECTION
        return {
            "type": "message",
            "attachments": [
                {"contentType": "application/vnd.microsoft.card.oauth", "content": content}
            ],
        }

    async def redeem(activity: dict[str, Any], code: str) -> None:
        issued = await token(activity, code)
        if issued is None:
            await post(activity, {"type": "message", "text": "try again"})
            return
        await post(
            activity, {"type": "message", "text": f"signed in as {await name_in(activity, issued)}"}
        )

    async def exchange(activity: dict[str, Any]) -> web.Response:
        if refuse_sso:
            return web.json_response({"failureDetail": "refused"}, status=412)
        base = activity["serviceUrl"].rstrip("/")
        value = activity.get("value") or {}
        params = {
            "userId": activity["from"]["id"],
            "connectionName": CONNECTION,
            "channelId": activity["channelId"],
        }
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"{base}/api/usertoken/exchange", params=params, json={"token": value.get("token")}
            ) as response,
        ):
            if response.status != 200:
                return web.json_response({"failureDetail": "exchange refused"}, status=412)
            issued = await response.json()
        await post(
            activity, {"type": "message", "text": f"signed in as {await name_in(activity, issued)}"}
        )
        return web.json_response({"id": value.get("id")}, status=200)

    async def handle(request: web.Request) -> web.Response:
        activity = await request.json()
        kind, text = activity.get("type"), str(activity.get("text") or "").strip()
        if kind == "invoke" and activity.get("name") == "signin/tokenExchange":
            return await exchange(activity)
        if kind == "invoke" and activity.get("name") == "signin/verifyState":
            if flaw != "ignores_code":
                await redeem(activity, str((activity.get("value") or {}).get("state", "")))
            return web.json_response({}, status=200)
        if kind != "message":
            return web.Response(status=200)
        if text == "login":
            issued = await token(activity)
            if issued is None:
                await post(activity, await sign_in_card(activity))
            else:
                await post(
                    activity,
                    {"type": "message", "text": f"already {await name_in(activity, issued)}"},
                )
        elif text.isdigit() and len(text) == 6:
            if flaw != "ignores_code":
                await redeem(activity, text)
        elif text == "logout":
            base = activity["serviceUrl"].rstrip("/")
            async with (
                aiohttp.ClientSession() as http,
                http.delete(
                    f"{base}/api/usertoken/SignOut",
                    params={"userId": activity["from"]["id"], "connectionName": CONNECTION},
                ) as r,
            ):
                assert r.status == 200
            await post(activity, {"type": "message", "text": "signed out"})
        elif text == "who":
            issued = await token(activity)
            who = "nobody" if issued is None else await name_in(activity, issued)
            await post(activity, {"type": "message", "text": who})
        return web.Response(status=200)

    app.router.add_post("/api/messages", handle)
    return app
