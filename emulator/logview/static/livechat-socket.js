// The web chat's transport: one WebSocket to the running botemu (emulator/service/livechat.py),
// opened with the token botemu put in this page's <meta> tags (emulator/logview/bootstrap.py).
// The token travels as a WebSocket subprotocol, never in the address.

export const PROTOCOL = 'botemu.live.v1';
const SECRET = 'botemu.secret.';

/**
 * The bootstrap values ({token, path}), or null when this log view has no web chat: the page
 * served by `botemu logview` (no connector) carries none.
 */
export function bootstrap(doc = document) {
  const token = doc.querySelector('meta[name="botemu-live-token"]')?.getAttribute('content');
  const path = doc.querySelector('meta[name="botemu-live-chat"]')?.getAttribute('content');
  if (!token || !path || !path.startsWith('/') || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
  return { token, path };
}

/**
 * One socket. onFrame(frame) for every frame botemu sends, in order; onState("connecting" |
 * "open" | "closed", detail). send(frame) adds a fresh `ref` and returns it (null when closed).
 */
export class LiveSocket {
  constructor({ token, path }, { onFrame, onState, onBinary }) {
    this.token = token;
    this.path = path;
    this.onFrame = onFrame;
    this.onState = onState;
    this.onBinary = onBinary; // (ArrayBuffer): the phone's prompt audio
    this.ws = null;
    this.refs = 0;
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  connect() {
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}${this.path}`, [PROTOCOL, SECRET + this.token]);
    this.ws = ws;
    ws.binaryType = 'arraybuffer';
    this.onState('connecting');
    ws.addEventListener('open', () => this.onState('open'));
    ws.addEventListener('message', (event) => {
      if (event.data instanceof ArrayBuffer) {
        this.onBinary?.(event.data);
        return;
      }
      let frame = null;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return; // botemu's text frames are JSON
      }
      if (frame && typeof frame === 'object') this.onFrame(frame);
    });
    ws.addEventListener('close', (event) => {
      if (this.ws === ws) this.ws = null;
      this.onState('closed', event.reason || `code ${event.code}`);
    });
  }

  send(frame) {
    if (!this.isOpen) return null;
    this.refs += 1;
    const ref = `r${this.refs}`;
    this.ws.send(JSON.stringify({ ...frame, ref }));
    return ref;
  }

  /** Send a binary frame (the phone's microphone); false when closed. */
  sendBytes(buffer) {
    if (!this.isOpen) return false;
    this.ws.send(buffer);
    return true;
  }

  close() {
    if (this.ws) this.ws.close(1000, 'the page closed the chat');
    this.ws = null;
  }
}
