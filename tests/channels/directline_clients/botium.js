// Botium (botium-core with botium-connector-directline3, pinned in package.json) against botemu's
// Direct Line, through its node API (BotDriver), driven by tests/channels/test_directline_clients.py.
// Each convo of convos/ is run on a container of its own; one JSON line per convo
// ({"step": "convo", "name", "passed", "error"}). Any other failure prints "FAILED: ..." and exits 1.
//
// Environment: DL_DOMAIN (botemu's .../v3/directline), DL_SECRET (the echo bot's secret),
// DL_WEBSOCKET ("false" to poll).
'use strict'

const path = require('path')
const { BotDriver } = require('botium-core')

const capabilities = {
  PROJECTNAME: 'botemu Direct Line',
  CONTAINERMODE: 'directline3',
  DIRECTLINE3_DOMAIN: process.env.DL_DOMAIN,
  DIRECTLINE3_SECRET: process.env.DL_SECRET,
  DIRECTLINE3_WEBSOCKET: process.env.DL_WEBSOCKET !== 'false',
  DIRECTLINE3_POLLINGINTERVAL: 200,
  WAITFORBOTTIMEOUT: 10000
}

async function run (file) {
  const driver = new BotDriver(capabilities)
  const compiler = driver.BuildCompiler()
  compiler.ReadScript(path.join(__dirname, 'convos'), file)
  const container = await driver.Build()
  await container.Start()
  const convo = compiler.convos[0]
  try {
    await convo.Run(container)
    console.log(JSON.stringify({ step: 'convo', name: convo.header.name, passed: true }))
  } catch (error) {
    console.log(JSON.stringify({ step: 'convo', name: convo.header.name, passed: false, error: String(error.message || error) }))
  } finally {
    await container.Stop()
    await container.Clean()
  }
}

async function main () {
  for (const file of process.argv.slice(2)) await run(file)
  console.log('done')
}

main().then(() => process.exit(0), error => {
  console.log(`FAILED: ${error && error.stack ? error.stack : JSON.stringify(error)}`)
  process.exit(1)
})
