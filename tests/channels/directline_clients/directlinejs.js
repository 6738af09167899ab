// botframework-directlinejs (pinned in package.json) against botemu's Direct Line, driven by
// tests/channels/test_directline_clients.py. Each step prints one JSON line ({"step": ...}); the
// test judges them. Any failure prints "FAILED: ..." and exits 1.
//
// Environment: DL_DOMAIN (botemu's .../v3/directline), DL_SECRET (the echo bot's secret),
// DL_TOKEN (a token the test generated with the secret for user DL_USER).
'use strict'

const { WebSocket } = require('./node_env')
const { DirectLine, ConnectionStatus } = require('botframework-directlinejs')

const domain = process.env.DL_DOMAIN
const WAIT_MS = 10000

/** The library keeps its socket to itself: this WebSocket remembers each one it opens. */
const sockets = []
class TrackedWebSocket extends WebSocket {
  constructor (...args) {
    super(...args)
    sockets.push(this)
    // DL_DEBUG=1: each frame's watermark and activities, on lines of their own
    if (process.env.DL_DEBUG) this.on('message', data => { const d = String(data) ? JSON.parse(String(data)) : { activities: [] }; console.log('FRAME', d.watermark, JSON.stringify(d.activities.map(a => [a.type, (a.text || '').slice(0, 8), a.from.id.slice(0, 6)]))) })
  }
}

function report (step, fields) {
  console.log(JSON.stringify({ step, ...fields }))
}

/** Every activity a DirectLine delivers, kept in order, and a bounded wait for one. */
function listen (directLine) {
  const seen = []
  const waiters = []
  const subscription = directLine.activity$.subscribe(activity => {
    seen.push(activity)
    for (const waiter of [...waiters]) waiter()
  }, error => { seen.error = error })
  const until = (what, predicate) => new Promise((resolve, reject) => {
    const check = () => {
      const found = seen.find(predicate)
      if (found) {
        clearTimeout(timer)
        waiters.splice(waiters.indexOf(check), 1)
        resolve(found)
      }
    }
    const timer = setTimeout(() => {
      waiters.splice(waiters.indexOf(check), 1)
      reject(new Error(`no ${what} within ${WAIT_MS} ms; saw ${JSON.stringify(seen.map(a => [a.type, a.text]))}`))
    }, WAIT_MS)
    waiters.push(check)
    check()
  })
  return { seen, until, stop: () => subscription.unsubscribe() }
}

function once (observable) {
  return new Promise((resolve, reject) => {
    const subscription = observable.subscribe(value => { resolve(value); setImmediate(() => subscription.unsubscribe()) }, reject)
  })
}

const fromBot = user => a => a.type === 'message' && a.from && a.from.id !== user
const text = (user, words) => a => fromBot(user)(a) && a.text === words

async function withSecret () {
  const user = 'secret-user'
  const directLine = new DirectLine({ secret: process.env.DL_SECRET, domain, webSocket: true, WebSocket: TrackedWebSocket })
  const heard = listen(directLine)
  const id = await once(directLine.postActivity({ type: 'message', from: { id: user }, text: 'hello' }))
  await heard.until('echo', text(user, 'echo: hello'))
  // the user joins with their first message (a secret's conversation starts with no user); the
  // library emits each ActivitySet's activities one scheduler tick apart, so a later set's can
  // come first: both are waited for
  await heard.until('welcome', a => fromBot(user)(a) && /^Welcome/.test(a.text))
  report('secret', {
    id,
    conversationId: directLine.conversationId,
    texts: heard.seen.filter(fromBot(user)).map(a => a.text),
    own: heard.seen.filter(a => a.from && a.from.id === user).map(a => a.text)
  })
  heard.stop()
  directLine.end()
}

