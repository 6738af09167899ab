// What a browser gives the Direct Line client library and node does not, set up as the library's
// README says for node: a global WebSocket (the ws package) and a global XMLHttpRequest (xhr2).
//
// xhr2 sends strings and buffers only, and speaks http(s) only; the library's upload reads each
// attachment's contentUrl (a blob: or data: URL in a browser) and posts a FormData. So the
// XMLHttpRequest given here is xhr2 that also reads a data: URL (with node's fetch) and sends a
// FormData (encoded as multipart/form-data by node's own Response), as a browser's does.
'use strict'

const WebSocket = require('ws')
const XHR2 = require('xhr2')

class BrowserLikeXHR extends XHR2 {
  open (method, url, ...rest) {
    this._dataUrl = /^data:/i.test(String(url)) ? String(url) : null
    return super.open(method, this._dataUrl ? 'http://127.0.0.1/' : url, ...rest)
  }

  send (body) {
    if (this._dataUrl) {
      fetch(this._dataUrl)
        .then(response => response.arrayBuffer())
        .then(buffer => this._answer(buffer), error => this._fail(error))
      return
    }
    if (typeof FormData !== 'undefined' && body instanceof FormData) {
      const encoded = new Response(body)
      encoded.arrayBuffer().then(buffer => {
        this.setRequestHeader('Content-Type', encoded.headers.get('content-type'))
        super.send(Buffer.from(buffer))
      }, error => this._fail(error))
      return
    }
    return super.send(body)
  }

  _answer (buffer) {
    this.status = 200
    this.statusText = 'OK'
    this.response = this.responseType === 'arraybuffer' ? buffer : Buffer.from(buffer).toString()
    this._setReadyState(XHR2.DONE)
    this._dispatchProgress('load')
    this._dispatchProgress('loadend')
  }

  _fail (error) {
    this.status = 0
    this._setReadyState(XHR2.DONE)
    if (this.onerror) this.onerror(error)
  }
}

global.WebSocket = WebSocket
global.XMLHttpRequest = BrowserLikeXHR

module.exports = { WebSocket, XMLHttpRequest: BrowserLikeXHR }
