"""The connector's REST v3 handlers, one per operation, by resource: conversations, activities,
members, attachments; and ``ROUTES``, the table of their methods and paths.

Each handler checks the caller (``handling.caller`` or ``handling.authorized``), reads the body,
delegates to ``models.ConnectorState`` and serialises the answer.
"""

from __future__ import annotations

from aiohttp import web

from emulator.connector.errors import unauthorized
from emulator.connector.handling import (
    CREATED,
    WARNINGS,
    Handler,
    authorized,
    caller,
    int_query,
    json_object,
    ok,
    resource,
)
from emulator.jsonutil import JSON

# --- conversations -----------------------------------------------------------------------------


async def create_conversation(request: web.Request) -> web.Response:
    state, bot = caller(request)
    params = await json_object(request, "ConversationParameters")
    named = params.get("bot")
    if not request.headers.get("Authorization") and isinstance(named, dict):
        if named.get("id") not in (None, bot):  # no token: only in the anonymous bot's name
            raise unauthorized(f"a request without a token cannot create a conversation for "
                               f"bot {named.get('id')!r}", reason="missing")  # fmt: skip
    created = state.create_conversation(bot, params)
    request[CREATED] = str(created["id"])
    return ok(created, status=201)


async def get_conversations(request: web.Request) -> web.Response:
    state, bot = caller(request)
    return ok(state.conversations(bot, request.query.get("continuationToken") or None))


# --- activities --------------------------------------------------------------------------------


async def send_to_conversation(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    activity = await json_object(request, "an Activity")
    warnings = request[WARNINGS] = []
    return resource(state.post_activity(conversation, activity, bot=bot, warnings_out=warnings,
                                        fresh=True))  # fmt: skip


async def send_conversation_history(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    transcript = await json_object(request, "a Transcript", big=True)
    return resource(state.history(conversation, transcript, bot=bot))


async def reply_to_activity(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    activity = await json_object(request, "an Activity")
    reply_to = request.match_info["activityId"]
    warnings = request[WARNINGS] = []
    return resource(state.post_activity(conversation, activity, reply_to=reply_to, bot=bot,
                                        warnings_out=warnings, fresh=True))  # fmt: skip


async def update_activity(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    activity = await json_object(request, "an Activity")
    activity_id = request.match_info["activityId"]
    warnings = request[WARNINGS] = []
    return resource(state.update_activity(conversation, activity_id, activity, bot=bot,
                                          warnings_out=warnings))  # fmt: skip


async def delete_activity(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    state.delete_activity(conversation, request.match_info["activityId"], bot=bot)
    return web.Response(status=200)


async def get_activity_members(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    activity_id = request.match_info["activityId"]
    members: list[JSON] = [*state.activity_members(conversation, activity_id, bot=bot)]
    return ok(members)


# --- members -----------------------------------------------------------------------------------


async def get_conversation_members(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    members: list[JSON] = [*state.members(conversation, bot=bot)]
    return ok(members)


async def get_conversation_member(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    return ok(state.member(conversation, request.match_info["memberId"], bot=bot))


async def delete_conversation_member(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    state.remove_member(conversation, request.match_info["memberId"], bot=bot)
    return web.Response(status=200)


async def get_conversation_paged_members(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    page_size = int_query(request, "pageSize")
    token = request.query.get("continuationToken") or None
    return ok(state.paged_members(conversation, page_size, token, bot=bot))


# --- attachments -------------------------------------------------------------------------------


async def upload_attachment(request: web.Request) -> web.Response:
    state, bot, conversation = authorized(request)
    data = await json_object(request, "AttachmentData", big=True)
    return resource(state.upload_attachment(conversation, data, bot=bot))


async def get_attachment_info(request: web.Request) -> web.Response:
    state, bot = caller(request)
    return ok(state.attachment_info(request.match_info["attachmentId"], bot=bot))


async def get_attachment(request: web.Request) -> web.Response:
    state, bot = caller(request)
    match = request.match_info
    data, content_type = state.attachment_view(match["attachmentId"], match["viewId"], bot=bot)
    return web.Response(body=data, headers={"Content-Type": content_type})


ROUTES: tuple[tuple[str, str, Handler], ...] = (
    ("POST", "/conversations", create_conversation),
    ("GET", "/conversations", get_conversations),
    ("POST", "/conversations/{conversationId}/activities", send_to_conversation),
    # before {activityId}: here "history" is a path segment, not an activity id
    ("POST", "/conversations/{conversationId}/activities/history", send_conversation_history),
    ("POST", "/conversations/{conversationId}/activities/{activityId}", reply_to_activity),
    ("PUT", "/conversations/{conversationId}/activities/{activityId}", update_activity),
    ("DELETE", "/conversations/{conversationId}/activities/{activityId}", delete_activity),
    (
        "GET",
        "/conversations/{conversationId}/activities/{activityId}/members",
        get_activity_members,
    ),
    ("GET", "/conversations/{conversationId}/members", get_conversation_members),
    ("GET", "/conversations/{conversationId}/members/{memberId}", get_conversation_member),
    ("DELETE", "/conversations/{conversationId}/members/{memberId}", delete_conversation_member),
    ("GET", "/conversations/{conversationId}/pagedmembers", get_conversation_paged_members),
    ("POST", "/conversations/{conversationId}/attachments", upload_attachment),
    ("GET", "/attachments/{attachmentId}", get_attachment_info),
    ("GET", "/attachments/{attachmentId}/views/{viewId}", get_attachment),
)
"""Every route of the connector's REST v3 API (field notes, Messaging and identity), under
``/v3``. Handlers are named after the operations of the SDKs' connector clients."""
