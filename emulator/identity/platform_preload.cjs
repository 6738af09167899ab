'use strict';
// botemu's node preload (docs/sdk.md, "The platform's hosts"): given with
//   NODE_OPTIONS=--require <this file>   BOTEMU_PLATFORM_ADDRESS=127.0.0.1:<port>
// it sends node's TLS connections to the platform's identity hosts and its user token service to
// botemu's listener, which answers them with botemu's keys, tokens and token service under a
// certificate from botemu's CA (trusted through NODE_EXTRA_CA_CERTS). The host is still named by SNI and checked as usual. Every other
// connection is left alone. Without BOTEMU_PLATFORM_ADDRESS it does nothing.
const tls = require('tls');

const HOSTS = new Set([  // PLATFORM_HOSTS of emulator/identity/wellknown.py
  'login.botframework.com', 'login.microsoftonline.com', 'login.windows.net', 'sts.windows.net',
  'api.botframework.com',
]);
const found = /^\[?([^\]]+)\]?:(\d{1,5})$/.exec(process.env.BOTEMU_PLATFORM_ADDRESS || '');

function normalize(args) {
  // tls.connect(options[, callback]) or tls.connect(port[, host][, options][, callback])
  const callback = args.find((a) => typeof a === 'function');
  if (args[0] !== null && typeof args[0] === 'object') {
    return [Object.assign({}, args[0]), callback];
  }
  const options = Object.assign({}, args.find((a, i) => i > 0 && a && typeof a === 'object'));
  options.port = args[0];
  if (typeof args[1] === 'string') options.host = args[1];
  return [options, callback];
}

if (found && !tls.connect.botemuPlatform) {
  const address = found[1];
  const port = Number(found[2]);
  const connect = tls.connect;
  const patched = function connectToPlatform(...args) {
    const [options, callback] = normalize(args);
    const name = String(options.servername || options.host || '').toLowerCase().replace(/\.$/, '');
    if (!HOSTS.has(name) || options.socket) return connect.apply(this, args);
    const redirected = Object.assign(options, { host: address, port, servername: name });
    delete redirected.path;
    return callback ? connect.call(this, redirected, callback) : connect.call(this, redirected);
  };
  patched.botemuPlatform = true;
  tls.connect = patched;
}
