// The web chat (#/chat): talk to a registered messaging bot through botemu, as a channel's user
// does. The conversation is a Direct Line conversation of botemu's (livechat-directline.js):
// the page starts it with the token its live socket (livechat-socket.js) was given, reads the
// bot's activities from the stream, typing included, and posts the person's. The live socket
// carries the rest: the bots, the bot's HTTP answer to each activity, a skill manifest's
// findings, a sign-in link. Restart starts a new conversation id. Everything is in the store, so
// the conversation is also in the list (a link opens it there).

import { h, fill } from './dom.js';
import { bootstrap, LiveSocket } from './livechat-socket.js';
import { DirectLineClient } from './livechat-directline.js';
import { activityView, answerView, findingsView } from './livechat-render.js';
import { ActivityMenu } from './livechat-menu.js';

const TYPING_MS = 3000;
const MAX_SHOWN = 500; // activities kept on the page; older ones are in the log view
const CHANNELS = ['webchat', 'directline', 'emulator', 'msteams']; // emulator/channels: webchat first, the default
const MAX_WAITING = 100; // answers and findings held for an activity the stream has not brought yet

export class LiveChatPage {
  constructor(root) {
    this.root = root;
    this.boot = bootstrap();
    this.socket = null;
    this.conversationId = null;
    this.dl = null; // the conversation's Direct Line client
    this.user = null;
    this.queued = []; // activities sent before the conversation began
    this.waiting = new Map(); // activity id -> views to put under it when it shows
    this.pending = new Map(); // ref -> what it was: {kind}
    this.typingTimer = null;
    this.built = false;
  }

  open() {
    if (!this.built) this.build();
    if (this.boot && !this.socket?.isOpen) this.connect();
    this.input?.focus();
  }

  close() {} // the conversation goes on while the rest of the log view is looked at

  build() {
    this.built = true;
    if (!this.boot) {
      fill(this.root, h('p', { class: 'problem', role: 'status', id: 'livechat-unavailable' },
        'The web chat talks to bots through a running botemu\'s connector. This log view has none ',
        '(botemu logview only reads a database): open the log view of botemu serve or botemu demo.'));
      return;
    }
    this.bots = h('select', { id: 'livechat-bot', 'aria-label': 'Bot', onchange: () => this.start() });
    this.channel = h('select', { id: 'livechat-channel', 'aria-label': 'Channel', title: 'The channel id of the next conversation, and its shape', onchange: () => this.start() },
      ...CHANNELS.map((c) => h('option', { value: c }, c)));
    this.restart = h('button', { type: 'button', id: 'livechat-restart', onclick: () => this.start() }, 'Start');
    this.conversation = h('a', { id: 'livechat-conversation', class: 'mono', 'aria-label': 'Open the conversation in the log view' });
    this.state = h('span', { id: 'livechat-state', class: 'muted', role: 'status' }, 'connecting…');
    this.reconnect = h('button', { type: 'button', hidden: true, onclick: () => this.connect() }, 'Reconnect');
    this.log = h('section', { id: 'livechat-log', class: 'chat livechat-log', 'aria-label': 'Conversation', 'aria-live': 'polite' });
    this.typing = h('p', { id: 'livechat-typing', class: 'livechat-typing muted', role: 'status', hidden: true }, 'the bot is typing…');
    this.problem = h('p', { id: 'livechat-problem', class: 'problem', role: 'alert', hidden: true });
    this.input = h('input', { id: 'livechat-text', type: 'text', autocomplete: 'off', 'aria-label': 'Message', placeholder: 'Type a message' });
    this.sendButton = h('button', { type: 'submit', id: 'livechat-send' }, 'Send');
    const composer = h('form', { class: 'livechat-composer', 'aria-label': 'Message composer' }, this.input, this.sendButton);
    composer.addEventListener('submit', (event) => {
      event.preventDefault();
      this.sendMessage(this.input.value);
    });
    this.menu = new ActivityMenu((activity) => this.send(activity), (text, name) => this.manifest(text, name));
    fill(this.root,
      h('div', { class: 'livechat-bar' },
        h('label', { for: 'livechat-bot' }, 'bot'), this.bots,
        h('label', { for: 'livechat-channel' }, 'channel'), this.channel, this.restart,
        h('span', { class: 'livechat-id' }, 'conversation ', this.conversation), this.state, this.reconnect),
      this.problem, this.log, this.typing, composer, this.menu.root);
  }

  connect() {
    this.socket?.close();
    this.socket = new LiveSocket(this.boot, {
      onFrame: (frame) => this.frame(frame),
      onState: (state, detail) => this.connection(state, detail),
    });
    this.socket.connect();
  }

