// A call's timeline as a ladder between three lanes: caller, platform and bot (for a
// conversation: user, connector and bot). Each event is a .row; messages between lanes are
// arrows, the rest sit on their lane. Retries of one message are grouped under its id. Rows are
// added as events arrive, so a running call grows in place (a playing recording keeps playing).

import { urls } from './api.js';
import { httpDetails, rawEvent } from './details.js';
import { clock, h, iso, seconds, toggler } from './dom.js';
import { findingCard } from './finding.js';

const HTTP = new Set(['http.request', 'http.response', 'http.error']);
const TO_CALLER = new Set(['prompt played', 'beep played']);
const EXTENSIONS = { 'audio/wav': '.wav', 'audio/x-ms-wma': '.wma', 'audio/mpeg': '.mp3' };

export const LANE_NAMES = {
  call: ['caller', 'platform', 'bot'],
  conversation: ['user', 'connector', 'bot'],
};

export class Ladder {
  constructor(root, call, rules) {
    this.root = root;
    this.call = call;
    this.rules = { ...rules };
    this.conversation = call.kind === 'conversation';
    this.lastSeq = 0;
    this.messages = new Map(); // message id -> { rows, group, attempts }
    this.requests = new Map(); // "message id/attempt" -> its http.request (calls)
    this.toBot = []; // requests to the bot not answered yet (conversations)
    this.previous = null; // the last event added
    this.cause = null; // the last row that was not a finding
    root.replaceChildren();
  }

  update(call, rules) {
    this.call = call;
    Object.assign(this.rules, rules);
  }

