// The Agents SDK's Node quickstart (samples/nodejs/quickstart/src/index.ts) as node runs it once
// TypeScript has compiled it: the same calls, without the types. It reads every setting from the
// environment (botemu env agents-js prints them).
// Copyright (c) Microsoft Corporation. All rights reserved.
// Licensed under the MIT License.
const { startServer } = require('@microsoft/agents-hosting-express')
const { MemoryStorage, AgentApplication, AttachmentDownloader } = require('@microsoft/agents-hosting')
const { ActivityTypes } = require('@microsoft/agents-activity')

// Register IStorage.  For development, MemoryStorage is suitable.
// For production Agents, persisted storage should be used so
// that state survives Agent restarts, and operates correctly
// in a cluster of Agent instances.
const storage = new MemoryStorage()

const downloader = new AttachmentDownloader()

const agentApp = new AgentApplication({
  storage,
  fileDownloaders: [downloader]
})

// Display a welcome message when members are added
agentApp.onConversationUpdate('membersAdded', async (context, state) => {
  await context.sendActivity('Hello and Welcome!')
})

// Listen for ANY message to be received. MUST BE AFTER ANY OTHER MESSAGE HANDLERS
agentApp.onActivity(ActivityTypes.Message, async (context, state) => {
  // Increment count state
  let count = state.conversation.count ?? 0
  state.conversation.count = ++count

  // Echo back users message
  await context.sendActivity(`[${count}] You said: ${context.activity.text}`)
})

startServer(agentApp)
