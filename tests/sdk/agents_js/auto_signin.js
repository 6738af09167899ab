// The Agents SDK's auto sign-in sample (microsoft/Agents, samples/nodejs/auto-signin/src/index.ts)
// as node runs it once compiled: the same AgentApplication, routes and `graph` handler (configured
// in the environment, AgentApplication__UserAuthorization__Handlers__graph__Settings__*). One
// change: `-me` says the name in the user's token instead of asking Microsoft Graph for the
// profile card (botemu answers for no Graph); the token is the one the SDK got for the handler.
// Copyright (c) Microsoft Corporation. All rights reserved.
// Licensed under the MIT License.
const { startServer } = require('@microsoft/agents-hosting-express')
const { AgentApplication, MemoryStorage, MessageFactory } = require('@microsoft/agents-hosting')
const { ActivityTypes } = require('@microsoft/agents-activity')

class AutoSignInDemo extends AgentApplication {
  constructor () {
    super({
      storage: new MemoryStorage()
    })
    this.authorization.onSignInFailure(this._singinFailure)

    // the `graph` handler is configured in the .env file, under AgentApplication__UserAuthorization__Handlers__graph__*
    this.onMessage('-me', this._profileRequest, ['graph'])
    this.onMessage('-logout', this._logout)
    this.onActivity(ActivityTypes.Message, this._message)
  }

  _logout = async (context, state) => {
    await this.authorization.signOut(context, state)
    await context.sendActivity(MessageFactory.text('user logged out'))
  }

  _singinFailure = async (context, state, authId, err) => {
    await context.sendActivity(MessageFactory.text(`Signing Failure in auth handler: ${authId} with error: ${err}`))
  }

  _message = async (context, state) => {
    await context.sendActivity(MessageFactory.text('You said.' + context.activity.text))
  }

  _profileRequest = async (context, state) => {
    const userTokenResponse = await this.authorization.getToken(context, 'graph')
    const claims = JSON.parse(Buffer.from(userTokenResponse.token.split('.')[1], 'base64url').toString())
    await context.sendActivity(MessageFactory.text(`Signed in as ${claims.name} (${claims.upn})`))
  }
}

startServer(new AutoSignInDemo())