  connection(state, detail) {
    this.state.textContent = state === 'open' ? 'connected' : state === 'closed' ? `disconnected (${detail})` : 'connecting…';
    this.reconnect.hidden = state !== 'closed';
    this.connected = state === 'open';
    if (!this.connected) this.readied = false;
    this.enable();
  }

  // Start and Send wait for the socket's 'ready' (the bots to talk to): a click before it
  // would find no bot and do nothing.
  enable() {
    for (const control of [this.sendButton, this.restart, this.menu.sendButton]) control.disabled = !(this.connected && this.readied);
  }

  frame(frame) {
    switch (frame.op) {
      case 'ready':
        this.menu.limits = frame.limits ?? {};
        this.fillBots(frame.bots ?? []); // the person starts a conversation: Start, or a first message
        this.conversationId = null; // a new socket holds no conversation yet
        this.dl?.close();
        this.dl = null;
        this.queued = [];
        this.starting = false;
        this.restart.textContent = 'Start';
        this.readied = true;
        this.enable();
        break;
      case 'bots':
        this.fillBots(frame.bots ?? []);
        break;
      case 'started':
        this.started(frame);
        break;
      case 'answer':
        this.answer(frame);
        break;
      case 'refused':
        if (this.pending.get(frame.ref)?.kind === 'start') {
          this.starting = false;
          this.queued = [];
        }
        this.refused(frame);
        break;
      case 'signin':
        if (typeof frame.link === 'string' && frame.link.startsWith(location.origin + '/_signin?')) window.open(frame.link, '_blank', 'noopener');
        break;
      case 'manifest':
        this.pending.delete(frame.ref);
        this.menu.setManifest(frame);
        break;
      case 'findings':
        this.attach(frame.activity_id, findingsView(frame.findings ?? []));
        break;
      default:
        break;
    }
  }

  fillBots(bots) {
    const chosen = this.bots.value;
    fill(this.bots, bots.map((b) => h('option', { value: b.app_id }, `${b.name}${b.name === b.app_id ? '' : ` (${b.app_id})`} · ${b.endpoint}`)));
    if (bots.some((b) => b.app_id === chosen)) this.bots.value = chosen;
    if (bots.length === 0) this.showProblem('No messaging bot is registered: botemu serve --bot-endpoint URL (or botemu chat --bot URL once).');
  }

  start() {
    if (!this.bots.value) return false;
    const ref = this.socket?.send({ op: 'start', app_id: this.bots.value, channel: this.channel.value });
    if (ref) this.pending.set(ref, { kind: 'start' });
    if (ref) this.starting = true;
    return Boolean(ref);
  }

  started(frame) {
    this.pending.delete(frame.ref);
    this.dl?.close();
    this.conversationId = frame.conversation_id;
    this.user = frame.user ?? { id: 'user' };
    this.conversation.textContent = frame.conversation_id;
    this.conversation.setAttribute('href', `#/calls/${encodeURIComponent(frame.conversation_id)}`);
    this.root.dataset.conversation = frame.conversation_id;
    this.restart.textContent = 'Restart';
    this.log.replaceChildren();
    this.waiting.clear();
    this.problem.hidden = true;
    this.stopTyping();
    const dl = new DirectLineClient(frame.directline ?? {}, {
      onActivities: (activities) => {
        if (this.dl === dl) for (const a of activities) this.activity(a);
      },
      onState: (state, detail) => {
        if (this.dl === dl && state === 'closed') this.showProblem(`The conversation's Direct Line stream closed (${detail}): Restart`);
      },
    });
    this.dl = dl;
    dl.start().then(() => {
      this.starting = false;
      const queued = this.queued.splice(0);
      for (const activity of queued) this.post(activity);
    }, (e) => {
      this.starting = false;
      this.queued = [];
      if (this.dl === dl) this.showProblem(`The conversation did not start: ${e.message}`);
    });
  }

  sendMessage(value) {
    const text = value.trim();
    if (!text) return;
    if (this.send({ type: 'message', text })) this.input.value = '';
  }

  /** Send an activity the page made; false when there is no socket or it is too big. */
  send(activity) {
    const limit = this.menu.limits?.text ?? 16384;
    if (typeof activity.text === 'string' && activity.text.length > limit) {
      this.showProblem(`The text is ${activity.text.length} characters: the web chat sends at most ${limit}.`);
      return false;
    }
    if (!this.conversationId && !this.starting && !this.start()) return false; // the first message starts one
    this.problem.hidden = true;
    if (this.starting || !this.dl?.conversationId) {
      this.queued.push(activity); // posted once the conversation has begun
      return true;
    }
    this.post(activity);
    return true;
  }