  add(events) {
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.addOne(event);
      this.lastSeq = event.seq;
    }
  }

  addOne(event) {
    const request = this.pair(event);
    const place = this.place(event, request);
    const row = this.row(event, place, request);
    const message = event.payload.message_id;
    if (!this.conversation && typeof message === 'string' && message) {
      this.addToMessage(message, event, row);
    } else {
      this.root.append(row);
    }
    if (event.kind === 'finding') {
      this.cause?.classList.add('has-finding', `has-${event.payload.severity ?? 'info'}`);
    } else {
      this.cause = row;
    }
    this.previous = event;
  }

  /** The http.request an http event belongs to (itself for a request). */
  pair(event) {
    const p = event.payload;
    if (!HTTP.has(event.kind)) return null;
    if (event.kind === 'http.request') {
      if (this.conversation) {
        if (p.url) this.toBot.push(event);
      } else {
        this.requests.set(`${p.message_id}/${p.attempt}`, event);
      }
      return event;
    }
    if (!this.conversation) return this.requests.get(`${p.message_id}/${p.attempt}`) ?? null;
    const previous = this.previous;
    if (event.kind === 'http.response' && previous?.kind === 'http.request' && previous.payload.path) {
      return previous; // the connector's answer comes right after the bot's request
    }
    return this.toBot.shift() ?? null;
  }

  /** Where a row goes: {from, to} for an arrow between lanes, {at} on one lane, {wide}. */
  place(event, request) {
    const p = event.payload;
    switch (event.kind) {
      case 'http.request':
        return p.path ? { from: 'bot', to: 'platform' } : { from: 'platform', to: 'bot' };
      case 'http.response':
        return request?.payload.path ? { from: 'platform', to: 'bot' } : { from: 'bot', to: 'platform' };
      case 'http.error':
        return { from: 'platform', to: 'bot' };
      case 'caller':
        return { from: 'caller', to: 'platform' };
      case 'platform':
        return TO_CALLER.has(p.kind) ? { from: 'platform', to: 'caller' } : { at: 'platform' };
      case 'finding':
        return { wide: true };
      default:
        return { at: 'platform' };
    }
  }

  row(event, place, request) {
    const p = event.payload;
    const classes = ['row'];
    if (place.wide) classes.push('wide');
    else if (place.at) classes.push(`at-${place.at}`);
    else classes.push('arrow-row', `from-${place.from}`, `to-${place.to}`);
    const status = typeof p.status === 'number' ? p.status : null;
    if (event.kind === 'http.error' || (status !== null && status >= 500)) classes.push('failed');
    else if (status !== null && status >= 400) classes.push('refused');
    if (event.kind === 'finding') classes.push(`sev-${p.severity ?? 'info'}`);
    if (event.kind === 'call.start' || event.kind === 'call.end') classes.push('milestone');

    const row = h('div', {
      class: classes.join(' '),
      'data-kind': event.kind,
      'data-seq': event.seq,
      'data-vtime': event.vtime ?? null,
      'data-attempt': p.attempt ?? null,
    });
    const times = h(
      'div',
      { class: 'times' },
      h('span', { class: 'vtime', title: 'virtual time' }, seconds(event.vtime)),
      h('span', { class: 'wall', title: `wall clock: ${iso(event.wall)}` }, clock(event.wall)),
    );
    if (event.kind === 'finding') {
      row.append(times, h('div', { class: 'ev' }, findingCard(p, this.rules)));
      return row;
    }
    const label = h('div', { class: 'label' }, h('span', { class: 'summary' }, summary(event)));
    if (event.kind === 'http.response') {
      label.append(h('span', { class: `code${status >= 400 ? ' bad' : ''}` }, String(p.status)));
    } else if (event.kind === 'http.error') {
      label.append(h('span', { class: 'code bad' }, String(p.error ?? 'error')));
    }
    const ev = h('div', { class: 'ev' }, place.at ? null : h('div', { class: 'arrow', 'aria-hidden': 'true' }), label);
    row.append(times, ev);

    if (HTTP.has(event.kind)) {
      const button = h('button', { type: 'button', class: 'expand', title: 'headers and body' }, 'details');
      const panel = h('div', { class: 'details', hidden: true });
      toggler(button, panel, { onFirstOpen: () => httpDetails(panel, event, { call: this.call, request }) });
      label.append(button);
      row.append(panel);
    } else {
      const raw = rawEvent(event);
      raw.button.classList.add('quiet');
      label.append(raw.button);
      raw.panel.classList.add('details');
      row.append(raw.panel);
    }
    if (event.has_blob && p.recording) ev.append(this.recording(event));
    return row;
  }

  recording(event) {
    const src = urls.blob(this.call.id, event.seq);
    const name = `${this.call.short_id}-${event.seq}${EXTENSIONS[event.payload.content_type] ?? '.bin'}`;
    return h(
      'div',
      { class: 'recording-box' },
      h('audio', { class: 'recording', controls: true, preload: 'metadata', src }),
      h('a', { class: 'download-recording', href: src, download: name }, 'download'),
    );
  }

  /** A call's event that carries a message id: on its own until the message is retried, then
   * in the message's .retry-group, one .attempt per delivery attempt. */
  addToMessage(message, event, row) {
    let entry = this.messages.get(message);
    if (!entry) {
      entry = { rows: [], events: [], group: null, attempts: new Map() };
      this.messages.set(message, entry);
    }
    const attempt = Number(event.payload.attempt ?? 1);
    if (!entry.group && (event.kind === 'retry' || attempt > 1)) {
      entry.group = this.group(message, entry);
      if (entry.rows.length) entry.rows[0].before(entry.group);
      else this.root.append(entry.group);
      entry.rows.forEach((old, i) => {
        const earlier = entry.events[i];
        this.attempt(entry, Number(earlier.payload.attempt ?? 1)).append(old);
        this.settle(entry, earlier);
      });
      entry.rows = [];
      entry.events = [];
    }
    if (entry.group) {
      this.attempt(entry, attempt).append(row);
      this.settle(entry, event);
    } else {
      entry.rows.push(row);
      entry.events.push(event);
      this.root.append(row);
    }
  }

  group(message, entry) {
    entry.title = h('span', { class: 'group-label' });
    entry.count = h('span', { class: 'group-count' });
    return h(
      'div',
      { class: 'retry-group', 'data-message-id': message },
      h('div', { class: 'group-head' }, h('span', { class: 'group-kind' }, 'retried'), entry.title, h('span', { class: 'group-id' }, `message ${message}`), entry.count),
    );
  }

  attempt(entry, number) {
    let el = entry.attempts.get(number);
    if (!el) {
      el = h(
        'div',
        { class: 'attempt', 'data-attempt': number },
        h('div', { class: 'attempt-head' },
          h('span', { class: 'attempt-no' }, `attempt ${number}`),
          h('span', { class: 'status pending' }, '…'),
          h('span', { class: 'latency' }, '')),
      );
      entry.attempts.set(number, el);
      entry.group.append(el);
      entry.count.textContent = `${entry.attempts.size} attempts`;
    }
    return el;
  }

  /** An attempt's outcome in its head: the status (or the error) and the latency. */
  settle(entry, event) {
    const p = event.payload;
    if (event.kind === 'http.request' && p.label) entry.title.textContent = p.label;
    if (event.kind !== 'http.response' && event.kind !== 'http.error') return;
    const head = this.attempt(entry, Number(p.attempt ?? 1));
    const status = head.querySelector('.status');
    const latency = head.querySelector('.latency');
    if (event.kind === 'http.response') {
      status.textContent = String(p.status);
      status.className = `status ${p.status >= 500 ? 'bad' : p.status >= 400 ? 'refused' : 'ok'}`;
      latency.textContent = p.latency_ms === undefined ? '–' : `${Math.round(p.latency_ms)} ms`;
    } else {
      status.textContent = String(p.error ?? 'error');
      status.className = 'status bad';
      latency.textContent = '–';
    }
  }
}

function summary(event) {
  const p = event.payload;
  if (typeof p.summary === 'string' && p.summary) return p.summary;
  const text = JSON.stringify(p);
  return `${event.kind} ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`;
}
