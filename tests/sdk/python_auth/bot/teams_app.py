# The same bot as a Teams bot, as the Teams authentication sample (Microsoft-Teams-Samples,
# bot-teams-authentication) writes it: TeamsActivityHandler, whose on_teams_signin_verify_state
# (both signin/verifyState and signin/tokenExchange, single sign-on) runs the dialog, so that
# OAuthPrompt takes the code or exchanges the token. The rest is app.py, unchanged.

from aiohttp import web
from botbuilder.core import TurnContext
from botbuilder.core.teams import TeamsActivityHandler

import app
from bots import AuthBot
from helpers.dialog_helper import DialogHelper


class TeamsBot(AuthBot, TeamsActivityHandler):
    async def on_teams_signin_verify_state(self, turn_context: TurnContext):
        await DialogHelper.run_dialog(
            self.dialog,
            turn_context,
            self.conversation_state.create_property("DialogState"),
        )


app.BOT = TeamsBot(app.CONVERSATION_STATE, app.USER_STATE, app.DIALOG)

if __name__ == "__main__":
    web.run_app(app.APP, host="localhost", port=app.CONFIG.PORT)
