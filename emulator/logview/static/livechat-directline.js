// The web chat's conversation: a Direct Line 3.0 client of botemu itself (emulator/channels/
// directline), as Web Chat and the client library are. The live socket's `started` gives the
// token (bound to the conversation, the user and this page's origin); with it the page starts
// the conversation (POST /conversations), reads the stream (ActivitySets, with watermarks),
// posts the person's activities, reconnects from its watermark and refreshes the token.

const MAX_RECONNECTS = 5;

/** An error Direct Line answered: its HTTP status, its code and its message. */
export class DirectLineFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class DirectLineClient {
  /**
   * grant: {domain, token, expires_in} from `started`. onActivities(activities) for each
   * ActivitySet the stream brings, in order; onState("connecting" | "open" | "closed", detail).
   */
  constructor(grant, { onActivities, onState }) {
    this.domain = grant.domain;
    this.token = grant.token;
    this.lifetime = Number(grant.expires_in) || 1800;
    this.onActivities = onActivities;
    this.onState = onState;
    this.conversationId = null;
    this.watermark = null;
    this.ws = null;
    this.closed = false;
    this.reconnects = 0;
    this.refresher = null;
  }

  async request(method, path, body) {
    const response = await fetch(`${this.domain}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    if (!response.ok) {
      const error = answer?.error ?? {};
      throw new DirectLineFailure(response.status, String(error.code ?? 'Error'), String(error.message ?? `Direct Line answered ${response.status}`));
    }
    return answer ?? {};
  }

  /** Start the conversation and open its stream; its id. */
  async start() {
    const answer = await this.request('POST', '/conversations', {});
    this.conversationId = answer.conversationId;
    if (answer.token) this.token = answer.token;
    this.refresher = setInterval(() => this.refresh(), Math.max(60, this.lifetime / 2) * 1000);
    this.stream(answer.streamUrl);
    return this.conversationId;
  }

  stream(url) {
    if (this.closed || typeof url !== 'string') return;
    const parsed = new URL(url, location.href);
    if (parsed.host !== location.host) return; // botemu's own stream only
    this.onState('connecting');
    const ws = new WebSocket(parsed.href);
    this.ws = ws;
    ws.addEventListener('open', () => {
      this.reconnects = 0;
      this.onState('open');
    });
    ws.addEventListener('message', (event) => {
      if (typeof event.data !== 'string' || event.data === '') return; // the keep-alive
      let set = null;
      try {
        set = JSON.parse(event.data);
      } catch {
        return;
      }
      if (set && typeof set.watermark === 'string') this.watermark = set.watermark;
      if (Array.isArray(set?.activities)) this.onActivities(set.activities);
    });
    ws.addEventListener('close', (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      // 1000: botemu closed the conversation (Restart, reset); anything else: come back
      // from the watermark, a few times
      if (this.closed || event.code === 1000 || this.reconnects >= MAX_RECONNECTS) {
        this.onState('closed', event.reason || `code ${event.code}`);
        return;
      }
      this.reconnects += 1;
      setTimeout(() => this.reconnect(), 250 * this.reconnects);
    });
  }

  async reconnect() {
    if (this.closed) return;
    try {
      const mark = this.watermark === null ? '' : `?watermark=${encodeURIComponent(this.watermark)}`;
      const answer = await this.request('GET', `/conversations/${encodeURIComponent(this.conversationId)}${mark}`);
      if (answer.token) this.token = answer.token;
      this.stream(answer.streamUrl);
    } catch (e) {
      this.onState('closed', e.message);
    }
  }

  async refresh() {
    if (this.closed) return;
    try {
      const answer = await this.request('POST', '/tokens/refresh');
      if (answer.token) this.token = answer.token;
    } catch {
      // the next request says why, if it fails
    }
  }

  /** Post one of the person's activities; its id (a DirectLineFailure when refused). */
  async post(activity) {
    const answer = await this.request('POST', `/conversations/${encodeURIComponent(this.conversationId)}/activities`, activity);
    return answer.id;
  }

  close() {
    this.closed = true;
    clearInterval(this.refresher);
    if (this.ws) this.ws.close(1000, 'the page closed the chat');
    this.ws = null;
  }
}