async function withToken (user) {
  // random: 0 makes the library's wait before it reconnects a dropped socket its shortest (3 s)
  const directLine = new DirectLine({ token: process.env.DL_TOKEN, domain, WebSocket: TrackedWebSocket, random: () => 0 })
  const heard = listen(directLine)
  const welcome = await heard.until('welcome', fromBot(user))
  await once(directLine.postActivity({ type: 'message', from: { id: user }, text: 'over the socket' }))
  await heard.until('echo', text(user, 'echo: over the socket'))
  report('token', { welcome: welcome.text, conversationId: directLine.conversationId, watermark: directLine.watermark })

  // the socket drops: the library asks for a new streamUrl from its watermark and goes on
  const before = heard.seen.length
  const opened = sockets.length
  sockets[opened - 1].close()
  await new Promise(resolve => setTimeout(resolve, 200))
  await once(directLine.postActivity({ type: 'message', from: { id: user }, text: 'after a drop' }))
  await heard.until('echo after the drop', text(user, 'echo: after a drop'))
  report('dropped', { again: heard.seen.slice(before).filter(fromBot(user)).map(a => a.text), sockets: sockets.length - opened })

  // reconnect(conversation) with what GET /conversations/{id} gives
  const answer = await fetch(`${domain}/conversations/${directLine.conversationId}?watermark=${directLine.watermark}`,
    { headers: { Authorization: `Bearer ${directLine.token}` } })
  const conversation = await answer.json()
  directLine.reconnect(conversation)
  await once(directLine.postActivity({ type: 'message', from: { id: user }, text: 'reconnected' }))
  await heard.until('echo after reconnect', text(user, 'echo: reconnected'))
  report('reconnect', { status: answer.status, fields: Object.keys(conversation).sort(), same: conversation.conversationId === directLine.conversationId })

  // the refresh its token loop makes every 15 minutes, made now
  const refreshed = await once(directLine.refreshToken())
  const changed = refreshed !== directLine.token
  directLine.token = refreshed
  await once(directLine.postActivity({ type: 'message', from: { id: user }, text: 'refreshed' }))
  await heard.until('echo after refresh', text(user, 'echo: refreshed'))
  report('refresh', { changed, status: ConnectionStatus[directLine.connectionStatus$.getValue()] })

  // an upload: the attachment's bytes read from its data: URL and posted to /upload
  const content = 'botemu upload test\n'
  const id = await once(directLine.postActivity({
    type: 'message',
    from: { id: user },
    text: 'a file',
    attachments: [{ contentType: 'text/plain', contentUrl: `data:text/plain;base64,${Buffer.from(content).toString('base64')}`, name: 'notes.txt' }]
  }))
  const mine = await heard.until('the upload', a => a.id === id)
  await heard.until('echo of the upload', text(user, 'echo: a file'))
  const attachments = mine.attachments || []
  const served = attachments.length ? await (await fetch(attachments[0].contentUrl)).text() : null
  report('upload', { attachments: attachments.map(a => ({ contentType: a.contentType, name: a.name })), same: served === content })

  heard.stop()
  directLine.end()
  return { conversationId: directLine.conversationId, watermark: directLine.watermark, token: directLine.token }
}

async function byPolling (user, resumed) {
  // resume the same conversation from its watermark, polling GET activities
  const directLine = new DirectLine({
    token: resumed.token, domain, webSocket: false, pollingInterval: 200,
    conversationId: resumed.conversationId, watermark: resumed.watermark
  })
  const heard = listen(directLine)
  await once(directLine.postActivity({ type: 'message', from: { id: user }, text: 'by polling' }))
  await heard.until('echo by polling', text(user, 'echo: by polling'))
  report('polling', {
    conversationId: directLine.conversationId,
    texts: heard.seen.map(a => a.text),
    watermark: directLine.watermark
  })
  heard.stop()
  directLine.end()
}

async function main () {
  await withSecret()
  const user = process.env.DL_USER
  const resumed = await withToken(user)
  await byPolling(user, resumed)
  console.log('done')
}

main().then(() => process.exit(0), error => {
  console.log(`FAILED: ${error && error.stack ? error.stack : JSON.stringify(error)}`)
  process.exit(1)
})
