// Loaded before the quickstart (node --require): a server that names no host listens on
// 127.0.0.1, so the tests' agent is reachable from this machine only. The quickstart's
// startServer calls listen(port, callback).
'use strict'
const net = require('net')
const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') &&
      (args.length === 1 || typeof args[1] === 'function')) {
    args.splice(1, 0, '127.0.0.1')
  }
  return listen.apply(this, args)
}
