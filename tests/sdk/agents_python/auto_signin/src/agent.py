# Copyright (c) Microsoft Corporation. All rights reserved.
# Licensed under the MIT License.
#
# The Agents SDK's auto sign-in sample (samples/python/auto-signin/src/agent.py) with its GRAPH
# handler. For botemu's tests: /me says the name and UPN in the user's token instead of asking
# Microsoft Graph for a profile card (no network here), and the GitHub handler is left out (its
# calls go to GitHub).

import re
import logging
from os import environ, path

import jwt
from dotenv import load_dotenv

from microsoft_agents.hosting.core import (
    Authorization,
    TurnContext,
    MessageFactory,
    MemoryStorage,
    AgentApplication,
    TurnState,
)
from microsoft_agents.activity import load_configuration_from_env, ActivityTypes
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.authentication.msal import MsalConnectionManager

logger = logging.getLogger(__name__)

load_dotenv(path.join(path.dirname(__file__), ".env"))
agents_sdk_config = load_configuration_from_env(environ)

STORAGE = MemoryStorage()
CONNECTION_MANAGER = MsalConnectionManager(**agents_sdk_config)
ADAPTER = CloudAdapter(connection_manager=CONNECTION_MANAGER)
AUTHORIZATION = Authorization(STORAGE, CONNECTION_MANAGER, **agents_sdk_config)

AGENT_APP = AgentApplication[TurnState](
    storage=STORAGE, adapter=ADAPTER, authorization=AUTHORIZATION, **agents_sdk_config
)


@AGENT_APP.message(re.compile(r"^/(status|auth status|check status)", re.IGNORECASE))
async def status(context: TurnContext, state: TurnState) -> bool:
    await context.send_activity(MessageFactory.text("Welcome to the auto-signin demo"))
    tok_graph = await AGENT_APP.auth.get_token(context, "GRAPH")
    status_graph = tok_graph.token is not None
    await context.send_activity(
        MessageFactory.text(f"Graph status: {'Connected' if status_graph else 'Not connected'}")
    )


@AGENT_APP.message("/logout")
async def logout(context: TurnContext, state: TurnState) -> None:
    await AGENT_APP.auth.sign_out(context, "GRAPH")
    await context.send_activity(MessageFactory.text("You have been logged out."))


@AGENT_APP.message(re.compile(r"^/(me|profile)$", re.IGNORECASE), auth_handlers=["GRAPH"])
async def profile_request(context: TurnContext, state: TurnState) -> None:
    user_token_response = await AGENT_APP.auth.get_token(context, "GRAPH")
    if user_token_response and user_token_response.token is not None:
        claims = jwt.decode(user_token_response.token, options={"verify_signature": False})
        await context.send_activity(
            MessageFactory.text(f"Signed in as {claims['name']} ({claims['upn']})")
        )
    else:
        await context.send_activity(
            MessageFactory.text('Token not available. Enter "login" to sign in.')
        )


@AGENT_APP.activity(ActivityTypes.invoke)
async def invoke(context: TurnContext, state: TurnState) -> None:
    await context.send_activity(MessageFactory.text("Invoke activity received."))


@AGENT_APP.activity(ActivityTypes.message)
async def message(context: TurnContext, state: TurnState) -> None:
    await context.send_activity(MessageFactory.text(f"You said: {context.activity.text}"))