  /** Post an activity through Direct Line; a refusal shows (a bot's failure shows as its answer). */
  post(activity) {
    const dl = this.dl;
    dl.post({ ...activity, from: this.user }).catch((e) => {
      if (this.dl === dl && e.status !== 502 && e.status !== 504) this.showProblem(`Not sent: ${e.message}`);
    });
  }

  /** One activity of the stream, the person's own included. */
  activity(a) {
    if (!a || typeof a !== 'object') return;
    const side = a.from?.role === 'user' ? 'user' : 'bot';
    if (side === 'bot' && a.type === 'typing') {
      this.showTyping();
      return;
    }
    if (side === 'bot') this.stopTyping();
    if (a.type === 'messageUpdate' || a.type === 'messageDelete' || this.shown(a.id)) {
      this.changed(a); // Direct Line brings an update as the message again, with its id
      return;
    }
    const view = activityView(a, side, (action) => this.act(action));
    this.log.append(view);
    for (const held of this.waiting.get(a.id) ?? []) {
      view.append(held);
      if (held.dataset.failed) view.classList.add('refused');
    }
    this.waiting.delete(a.id);
    while (this.log.childElementCount > MAX_SHOWN) this.log.firstElementChild.remove();
    this.log.lastElementChild.scrollIntoView({ block: 'nearest' });
  }

  shown(activityId) {
    return typeof activityId === 'string' && [...this.log.querySelectorAll('[data-id]')].some((el) => el.dataset.id === activityId);
  }

  changed(a) {
    const old = [...this.log.querySelectorAll('[data-id]')].find((el) => el.dataset.id === a.id);
    if (!old) return;
    if (a.type === 'messageDelete') {
      old.classList.add('deleted');
      old.querySelector('.text')?.replaceChildren('(deleted by the bot)');
      return;
    }
    old.replaceWith(activityView({ ...a, type: 'message' }, old.dataset.from, (action) => this.act(action)));
  }

  /** A suggested action or card button: imBack/postBack send their value as text. */
  act(action) {
    const value = action?.value;
    if (action?.type === 'signin') {
      this.socket?.send({ op: 'signin', connection: action.connectionName ?? '' });
      return;
    }
    if (action?.type === 'messageBack') {
      this.send({ type: 'message', text: String(action.text ?? action.displayText ?? ''), ...(value === undefined ? {} : { value }) });
    } else {
      this.send({ type: 'message', text: typeof value === 'string' ? value : JSON.stringify(value ?? action?.title ?? '') });
    }
  }

  /** The bot's HTTP answer to an activity of the person's: shown when it failed or answers an invoke. */
  answer(frame) {
    const failed = frame.status === null || frame.status >= 300;
    if (failed || frame.type === 'invoke') this.attach(frame.activity_id, answerView(frame), failed);
    if (frame.findings?.length) this.attach(frame.activity_id, findingsView(frame.findings));
  }

  /**
   * Put view under the activity activity_id; held until the stream brings it when it has not
   * yet (the live socket may be faster than the stream).
   */
  attach(activityId, view, failed = false) {
    const target = [...this.log.querySelectorAll('[data-id]')].find((el) => el.dataset.id === activityId);
    if (failed) target?.classList.add('refused');
    if (failed) view.dataset.failed = 'true';
    if (!target && typeof activityId === 'string' && this.waiting.size < MAX_WAITING) {
      this.waiting.set(activityId, [...(this.waiting.get(activityId) ?? []), view]);
      return;
    }
    (target ?? this.log).append(view);
    view.scrollIntoView({ block: 'nearest' });
  }

  /** Load a skill manifest (text null: forget it). */
  manifest(text, name) {
    const frame = { op: 'manifest', text, name };
    const limit = this.menu.limits?.frame ?? 262144;
    if (text !== null && JSON.stringify(frame).length > limit - 100) {
      this.showProblem(`${name} is too large to send: at most about ${Math.floor(limit / 1024)} KiB`);
      return;
    }
    const ref = this.socket?.send(frame);
    if (ref) this.pending.set(ref, { kind: 'manifest' });
  }

  refused(frame) {
    this.pending.delete(frame.ref);
    this.showProblem(`Not sent: ${frame.error}`);
  }

  showProblem(message) {
    this.problem.textContent = message;
    this.problem.hidden = false;
  }

  showTyping() {
    this.typing.hidden = false;
    clearTimeout(this.typingTimer);
    this.typingTimer = setTimeout(() => this.stopTyping(), TYPING_MS);
  }

  stopTyping() {
    clearTimeout(this.typingTimer);
    if (this.typing) this.typing.hidden = true;
  }
}
