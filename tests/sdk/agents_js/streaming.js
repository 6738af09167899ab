// The Agents SDK's Node quickstart with one more handler, as the SDK's streaming samples write
// it: "stream" is answered with a streamed reply (an informative update, two text chunks, the
// end of the stream) through context.streamingResponse. Settings come from the environment.
const { startServer } = require('@microsoft/agents-hosting-express')
const { MemoryStorage, AgentApplication } = require('@microsoft/agents-hosting')
const { ActivityTypes } = require('@microsoft/agents-activity')

const agentApp = new AgentApplication({ storage: new MemoryStorage() })

agentApp.onConversationUpdate('membersAdded', async (context, state) => {
  await context.sendActivity('Hello and Welcome!')
})

agentApp.onMessage('stream', async (context, state) => {
  context.streamingResponse.queueInformativeUpdate('Thinking...')
  context.streamingResponse.queueTextChunk('Hello, ')
  await new Promise((resolve) => setTimeout(resolve, 300))
  context.streamingResponse.queueTextChunk('world!')
  await context.streamingResponse.endStream()
})

agentApp.onActivity(ActivityTypes.Message, async (context, state) => {
  await context.sendActivity(`You said: ${context.activity.text}`)
})

startServer(agentApp)
