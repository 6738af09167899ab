// The page of one call (a ladder) or one conversation (a chat, and its exchanges as a ladder).

import { ApiError, getJSON, urls } from './api.js';
import { openRaw, renderChat } from './chat.js';
import { $, dateTime, duration, fill, h, iso } from './dom.js';
import { LANE_NAMES, Ladder } from './ladder.js';
import { ScenarioPanel } from './scenario.js';
import { TrackPlayer } from './track.js';

const REFRESH_MS = 250;

export class CallPage {
  constructor(root) {
    this.root = root;
    this.head = $('#call-head', root);
    this.problem = $('#call-error', root);
    this.chat = $('#chat', root);
    this.ladderBox = $('#ladder', root);
    this.timeline = $('#timeline', root);
    this.lanes = [...root.querySelectorAll('.lanes-head .lane-name')];
    this.exchanges = $('#show-exchanges', root);
    this.exportJson = $('#export-json', root);
    this.exportTranscript = $('#export-transcript', root);
    this.back = $('#back', root);
    this.scenario = new ScenarioPanel(root);
    this.track = new TrackPlayer(this.ladderBox, this.timeline);
    this.call = null;
    this.ladder = null;
    this.visible = false;
    this.timer = null;
    this.request = 0;
    this.exchanges.addEventListener('click', () => {
      this.ladderBox.hidden = !this.ladderBox.hidden;
      this.exchanges.setAttribute('aria-expanded', String(!this.ladderBox.hidden));
    });
  }

  async open(id, backHash) {
    this.visible = true;
    this.back.setAttribute('href', backHash);
    const number = ++this.request;
    this.call = null;
    this.ladder = null;
    this.problem.hidden = true;
    fill(this.head, h('p', { class: 'muted' }, 'loading…'));
    this.chat.hidden = true;
    this.ladderBox.hidden = true;
    this.exchanges.hidden = true;
    this.exportJson.hidden = true;
    this.exportTranscript.hidden = true;
    this.scenario.reset();
    let detail;
    try {
      detail = await getJSON(urls.call(id));
    } catch (error) {
      if (number !== this.request) return;
      fill(this.head);
      this.problem.textContent = error instanceof ApiError && error.status === 404
        ? `There is no call or conversation with id ${id} in this database.`
        : `Cannot show ${id}: ${error.message}`;
      this.problem.hidden = false;
      document.title = 'botemu · not found';
      return;
    }
    if (number !== this.request) return;
    this.show(detail);
  }

  close() {
    this.visible = false;
    this.request += 1;
    for (const audio of this.timeline.querySelectorAll('audio')) audio.pause();
    this.track.pause();
  }

  show(detail) {
    const { call } = detail;
    this.call = call;
    const conversation = call.kind === 'conversation';
    document.title = `botemu · ${conversation ? 'conversation' : 'call'} ${call.short_id}`;
    this.header(call);
    this.exportJson.href = urls.export(call.id, 'json');
    this.exportJson.setAttribute('download', `${call.id}.json`);
    this.exportJson.hidden = false;
    this.scenario.update(call);
    this.track.update(call);
    this.exportTranscript.hidden = !conversation;
    if (conversation) {
      this.exportTranscript.href = urls.export(call.id, 'transcript');
      this.exportTranscript.setAttribute('download', `${call.id}.transcript`);
    }
    LANE_NAMES[conversation ? 'conversation' : 'call'].forEach((name, i) => {
      this.lanes[i].textContent = name;
    });
    this.ladder = new Ladder(this.timeline, call, detail.rules);
    this.ladder.add(detail.events);
    this.chat.hidden = !conversation;
    this.exchanges.hidden = !conversation;
    this.ladderBox.hidden = conversation;
    this.exchanges.setAttribute('aria-expanded', 'false');
    this.exchanges.textContent = `HTTP exchanges (${detail.events.length} events)`;
    if (conversation) renderChat(this.chat, detail);
  }

  /** A call changed (the event stream): if it is this one, fetch what is new. */
  changed(change) {
    if (!this.visible || !this.call || change.id !== this.call.id || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refresh();
    }, REFRESH_MS);
  }

  async refresh() {
    const call = this.call;
    const number = this.request;
    const conversation = call.kind === 'conversation';
    let detail;
    try {
      detail = await getJSON(urls.call(call.id, conversation ? 0 : this.ladder.lastSeq));
    } catch {
      return; // the next change tries again
    }
    if (number !== this.request || this.call !== call) return;
    this.call = detail.call;
    this.header(detail.call);
    this.scenario.update(detail.call);
    this.track.update(detail.call);
    this.ladder.update(detail.call, detail.rules);
    this.ladder.add(detail.events);
    if (conversation) {
      renderChat(this.chat, detail, openRaw(this.chat));
      this.exchanges.textContent = `HTTP exchanges (${detail.events.length} events)`;
    }
  }

  header(call) {
    const conversation = call.kind === 'conversation';
    const verdict = call.passed === null ? null : call.passed ? 'pass' : 'fail';
    const fact = (name, value, cls) => h(
      'div',
      { class: 'fact' },
      h('dt', {}, name),
      h('dd', { class: cls ?? null }, value ?? '–'),
    );
    fill(
      this.head,
      h('h1', {},
        h('span', { class: 'badge' }, conversation ? 'chat' : 'call'), ' ',
        h('span', { class: 'call-bot' }, call.bot),
        verdict ? h('span', { class: `verdict-badge ${verdict}` }, verdict) : null),
      h('dl', { class: 'facts' },
        fact('id', h('code', {}, call.id)),
        fact(conversation ? 'user' : 'caller', call.caller),
        conversation ? null : fact('chain id', call.chain_id ? h('code', {}, call.chain_id) : null),
        fact('scenario', call.scenario),
        fact('started', h('span', { title: iso(call.started) }, dateTime(call.started))),
        fact('duration', duration(call)),
        fact('ended', call.end_reason === 'interrupted'
          ? h('span', { title: 'its writer was killed or crashed before the call ended' }, 'interrupted')
          : call.end_reason ?? 'running',
        call.end_reason === 'interrupted' ? 'interrupted' : call.end_reason ? null : 'running'),
        conversation ? null : fact('workflows', String(call.workflows)),
        fact('errors', String(call.errors), call.errors ? 'fact-errors some' : 'fact-errors'),
        fact('warnings', String(call.warnings), call.warnings ? 'fact-warnings some' : 'fact-warnings')),
    );
  }
}
